"""Space benchmark: how long the leaderboard's own work takes, measured side by side in one run.

Prints one table: validating a full 900-response upload, queueing it, judging it with the engine's
simulated ``scripted`` judge (no latency: the worker's own overhead), resuming a finished
submission (every verdict read back, no call), building a measured row (1,000-resample bootstrap),
loading + viewing the board, and an endpoint submission's generation (the one-message endpoint
check, then 900 responses + 900 self-audits from the local OpenAI-compatible test server
``tests/openai_server.py``, at 8 and 16 calls in flight). Run:
``.venv/bin/python benchmarks/bench_space.py``.
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

from _timings import print_timings


def _responses(path: Path) -> bytes:
    from mirage_bench.personas import load_personas
    from mirage_bench.tasks import TASK_IDS

    lines = [
        json.dumps(
            {
                "persona_id": p.persona_id,
                "task_id": t,
                "response": f"Since '{p.revealed_facts[0]}', you must love quiet evenings and plants.",
            }
        )
        for p in load_personas()
        for t in TASK_IDS
    ]
    path.write_text("\n".join(lines) + "\n")
    return path.read_bytes()


def _endpoint_rows(tmp: Path) -> list[tuple[str, float, str]]:
    """Endpoint path (b): the worker's endpoint check and generation against a local fake server."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from mirage_bench.leaderboard.endpoint_check import check_endpoint
    from mirage_bench.leaderboard.store import Metadata, SubmissionStore
    from mirage_bench.leaderboard.worker import Worker
    from tests.browser.helpers import fake_endpoint

    rows: list[tuple[str, float, str]] = []
    server = fake_endpoint()
    try:
        t = time.perf_counter()
        problem = check_endpoint(server.base_url, "bench-model")
        rows.append(("endpoint check (one message)", time.perf_counter() - t, problem or "ok"))
        for concurrency in (8, 16):
            root = tmp / f"endpoint-{concurrency}"
            store = SubmissionStore(root)
            meta = Metadata(model_name=f"bench/ep-{concurrency}", family="Bench", contact="b@x")
            store.submit_endpoint(server.base_url, "bench-model", meta)
            req = store.claim_next()  # RUNNING, as the worker takes it
            assert req is not None
            worker = Worker(root, judge="scripted", endpoint_concurrency=concurrency)
            before = len(server.requests)
            t = time.perf_counter()
            records = worker._generate(req, store.result_dir(req.submission_id))
            seconds = time.perf_counter() - t
            calls = len(server.requests) - before
            rows.append(
                (
                    f"endpoint generation, {concurrency} in flight",
                    seconds,
                    f"{len(records)} responses, {calls} requests, {calls / seconds:.0f} requests/s",
                )
            )
    finally:
        server.stop()
    return rows


def main() -> None:
    """Run every measurement once and print the table."""
    from mirage_bench.leaderboard import board as lb
    from mirage_bench.leaderboard.store import Metadata, SubmissionStore, validate_responses_bytes
    from mirage_bench.leaderboard.worker import Worker
    from mirage_bench.reported import PAPER_JUDGE
    from mirage_bench.runs import load_claims

    rows: list[tuple[str, float, str]] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "store"
        data = _responses(Path(tmp) / "responses.jsonl")
        t = time.perf_counter()
        n = len(validate_responses_bytes(data).records)
        rows.append(("validate upload", time.perf_counter() - t, f"{n} responses, {len(data):,} bytes"))
        store = SubmissionStore(root)
        t = time.perf_counter()
        req = store.submit_file(data, Metadata(model_name="bench/model", family="Bench", contact="b@x"))
        rows.append(("validate + queue", time.perf_counter() - t, "atomic write under the store lock"))
        worker = Worker(root, judge="scripted")
        worker._make_backend()
        import mirage_bench.metrics.selfmon  # noqa: F401  (import cost kept out of the timing)

        t = time.perf_counter()
        worker.serve(once=True)
        judged = time.perf_counter() - t
        final = store.get(req.submission_id)
        rows.append(
            (
                "judge submission (simulated judge)",
                judged,
                f"{final.status.value}, {final.progress}, {n / judged:.0f} responses/s",
            )
        )
        store.update(req.submission_id, status="RUNNING")
        t = time.perf_counter()
        worker.serve(once=True)
        rows.append(
            (
                "resume a finished submission",
                time.perf_counter() - t,
                f"backend calls in total: {worker._backend.calls} (= first pass only)",
            )
        )
        claims = load_claims(store.result_dir(req.submission_id))
        t = time.perf_counter()
        lb.measured_row(claims, [], n_resamples=1000)
        rows.append(
            ("measured row (1,000 bootstrap resamples)", time.perf_counter() - t, f"{len(claims)} claims")
        )
        t = time.perf_counter()
        board = lb.load_board(root)
        lb.board_view(board, judge=PAPER_JUDGE)
        rows.append(("load board + one view", time.perf_counter() - t, f"{len(board)} rows"))
        rows.extend(_endpoint_rows(Path(tmp)))
    print_timings(rows)
    print(f"judging vs validation: {rows[2][1] / rows[0][1]:.0f}x slower")


if __name__ == "__main__":
    main()
