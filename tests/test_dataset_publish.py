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
        third = _publish(changed, env)
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


def test_dry_run_offline_consults_no_remote(build: Path) -> None:
    from typer.testing import CliRunner

    from mirage_bench.cli import app

    result = CliRunner().invoke(app, ["publish", str(build), "--repo-id", REPO, "--dry-run"])
    assert result.exit_code == 0, result.output
    assert "remote not consulted" in result.output
