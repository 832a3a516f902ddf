"""Shutdown of the judging worker: SIGINT/SIGTERM stop it within 10 s, record no failure from the
shutdown, and the next start resumes; kill -9 at random moments loses nothing; one judge per result.

The worker runs as a real ``mirage-bench worker`` subprocess whose judge calls block in a thread
that cannot be interrupted (``tests/fixtures/leaderboard/blocking_cli.py``), the way a local
transformers generation does. SIGINT is restored in the child (a background process started from
a script has it ignored otherwise; see STACK-FACTS).
"""

from __future__ import annotations

import importlib.util
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mirage_bench.leaderboard.store import Metadata, Status, SubmissionStore
from mirage_bench.leaderboard.worker import Worker

_spec = importlib.util.spec_from_file_location(
    "space_helpers", Path(__file__).parent / "browser" / "helpers.py"
)
helpers = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(helpers)

pytestmark = [pytest.mark.timeout(300)]

ROOT = Path(__file__).resolve().parent.parent
BLOCKING_CLI = ROOT / "tests" / "fixtures" / "leaderboard" / "blocking_cli.py"


def _submit(root: Path, tmp_path: Path, name: str = "fx/model") -> str:
    path = helpers.responses_file(tmp_path / f"{name.replace('/', '_')}.jsonl")
    return SubmissionStore(root).submit_file(
        path.read_bytes(), Metadata(model_name=name, family="Fixture", contact="a@x.org")
    ).submission_id


def _lines(path: Path) -> list[dict]:
    if not path.exists():
        return []
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            continue  # a torn last line after kill -9
    return out


def _start(root: Path, judge: str, block_s: float, concurrency: int = 8) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MIRAGE_TEST_BLOCK_S": str(block_s)}
    cmd = [sys.executable, str(BLOCKING_CLI), "worker", "--store", str(root), "--judge", judge]
    cmd += ["--once", "--concurrency", str(concurrency)]
    return subprocess.Popen(
        cmd,
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def _stop(proc: subprocess.Popen, sig: int) -> tuple[float, str]:
    start = time.monotonic()
    proc.send_signal(sig)
    try:
        out, _ = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
    return time.monotonic() - start, out.decode(errors="replace")


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_signal_stops_a_judging_worker_fast_without_failure_verdicts(tmp_path: Path, sig: int) -> None:
    root = tmp_path / "store"
    sid = _submit(root, tmp_path)
    judgments = SubmissionStore(root).result_dir(sid) / "judgments.jsonl"
    # every call blocks 12 s in a thread that cannot be interrupted (the local-model case): longer
    # than the 8 s watchdog, so only an orderly shutdown that abandons the calls passes
    proc = _start(root, "scripted", block_s=12.0)
    helpers.wait_for(lambda: len(_lines(judgments)) >= 8, timeout=120, interval=0.1)
    time.sleep(1.0)  # the next calls are in flight
    elapsed, out = _stop(proc, sig)
    assert elapsed < 10, f"took {elapsed:.1f} s to exit\n{out[-2000:]}"
    assert "Traceback" not in out, out[-3000:]
    assert "shutdown took longer" not in out, out[-2000:]  # not saved by the watchdog
    assert proc.returncode == 0, out[-2000:]
    verdicts = _lines(judgments)
    assert verdicts and all(v["status"] != "call_failure" for v in verdicts), "shutdown wrote failures"
    req = SubmissionStore(root).get(sid)
    assert req.status == Status.RUNNING  # resumed at the next start, not failed
    assert req.progress_done == len(verdicts)

    Worker(root, judge="scripted").serve(once=True)  # the next start resumes and finishes
    req = SubmissionStore(root).get(sid)
    assert req.status == Status.FINISHED, req.reason
    final = _lines(judgments)
    keys = [(v["persona_id"], v["task_id"]) for v in final]
    assert len(keys) == len(set(keys)) == req.n_responses == 900
    assert {v["judge"] for v in final} == {"scripted"}


def test_random_kills_and_restarts_end_with_one_verdict_per_response(tmp_path: Path) -> None:
    rng = random.Random(20261201)
    root = tmp_path / "store"
    sid = _submit(root, tmp_path)
    judgments = SubmissionStore(root).result_dir(sid) / "judgments.jsonl"
    seen_failure = False
    for _round in range(4):
        proc = _start(root, "scripted", block_s=0.2)
        time.sleep(rng.uniform(1.5, 5.0))  # sometimes while importing, sometimes mid-judging
        sig = rng.choice([signal.SIGINT, signal.SIGTERM, signal.SIGKILL])
        if proc.poll() is not None:
            break  # it finished before we could kill it
        elapsed, out = _stop(proc, sig)
        if sig != signal.SIGKILL:
            assert elapsed < 10, f"{signal.Signals(sig).name}: {elapsed:.1f} s\n{out[-2000:]}"
            assert "Traceback" not in out, out[-3000:]
            # (a signal that lands while the worker still imports its judging modules on a loaded
            # machine may be finished by the watchdog: the exit stays under 10 s, nothing is lost)
        seen_failure |= any(v["status"] == "call_failure" for v in _lines(judgments))
    assert not seen_failure, "a stop or kill was recorded as a judge failure"
    Worker(root, judge="scripted").serve(once=True)
    req = SubmissionStore(root).get(sid)
    assert req.status == Status.FINISHED, req.reason
    final = _lines(judgments)
    keys = [(v["persona_id"], v["task_id"]) for v in final]
    assert len(keys) == len(set(keys)) == 900
    assert {v["judge"] for v in final} == {"scripted"}


def test_a_judge_change_between_starts_rejudges_from_scratch_never_mixes(tmp_path: Path) -> None:
    root = tmp_path / "store"
    sid = _submit(root, tmp_path)
    judgments = SubmissionStore(root).result_dir(sid) / "judgments.jsonl"
    proc = _start(root, "scripted", block_s=0.2)
    helpers.wait_for(lambda: len(_lines(judgments)) >= 40, timeout=120, interval=0.1)
    _stop(proc, signal.SIGTERM)
    assert {v["judge"] for v in _lines(judgments)} == {"scripted"}

    other = "scripted:simulate,leniency=0.9"
    Worker(root, judge=other).serve(once=True)
    req = SubmissionStore(root).get(sid)
    assert req.status == Status.FINISHED and req.judge == other, req.reason
    final = _lines(judgments)
    assert len(final) == 900 and {v["judge"] for v in final} == {other}
    aside = list(judgments.parent.glob("judgments.*.discarded"))
    assert len(aside) == 1 and {v["judge"] for v in _lines(aside[0])} == {"scripted"}
    row = json.loads((judgments.parent / "leaderboard_row.json").read_text())
    assert row["judge"] == other


def test_a_second_worker_on_a_busy_store_says_so(tmp_path: Path) -> None:
    from filelock import FileLock

    root = tmp_path / "store"
    SubmissionStore(root)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with FileLock(str(root / ".worker.lock")):
        proc = subprocess.run(
            [sys.executable, "-m", "mirage_bench.cli", "worker", "--store", str(root), "--judge", "scripted",
             "--once", "--poll", "0.5"],
            env=env, cwd=ROOT, capture_output=True, text=True, timeout=120,
        )
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "another worker holds" in proc.stderr


def test_importing_the_blocking_cli_patches_nothing() -> None:
    """pytest's doctest collection imports every module under tests/: the fixture CLI must patch the
    backends only when run as a program, or every later in-process worker judges 1 s per call."""
    import importlib.util

    import mirage_bench.runs as runs

    before = runs.build_backend
    spec = importlib.util.spec_from_file_location("blocking_cli_probe", BLOCKING_CLI)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert runs.build_backend is before
