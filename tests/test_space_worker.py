"""The judging worker: a full submission, a crash mid-way and its resumption, failures with reasons."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import time
from pathlib import Path

import pytest

from mirage_bench.leaderboard.store import Metadata, Status, SubmissionStore
from mirage_bench.leaderboard.worker import Worker, redact
from tests.helpers_runs import cli_process

_spec = importlib.util.spec_from_file_location(
    "space_helpers", Path(__file__).parent / "browser" / "helpers.py"
)
helpers = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(helpers)

ROOT = Path(__file__).resolve().parent.parent
SLOW_JUDGE = "scripted:simulate,latency=0.03"


def _submit(root: Path, tmp_path: Path, name: str = "fx/model") -> str:
    path = helpers.responses_file(tmp_path / f"{name.replace('/', '_')}.jsonl")
    store = SubmissionStore(root)
    return store.submit_file(
        path.read_bytes(), Metadata(model_name=name, family="Fixture", contact="a@x.org")
    ).submission_id


def _keys(path: Path) -> list[tuple[str, str]]:
    return [(r["persona_id"], r["task_id"]) for r in map(json.loads, path.read_text().splitlines()) if r]


def test_worker_judges_a_full_submission(tmp_path: Path) -> None:
    sid = _submit(tmp_path / "store", tmp_path)
    worker = Worker(tmp_path / "store", judge="scripted")
    worker.serve(once=True)
    store = SubmissionStore(tmp_path / "store")
    req = store.get(sid)
    assert req.status == Status.FINISHED, req.reason
    assert req.progress == f"judged {req.n_responses} of {req.n_responses}"
    run = store.result_dir(sid)
    assert len(_keys(run / "judgments.jsonl")) == req.n_responses
    row = json.loads((run / "leaderboard_row.json").read_text())
    assert row["judge"] == "scripted" and row["source"] == "measured"
    assert row["smoke_test"]  # judged by the simulation: flagged, never ranked beside a real judge
    assert row["self_oi_pct"] == pytest.approx(50.0)  # the fixture self-audits are half over-inference
    assert row["pattern"] in ("Under", "Calib.", "Over")


def test_worker_resumes_after_a_crash_without_losing_or_repeating(tmp_path: Path) -> None:
    root = tmp_path / "store"
    sid = _submit(root, tmp_path)
    judgments = SubmissionStore(root).result_dir(sid) / "judgments.jsonl"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    args = ["worker", "--store", str(root), "--judge", SLOW_JUDGE, "--once", "--concurrency", "4"]
    proc = cli_process(args, cwd=ROOT, env=env)
    try:
        helpers.wait_for(
            lambda: judgments.exists() and len(judgments.read_text().splitlines()) >= 60,
            timeout=90,
            interval=0.05,
        )
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    store = SubmissionStore(root)
    assert store.get(sid).status == Status.RUNNING  # orphaned by the crash
    done_before = len(set(_keys(judgments)))
    total = store.get(sid).n_responses
    assert 0 < done_before < total

    worker = Worker(root, judge=SLOW_JUDGE, concurrency=8)
    backend = worker._make_backend()
    worker.serve(once=True)
    req = store.get(sid)
    assert req.status == Status.FINISHED, req.reason
    keys = _keys(judgments)
    assert len(keys) == len(set(keys)) == total  # nothing lost, nothing judged twice
    assert backend.calls <= total - done_before  # completed calls were not repeated

    # the resumed result equals an uninterrupted run's
    fresh = tmp_path / "fresh"
    _submit(fresh, tmp_path)
    Worker(fresh, judge="scripted").serve(once=True)
    resumed_row = json.loads((store.result_dir(sid) / "leaderboard_row.json").read_text())
    fresh_rows = list((fresh / "results").glob("*/leaderboard_row.json"))
    fresh_row = json.loads(fresh_rows[0].read_text())
    for key in ("claims", "oi_pct", "grounded_pct", "self_oi_pct", "stereotype_delta_pp"):
        assert resumed_row[key] == pytest.approx(fresh_row[key]), key


def test_failed_judging_says_why_and_hides_keys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mirage_bench.backends.scripted import ScriptedBackend

    monkeypatch.setenv("FAKE_PROVIDER_API_KEY", "sk-test-secret-123456")
    sid = _submit(tmp_path / "store", tmp_path)
    worker = Worker(tmp_path / "store", judge="scripted")
    worker._backend = ScriptedBackend(lambda m, p: ValueError("401 invalid api key sk-test-secret-123456"))
    worker.serve(once=True)
    req = SubmissionStore(tmp_path / "store").get(sid)
    assert req.status == Status.FAILED
    assert "the judge failed on" in req.reason
    assert "sk-test-secret-123456" not in req.reason
    assert "sk-test-secret" not in (tmp_path / "store" / "requests" / f"{sid}.json").read_text()


def test_redact_removes_env_secrets_and_key_shapes() -> None:
    text = redact("key=sk-ant-abcdefghijklmnop token=XyZ123456789", env={"HF_TOKEN": "XyZ123456789"})
    assert "abcdefghijklmnop" not in text and "XyZ123456789" not in text


def test_background_thread_picks_up_new_submissions(tmp_path: Path) -> None:
    root = tmp_path / "store"
    worker = Worker(root, judge="scripted", poll_s=0.2)
    worker.start_background()
    try:
        sid = _submit(root, tmp_path)
        store = SubmissionStore(root)
        helpers.wait_for(lambda: store.get(sid).status in (Status.FINISHED, Status.FAILED), timeout=60)
        assert store.get(sid).status == Status.FINISHED
    finally:
        start = time.monotonic()
        worker.stop()
        assert time.monotonic() - start < 5


# -- endpoint submissions (path b) submitted through the store; the full PENDING -> FINISHED flow of
# an endpoint submission runs through gradio_client in test_space_app.py ------------------------------
SECRET = "sk-space-own-secret-0123456789"


def _meta(name: str, contact: str = "ep@x.org") -> Metadata:
    return Metadata(model_name=name, family="Fixture", contact=contact)


def test_unreachable_endpoint_fails_fast_with_a_reason_and_no_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    root = tmp_path / "store"
    url = f"http://127.0.0.1:{helpers.free_port()}/v1"  # nothing listens there
    sid = SubmissionStore(root).submit_endpoint(url, "m", _meta("ep/gone")).submission_id
    start = time.monotonic()
    Worker(root, judge="scripted").serve(once=True)
    assert time.monotonic() - start < 30  # no hours of retries over 1,800 prompts
    req = SubmissionStore(root).get(sid)
    assert req.status == Status.FAILED
    assert req.reason.startswith(f"RuntimeError: endpoint {url} is unreachable (ConnectError"), req.reason
    assert SECRET not in (root / "requests" / f"{sid}.json").read_text()
    assert not (SubmissionStore(root).result_dir(sid) / "generation").exists()  # no generation started


def test_endpoint_refusing_the_model_fails_with_its_answer(tmp_path: Path) -> None:
    root = tmp_path / "store"
    server = helpers.fake_endpoint()
    try:
        server.fail_next(404, message="The model `nope` does not exist.")
        sid = SubmissionStore(root).submit_endpoint(server.base_url, "nope", _meta("ep/nope")).submission_id
        Worker(root, judge="scripted").serve(once=True)
    finally:
        server.stop()
    req = SubmissionStore(root).get(sid)
    assert req.status == Status.FAILED
    assert "answered HTTP 404 to a one-message test request for model 'nope'" in req.reason
    assert "The model `nope` does not exist." in req.reason
    assert len(server.requests) == 1


def test_stopping_the_worker_mid_generation_stops_it_and_keeps_the_submission(tmp_path: Path) -> None:
    root = tmp_path / "store"
    server = helpers.fake_endpoint(latency_s=0.5)
    worker = Worker(root, judge="scripted", poll_s=0.2)
    try:
        sid = SubmissionStore(root).submit_endpoint(server.base_url, "m", _meta("ep/slow")).submission_id
        worker.start_background()
        store = SubmissionStore(root)
        helpers.wait_for(lambda: store.get(sid).reason.startswith("generating responses: "), timeout=60)
        start = time.monotonic()
        worker.stop(timeout=40)
        assert time.monotonic() - start < 35 and not worker._thread.is_alive()
        sent = len(server.requests)
        time.sleep(1.5)
        assert len(server.requests) <= sent + 16  # the generation subprocess is gone (at most in-flight)
    finally:
        server.stop()
    req = store.get(sid)
    assert req.status == Status.RUNNING  # resumed by the next worker, not failed
    assert (store.result_dir(sid) / "generation").is_dir()


def test_endpoint_urls_with_credentials_are_refused(tmp_path: Path) -> None:
    from mirage_bench.leaderboard.store import SubmissionError

    store = SubmissionStore(tmp_path / "store")
    for url in ("https://user:pw@host/v1", "https://host/v1?api_key=sk-abcdefghijkl", "ftp://host/v1", ""):
        with pytest.raises(SubmissionError) as err:
            store.submit_endpoint(url, "m", _meta("ep/creds"))
        assert "endpoint URL" in err.value.problems[0]
    assert store.list_requests() == []
