"""Publishing: real huggingface_hub client code against a local stand-in for the Hub (HF_ENDPOINT)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dataset_builder.build import PRIVATE_DIR, build_dataset

FIX = Path(__file__).parent / "fixtures" / "dataset"
sys.path.insert(0, str(FIX))
from fake_hub import FakeHub  # noqa: E402

#: The dataset area's commands alone (the full CLI would import every area: slower, same code path).
CLI = [
    sys.executable,
    "-c",
    "import sys, typer; from mirage_bench.commands.dataset import register; "
    "app = typer.Typer(); register(app); app(sys.argv[1:])",
]
REPO = "fixture-org/miragebench"


@pytest.fixture(scope="module")
def build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("pub") / "repo"
    report = build_dataset(out, runs=[FIX / "fixture_run_a"])
    assert report.valid, report.problems
    return out


def _env(hub: FakeHub) -> dict[str, str]:
    offline = {"HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE"}
    env = {k: v for k, v in os.environ.items() if k not in offline}  # online for these calls only
    env.update(
        HF_ENDPOINT=hub.url,
        HF_HUB_DISABLE_XET="1",
        HF_TOKEN="hf_fixture_token_not_real",
        HF_HUB_DISABLE_TELEMETRY="1",
        HF_HUB_DISABLE_PROGRESS_BARS="1",
    )
    return env


def _publish(folder: Path, env: dict[str, str], *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, "publish", str(folder), "--repo-id", REPO, *extra],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        cwd=Path(__file__).parent.parent,
    )


def test_publish_creates_repo_in_one_commit_then_reports_changes(build: Path, tmp_path: Path) -> None:
    with FakeHub() as hub:
        env = _env(hub)
        dry = _publish(build, env, "--dry-run")
        assert dry.returncode == 0, dry.stderr
        assert "dry run: nothing uploaded" in dry.stdout and "added     README.md" in dry.stdout
        assert "does not exist yet" in dry.stdout  # the remote was consulted and said so
        assert REPO not in hub.repos and not hub.commits

        first = _publish(build, env)
        assert first.returncode == 0, first.stderr
        assert len(hub.commits) == 1
        remote = hub.repos[REPO]
        local = {
            p.relative_to(build).as_posix(): p.read_bytes()
            for p in build.rglob("*")
            if p.is_file() and PRIVATE_DIR not in p.parts
        }
        assert {k: v for k, v in remote.items() if k != ".gitattributes"} == local
        assert any(path.endswith(".parquet") for path in hub.lfs_paths[REPO])  # parquet went through LFS
        assert not hub.unknown

        again = _publish(build, env)
        assert again.returncode == 0 and "already up to date" in again.stdout
        assert len(hub.commits) == 1

        changed = tmp_path / "changed"
        build_dataset(changed, runs=[FIX / "fixture_run_a", FIX / "fixture_run_smoke"])
        refused = _publish(changed, env)
        assert refused.returncode == 1 and len(hub.commits) == 1
        (line,) = refused.stderr.strip().splitlines()  # one line, no traceback
        assert "smoke-test rows" in line and "--allow-smoke" in line
        dry = _publish(changed, env, "--dry-run", "--allow-smoke")
        assert "modified  README.md" in dry.stdout and "unchanged" in dry.stdout  # compared with the remote
        third = _publish(changed, env, "--allow-smoke")
        assert third.returncode == 0, third.stderr
        assert "added     data/responses" not in third.stdout
        assert "modified  README.md" in third.stdout
        assert "modified  data/judged_claims/train-00000-of-00001.parquet" in third.stdout
        assert "unchanged" in third.stdout and len(hub.commits) == 2


def test_publish_refuses_invalid_build_and_rejected_card(build: Path, tmp_path: Path) -> None:
    import shutil

    broken = tmp_path / "broken"
    shutil.copytree(build, broken)
    report_path = broken / PRIVATE_DIR / "build_report.json"
    report = json.loads(report_path.read_text())
    report.update(valid=False, problems=["fixture: pretend validation failed"])
    report_path.write_text(json.dumps(report))
    tampered = tmp_path / "tampered"
    shutil.copytree(build, tampered)
    next((tampered / "data" / "tasks").glob("*.parquet")).unlink()
    from typer.testing import CliRunner

    from mirage_bench.cli import app

    refused = CliRunner().invoke(app, ["publish", str(broken), "--repo-id", REPO])
    assert refused.exit_code == 1 and "validation failed" in refused.output
    refused = CliRunner().invoke(app, ["publish", str(tampered), "--repo-id", REPO])
    assert refused.exit_code == 1 and "no longer validates" in refused.output
    with FakeHub() as hub:
        env = _env(hub)
        hub.reject_yaml = True
        rejected = _publish(build, env)
        assert rejected.returncode == 1 and "rejected the dataset card" in rejected.stderr
        assert not hub.commits and REPO not in hub.repos
        hub.reject_yaml = False
        hub.fail_commits = 500
        failed = _publish(build, env)
        assert failed.returncode == 1 and not hub.commits
        (line,) = failed.stderr.strip().splitlines()  # the cause in one line, not a traceback
        assert line.startswith(f"error: publishing {REPO} failed:") and "500" in line


def test_dry_run_offline_consults_no_remote(build: Path) -> None:
    from typer.testing import CliRunner

    from mirage_bench.cli import app

    result = CliRunner().invoke(app, ["publish", str(build), "--repo-id", REPO, "--dry-run"])
    assert result.exit_code == 0, result.output
    assert "remote not consulted" in result.output


def test_dry_run_says_when_the_remote_cannot_be_reached(build: Path) -> None:
    """A dry run against a Hub that does not answer says so instead of listing every file as new."""
    import socket

    with socket.socket() as probe:  # a free port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with FakeHub() as hub:
        env = _env(hub)
    env["HF_ENDPOINT"] = f"http://127.0.0.1:{port}"
    result = _publish(build, env, "--dry-run", "--json")
    assert result.returncode == 0, result.stderr
    (plan,) = json.loads(result.stdout)["repos"]
    assert plan["remote_consulted"] is False and plan["remote_error"]
    text = _publish(build, env, "--dry-run")
    assert "remote NOT consulted" in text.stdout


@pytest.fixture(scope="module")
def build_with_pairs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A build with preference pairs from the de-identifier's SYNTHETIC fixture records (``--ner none``)."""
    import random

    root = tmp_path_factory.mktemp("pairs")
    corpus = FIX / "planted_pii_corpus.jsonl"
    raw = root / "raw"
    raw.mkdir()
    records = [json.loads(line)["record"] for line in corpus.read_text().splitlines() if line.strip()]
    (raw / "study.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    out = root / "repo"
    report = build_dataset(
        out, runs=[FIX / "fixture_run_a"], preferences=raw, repo_hint=REPO, rng=random.Random(5)
    )
    assert report.valid, report.problems
    assert report.synthetic == {"preference_pairs": len(records)}
    return out


def test_preference_pairs_go_to_their_own_gated_repo(build_with_pairs: Path) -> None:
    from dataset_builder.build import GATED_DIR
    from mirage_bench.repo_ids import sensitive_repo_id

    gated = sensitive_repo_id(REPO)
    public_card = (build_with_pairs / "README.md").read_text(encoding="utf-8")
    assert "config_name: preference_pairs" not in public_card and gated in public_card
    gated_card = (build_with_pairs / GATED_DIR / "README.md").read_text(encoding="utf-8")
    assert "extra_gated_prompt" in gated_card and "default: true" in gated_card
    assert "judged_claims" not in gated_card  # the gated card speaks of the pairs only
    with FakeHub() as hub:
        env = _env(hub)
        refused = _publish(build_with_pairs, env)
        assert refused.returncode == 1 and "synthetic test-fixture records" in refused.stderr
        assert not hub.repos
        hub.ignore_gating = True  # a Hub that accepts the setting but does not gate
        liar = _publish(build_with_pairs, env, "--allow-smoke")
        assert liar.returncode == 1 and "is not gated with manual approval" in liar.stderr
        assert not hub.commits  # nothing uploaded: gating is checked before the first upload
        hub.ignore_gating = False
        result = _publish(build_with_pairs, env, "--allow-smoke", "--json")
        assert result.returncode == 0, result.stderr
        plans = {p["repo_id"]: p for p in json.loads(result.stdout)["repos"]}
        assert plans[gated]["gated"] is True and plans[gated]["remote_gated"] == "manual"
        assert hub.settings[gated]["gated"] == "manual"
        assert hub.settings[REPO]["gated"] is False
        assert any(p.startswith("data/preference_pairs/") for p in hub.repos[gated])
        assert not any(p.startswith("data/preference_pairs/") for p in hub.repos[REPO])
        assert not any(p.startswith(GATED_DIR + "/") or p.startswith(PRIVATE_DIR) for p in hub.repos[REPO])
        settings = [i for i, r in enumerate(hub.requests) if r == ("PUT", f"/api/datasets/{gated}/settings")]
        commit = f"/api/datasets/{gated}/commit"
        first_commit = next(i for i, r in enumerate(hub.requests) if r[1].startswith(commit))
        assert settings and settings[0] < first_commit  # gated before the first upload
        assert not hub.unknown


def test_fixture_fingerprints_cover_every_shipped_fixture_record() -> None:
    """The package data lists every synthetic fixture study record (so a wheel recognises them too)."""
    from dataset_builder.build import fixture_fingerprints, record_fingerprint
    from dataset_builder.pii_eval import load_planted_corpus

    records = [r for p in sorted(FIX.glob("planted_pii_*.jsonl")) for r in load_planted_corpus(p).records]
    assert records
    expected = {record_fingerprint(r) for r in records}
    assert fixture_fingerprints() == expected, (
        "regenerate mirage_bench/data/fixture_record_fingerprints.txt from the planted-PII corpora"
    )
