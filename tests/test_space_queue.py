"""A queue that tells the truth: positions, a loading state, the measured rate and the time left,
and the expected time before submitting."""

from __future__ import annotations

import importlib.util
import re
import threading
from pathlib import Path
from typing import Any

from mirage_bench.leaderboard.store import Metadata, Status, SubmissionStore
from mirage_bench.leaderboard.worker import LOADING_NOTE, Worker

_spec = importlib.util.spec_from_file_location(
    "space_helpers", Path(__file__).parent / "browser" / "helpers.py"
)
helpers = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(helpers)


def _submit(root: Path, tmp_path: Path, name: str) -> str:
    path = helpers.responses_file(tmp_path / f"{name.replace('/', '_')}.jsonl")
    return SubmissionStore(root).submit_file(
        path.read_bytes(), Metadata(model_name=name, family="Fixture", contact=f"{name}@x.org")
    ).submission_id


class SlowLoading:
    """The simulated judge behind a ``load()`` that waits until released (a local model loading)."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.release = threading.Event()
        self.loading = threading.Event()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def load(self) -> None:
        self.loading.set()
        self.release.wait(60)


def test_pending_positions_count_what_is_ahead(tmp_path: Path) -> None:
    root = tmp_path / "store"
    ids = [_submit(root, tmp_path, f"q/m{i}") for i in range(3)]
    store = SubmissionStore(root)
    store.claim_next()  # the first one is being judged
    rows = {r["submission"]: r for r in store.queue_rows()}
    assert rows[ids[0]]["status"] == "RUNNING" and rows[ids[0]]["position"] is None
    assert rows[ids[1]]["state"] == "queued: position 1 (1 ahead)"
    assert rows[ids[2]]["state"] == "queued: position 2 (2 ahead)"


def test_running_shows_loading_then_judged_rate_and_eta(tmp_path: Path) -> None:
    from mirage_bench.runs import build_backend

    root = tmp_path / "store"
    sid = _submit(root, tmp_path, "q/slow")
    worker = Worker(root, judge="scripted:simulate,latency=0.02", concurrency=2, poll_s=0.1)
    backend = SlowLoading(build_backend(worker.judge))
    worker._backend = backend
    worker.start_background()
    store = SubmissionStore(root)
    try:
        assert backend.loading.wait(60)
        helpers.wait_for(lambda: store.queue_rows()[0]["state"] == LOADING_NOTE, timeout=20)
        assert store.get(sid).progress_done == 0
        backend.release.set()
        # judged k of n, the measured rate and the time left at that rate
        helpers.wait_for(lambda: " per min · about " in store.queue_rows()[0]["state"], timeout=60)
        row = store.queue_rows()[0]
        req = store.get(sid)
        pattern = r"judged \d+ of 900 · [\d.,]+ per min · about \d+ (s|min|h \d+ min) left"
        assert re.fullmatch(pattern, row["state"]), row["state"]
        assert req.rate_per_min and req.rate_per_min > 0 and req.eta_s is not None and req.eta_s > 0
        helpers.wait_for(lambda: store.get(sid).status == Status.FINISHED, timeout=120)
    finally:
        backend.release.set()
        worker.stop()
    done = store.get(sid)
    assert done.phase == "" and done.eta_s is None and done.rate_per_min  # the rate stays as a measurement
    assert store.measured_rate(worker.judge) == done.rate_per_min


def test_expected_time_before_submitting_comes_from_the_measured_rate(tmp_path: Path) -> None:
    from space.tabs_board import Context
    from space.tabs_submit import expected_time_note

    store = SubmissionStore(tmp_path / "store")
    ctx = Context(store=store, judge="scripted")
    assert "not measured yet for `scripted` on this Space" in expected_time_note(ctx)
    sid = _submit(store.root, tmp_path, "q/measured")
    store.update(sid, status=Status.FINISHED, judge="scripted", rate_per_min=6.0)
    note = expected_time_note(ctx)
    assert "about 2 h 30 min for 900 responses with `scripted`" in note  # 900 / 6 per min = 150 min
    assert "6 responses per minute" in note
    _submit(store.root, tmp_path, "q/waiting")
    assert expected_time_note(ctx).startswith("1 submission(s) are queued or being judged ahead")
