"""How long the Space's default judge (the embedded ``local`` smoke-test model) takes, on this machine.

Runs the leaderboard worker's own path (``Worker.process``: model load, then judging) on the first
``N`` responses of a fixture submission and prints, side by side, the model load time, the seconds
per verdict and the resulting estimate for a full 900-response submission, with the machine's load
average (the figure scales with free CPU). The Space shows the same rate, measured live, in its queue.

    python benchmarks/bench_space_local_judge.py [N]      # default N = 2
"""

from __future__ import annotations

import importlib.util
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main(n: int = 2) -> None:
    """Measure and print one table."""
    from mirage_bench.leaderboard.store import Metadata, SubmissionStore, format_duration
    from mirage_bench.leaderboard.worker import Worker

    spec = importlib.util.spec_from_file_location("helpers", ROOT / "tests" / "browser" / "helpers.py")
    helpers = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(helpers)
    with tempfile.TemporaryDirectory() as tmp:
        responses = helpers.responses_file(Path(tmp) / "responses.jsonl")
        lines = responses.read_text().splitlines()[:n]
        pairs = {(r["persona_id"], r["task_id"]) for r in map(__import__("json").loads, lines)}
        store = SubmissionStore(Path(tmp) / "store")
        sid = store.submit_file(
            "\n".join(lines).encode(), Metadata(model_name="bench/local", family="B", contact="b@x.org"),
            pairs=pairs,
        ).submission_id
        worker = Worker(store, judge="local", concurrency=1)
        backend = worker._make_backend()
        load = getattr(backend, "load", None) or getattr(backend, "_load", None)
        start = time.monotonic()
        if callable(load):
            load()
        loaded = time.monotonic() - start
        start = time.monotonic()
        worker.serve(once=True)
        judged = time.monotonic() - start
        req = store.get(sid)
    per = judged / max(1, req.progress_done)
    load_avg = os.getloadavg()[0]
    print(f"{'step':<44}{'seconds':>10}  notes")
    print(f"{'load the local judge model':<44}{loaded:>10.1f}  backend {type(backend).__name__}")
    print(f"{'judge ' + str(req.progress_done) + ' responses':<44}{judged:>10.1f}  status {req.status.value}")
    print(f"{'per verdict':<44}{per:>10.1f}  = {60 / per:.2f} verdicts per minute")
    print(f"{'900-response submission (estimate)':<44}{per * 900:>10.0f}  about {format_duration(per * 900)}")
    print(f"load average (1 min) {load_avg:.1f} on {os.cpu_count()} CPU(s)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2)
