"""``--batch``: batch APIs against a local batch server give the online run's records, also after a kill."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pandas as pd
import pytest

from mirage_bench.instruments.launch import judge_file, start_run
from mirage_bench.runs import RunDir
from tests.batch_server import FakeBatchServer
from tests.helpers_runs import cli_process

ROOT = Path(__file__).resolve().parent.parent
RUN = dict(personas="2", tasks="apartment,rec_letter", stages="task,judge", progress=False)


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("MIRAGE_BATCH_POLL_S", "0.05")
    with FakeBatchServer(polls_to_end=2) as srv:
        yield srv


def _claims(run_dir: Path) -> pd.DataFrame:
    return pd.read_parquet(run_dir / "claims.parquet")


def _responses(run_dir: Path) -> list[tuple]:
    return [
        (r.persona_id, r.task_id, r.status, r.response, r.self_audit.status, r.self_audit.attempts)
        for r in RunDir(run_dir).read("responses")
    ]


def _log(run_dir: Path) -> list[dict]:
    return [json.loads(x) for x in (run_dir / "batches.jsonl").read_text().splitlines()]


def test_openai_batch_run_equals_the_online_run(server: FakeBatchServer, tmp_path: Path) -> None:
    spec = f"openai:fake-model@{server.base_url}"
    judge = f"openai:fake-judge@{server.base_url}"
    online, _ = start_run(model=spec, judge=judge, out=tmp_path / "online", **RUN)
    assert server.requests and not server.batches
    server.reset()
    batched, _ = start_run(model=spec, judge=judge, out=tmp_path / "batch", batch=True, **RUN)
    assert server.requests == []  # no online chat request: everything went through batches
    assert server.batch_items > 0
    pd.testing.assert_frame_equal(_claims(online), _claims(batched))
    assert _responses(online) == _responses(batched)
    log = _log(batched)
    submitted = [r["batch_id"] for r in log if r["event"] == "submitted"]
    assert submitted and {r["batch_id"] for r in log if r["event"] == "collected"} == set(submitted)
    # the fake server's self-audits (an echo) never parse: the retries went through later batches
    assert all(a == 3 for *_, a in _responses(batched))
    manifest = RunDir(batched).read_manifest()
    assert (
        manifest.usage["model"]["input_tokens"]
        == RunDir(online).read_manifest().usage["model"]["input_tokens"]
    )
    assert manifest.status == "complete"
    # a re-run is answered from the cache: no new batch
    before = len(server.batches)
    start_run(model=spec, judge=judge, out=tmp_path / "batch", batch=True, **RUN)
    assert len(server.batches) == before


def test_batch_run_resumes_by_id_after_kill(server: FakeBatchServer, tmp_path: Path) -> None:
    spec = f"openai:fake-model@{server.base_url}"
    judge = f"openai:fake-judge@{server.base_url}"
    online, _ = start_run(model=spec, judge=judge, out=tmp_path / "online", **RUN)
    server.hold.set()  # batches stay in progress: the process is killed while it polls
    out = tmp_path / "batch"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MIRAGE_BATCH_POLL_S": "0.05"}
    args = ["run", "--model", spec, "--judge", judge, "--personas", "2", "--tasks", "apartment,rec_letter",
            "--out", str(out), "--batch", "--no-progress"]
    proc = cli_process(args, cwd=ROOT, env=env)
    try:
        deadline = time.monotonic() + 60
        while not ((out / "batches.jsonl").exists() and _log(out)):
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        time.sleep(0.3)  # it is polling now
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
    first = [r["batch_id"] for r in _log(out) if r["event"] == "submitted"]
    assert len(first) == 1 and len(server.batches) == 1
    server.hold.clear()
    start_run(model=spec, judge=judge, out=out, batch=True, **RUN)
    log = _log(out)
    assert {"event": "collected", "batch_id": first[0]} in log  # the killed run's batch, found by id
    task_batches = [
        r for r in log if r["event"] == "submitted" and r["custom_ids"] == _log(out)[0]["custom_ids"]
    ]
    assert len(task_batches) == 1  # its requests were not submitted again
    pd.testing.assert_frame_equal(_claims(online), _claims(out))
    assert _responses(online) == _responses(out)


def test_anthropic_message_batches_judge_a_responses_file(
    server: FakeBatchServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.root_url)
    rows = [
        {"persona_id": "seed_001", "task_id": "apartment", "response": "Your flat has plants."},
        {"persona_id": "seed_002", "task_id": "birthday_gift", "response": "You love jazz."},
    ]
    responses = tmp_path / "sub.jsonl"
    responses.write_text("".join(json.dumps(r) + "\n" for r in rows))
    judge = "anthropic:claude-fake-1"
    online, _ = judge_file(responses=responses, judge=judge, model="m", out=tmp_path / "online")
    server.reset()
    batched, _ = judge_file(responses=responses, judge=judge, model="m", out=tmp_path / "batch", batch=True)
    assert server.requests == [] and server.batch_items == 2
    assert any(b["id"].startswith("msgbatch_") for b in server.batches.values())
    pd.testing.assert_frame_equal(_claims(online), _claims(batched))


def test_batch_refuses_stages_it_does_not_cover(server: FakeBatchServer, tmp_path: Path) -> None:
    spec = f"openai:fake-model@{server.base_url}"
    with pytest.raises(ValueError, match="--batch covers the task"):
        start_run(
            model=spec,
            judge=spec,
            personas="1",
            tasks="apartment",
            stages="task,probe",
            out=tmp_path / "x",
            batch=True,
        )


def test_failed_batch_items_are_retried_and_counted_like_online_calls(
    server: FakeBatchServer, tmp_path: Path
) -> None:
    spec = f"openai:fake-model@{server.base_url}"
    judge = f"openai:fake-judge@{server.base_url}"
    online, _ = start_run(model=spec, judge=judge, out=tmp_path / "online", **RUN)
    server.reset()
    server.fail_items(3)  # three items of the first batch come back as 500s (in the error file)
    batched, _ = start_run(
        model=spec,
        judge=judge,
        out=tmp_path / "batch",
        batch=True,
        client_options={"backoff_base_s": 0.0, "backoff_max_s": 0.0},
        **RUN,
    )
    pd.testing.assert_frame_equal(_claims(online), _claims(batched))
    usage = RunDir(batched).read_manifest().usage["model"]
    assert usage["retries"] == 3 and usage["failures"] == 0  # retried through the next batch, then answered


def test_a_corrupt_output_line_is_asked_again_not_a_traceback(
    server: FakeBatchServer, tmp_path: Path
) -> None:
    """Two torn lines in the provider's output file: those requests go into the next batch."""
    spec = f"openai:fake-model@{server.base_url}"
    judge = f"openai:fake-judge@{server.base_url}"
    online, _ = start_run(model=spec, judge=judge, out=tmp_path / "online", **RUN)
    server.reset()
    server.tear_lines(2)
    batched, _ = start_run(model=spec, judge=judge, out=tmp_path / "batch", batch=True, **RUN)
    pd.testing.assert_frame_equal(_claims(online), _claims(batched))
    assert RunDir(batched).read_manifest().usage["model"]["failures"] == 0
