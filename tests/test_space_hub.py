"""The Hub-backed store against the local Hub test server, with the real huggingface_hub client.

Requests and results live in two dataset repos (``MIRAGE_REQUESTS_REPO``, ``MIRAGE_RESULTS_REPO``);
each state change is committed; a restart with the local disk wiped shows the same queue and
board, and a RUNNING submission resumes where its last commit left it.
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser import helpers
from tests.fixtures.dataset.fake_hub import FakeHub
from tests.helpers_runs import CLI

ROOT = Path(__file__).resolve().parent.parent

pytestmark = [pytest.mark.timeout(300)]

REQUESTS = "fixture-org/lb-requests"
RESULTS = "fixture-org/lb-results"
SLOW_JUDGE = "scripted:simulate,latency=0.05"
SECRETS = {
    "HF_TOKEN": "hf_fixtureTokenNotReal123",
    "OPENAI_API_KEY": "sk-space-own-secret-0123456789",
    "ANTHROPIC_API_KEY": "sk-ant-fixture-secret-987654321",
}


@pytest.fixture
def hub(tmp_path: Path) -> Iterator[tuple[FakeHub, dict[str, str]]]:
    with FakeHub() as fake:
        yield fake, helpers.hub_env(fake.url, tmp_path / "hf-home", REQUESTS, RESULTS, **SECRETS)


def _cli(env: dict[str, str], *args: str, timeout: float = 240) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*CLI, *args],
        env=env, capture_output=True, text=True, timeout=timeout, cwd=ROOT,
    )


def _queue(env: dict[str, str], store: Path) -> dict[str, dict[str, Any]]:
    proc = _cli(env, "queue", "--store", str(store), "--json")
    assert proc.returncode == 0, proc.stderr[-2000:]
    return {r["model_name"]: r for r in json.loads(proc.stdout)}


def _hub_lines(fake: FakeHub, sid: str) -> list[dict]:
    data = fake.repos.get(RESULTS, {}).get(f"results/{sid}/judgments.jsonl", b"")
    out = []
    for line in data.decode().splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            continue
    return out


def test_wiped_restart_keeps_queue_and_board_and_resumes_running(
    tmp_path: Path, hub: tuple[FakeHub, dict[str, str]]
) -> None:
    fake, env = hub
    responses = helpers.responses_file(tmp_path / "responses.jsonl")
    disk = tmp_path / "disk"  # the Space's local disk
    ids = {}
    for name in ("fx/first", "fx/second"):
        proc = _cli(env, "submit", str(responses), "--store", str(disk), "--model-name", name,
                    "--family", "Fixture", "--contact", "a@x.org")
        assert proc.returncode == 0, proc.stderr[-2000:]
        ids[name] = proc.stdout.strip()
    # each submission was committed before `submit` returned: the queue is on the Hub
    assert {f"requests/{s}.json" for s in ids.values()} <= set(fake.repos[REQUESTS])
    assert {f"uploads/{s}.jsonl" for s in ids.values()} <= set(fake.repos[REQUESTS])

    # a worker judges the first one; it is stopped mid-way (SIGTERM, what a Space restart sends)
    worker = subprocess.Popen(
        [*CLI, "worker", "--store", str(disk), "--judge", SLOW_JUDGE,
         "--once", "--concurrency", "4"],
        env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )
    first = ids["fx/first"]
    try:
        helpers.wait_for(lambda: len(_hub_lines(fake, first)) >= 60, timeout=120, interval=0.2)
    finally:
        start = time.monotonic()
        worker.send_signal(signal.SIGTERM)
        out, _ = worker.communicate(timeout=30)
    assert time.monotonic() - start < 10 and worker.returncode == 0, out[-2000:]
    on_hub = json.loads(fake.repos[REQUESTS][f"requests/{first}.json"])
    assert on_hub["status"] == "RUNNING"
    judged_on_hub = len({(v["persona_id"], v["task_id"]) for v in _hub_lines(fake, first)})
    assert 0 < judged_on_hub < 900

    # the restart: the local disk is wiped; the queue comes back from the Hub
    shutil.rmtree(disk)
    queue = _queue(env, disk)
    assert queue["fx/first"]["status"] == "RUNNING"
    assert queue["fx/second"]["status"] == "PENDING" and queue["fx/second"]["position"] == 1
    assert queue["fx/first"]["progress"]["judged"] >= judged_on_hub

    # the worker resumes the RUNNING submission where the Hub left it, then judges the next one
    proc = _cli(env, "worker", "--store", str(disk), "--judge", SLOW_JUDGE, "--once", "--concurrency", "16")
    assert proc.returncode == 0, proc.stderr[-3000:]
    queue = _queue(env, disk)
    assert queue["fx/first"]["status"] == queue["fx/second"]["status"] == "FINISHED"
    lines = (disk / "results" / first / "judgments.jsonl").read_text().splitlines()
    verdicts = [json.loads(x) for x in lines]
    keys = [(v["persona_id"], v["task_id"]) for v in verdicts]
    assert len(keys) == len(set(keys)) == 900 and {v["judge"] for v in verdicts} == {SLOW_JUDGE}

    # wiped again: the board (both measured rows) and the finished queue come back from the Hub
    board_before = _cli(env, "leaderboard", "--store", str(disk), "--judge", SLOW_JUDGE, "--all", "--json")
    shutil.rmtree(disk)
    board_after = _cli(env, "leaderboard", "--store", str(disk), "--judge", SLOW_JUDGE, "--all", "--json")
    assert board_after.returncode == 0, board_after.stderr[-2000:]
    rows = json.loads(board_after.stdout)
    assert rows == json.loads(board_before.stdout)
    assert {r["model"] for r in rows} == {"fx/first", "fx/second"}
    # the fixture's responses are one template with a fact pasted in: flagged, and the flag survives
    assert all(r["smoke_test"] and r["flags"][0].startswith("near_duplicate") for r in rows)
    assert _queue(env, disk)["fx/first"]["status"] == "FINISHED"

    # nothing secret reached the Hub; every route the client used exists on the test server
    assert not fake.unknown, fake.unknown
    for repo in (REQUESTS, RESULTS):
        for path, data in fake.repos[repo].items():
            for name, value in SECRETS.items():
                assert value.encode() not in data, (name, repo, path)


def test_unchanged_files_make_no_commit_and_a_refused_submission_commits_nothing(
    tmp_path: Path, hub: tuple[FakeHub, dict[str, str]]
) -> None:
    fake, env = hub
    responses = helpers.responses_file(tmp_path / "responses.jsonl")
    disk = tmp_path / "disk"
    args = ["--store", str(disk), "--model-name", "fx/once", "--family", "F", "--contact", "a@x.org"]
    assert _cli(env, "submit", str(responses), *args).returncode == 0
    commits = len(fake.commits)
    again = _cli(env, "submit", str(responses), *args)  # a duplicate: refused, exit 2
    assert again.returncode == 2 and "already on the board or in the queue" in again.stderr
    assert len(fake.commits) == commits
    assert _cli(env, "queue", "--store", str(disk)).returncode == 0  # reading commits nothing
    assert len(fake.commits) == commits


def test_a_hub_that_cannot_be_read_is_a_clear_error(
    tmp_path: Path, hub: tuple[FakeHub, dict[str, str]]
) -> None:
    _fake, env = hub
    env = {**env, "HF_ENDPOINT": f"http://127.0.0.1:{helpers.free_port()}", "HF_HUB_ETAG_TIMEOUT": "2"}
    proc = _cli(env, "queue", "--store", str(tmp_path / "disk"), timeout=120)
    assert proc.returncode == 1
    assert "cannot read the Hub-backed store" in proc.stderr and "Traceback" not in proc.stderr
    assert SECRETS["HF_TOKEN"] not in proc.stderr

    partial = {k: v for k, v in env.items() if k != "MIRAGE_RESULTS_REPO"}
    proc = _cli(partial, "queue", "--store", str(tmp_path / "disk"))
    assert proc.returncode == 2 and "MIRAGE_RESULTS_REPO is not set" in proc.stderr
