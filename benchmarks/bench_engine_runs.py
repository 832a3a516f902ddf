"""Cost of a whole run with the simulated scripted backend (SIMULATION: no real model is called).

Measures, side by side in one process, for the Task+Judge stages over N personas x 6 tasks:

1. a first run with injected faults (``--faults``, default 0.2) and no latency;
2. a re-run with the same arguments (all records on disk: expected 0 backend calls);
3. a re-run after deleting the record files but keeping the response cache (every call a cache hit);

and prints wall time, instances/s, backend calls and cache hits of each pass, and each pass's wall
time relative to the first. Run: ``.venv/bin/python benchmarks/bench_engine_runs.py [--personas all]``.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path


def _pass(out: Path, spec: str, personas: str, faults: float) -> tuple[float, int, int, int]:
    from mirage_bench.instruments.launch import start_run
    from mirage_bench.instruments.simulate import simulated_backend

    model, judge = simulated_backend(fault_rate=faults), simulated_backend(fault_rate=faults)
    start = time.perf_counter()
    start_run(
        model=spec,
        judge=spec,
        personas=personas,
        out=out,
        concurrency=64,
        backends=(model, judge),
        client_options={"backoff_base_s": 0.001, "backoff_max_s": 0.01},
    )
    wall = time.perf_counter() - start
    usage = json.loads((out / "manifest.json").read_text())["usage"]
    hits = sum(u["cache_hits"] for u in usage.values())
    return wall, model.calls + judge.calls, hits, len((out / "responses.jsonl").read_text().splitlines())


def main() -> None:
    """Run the three passes and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--personas", default="all")
    parser.add_argument("--faults", type=float, default=0.2)
    args = parser.parse_args()
    spec = f"scripted:simulate,faults={args.faults}"
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run"
        rows = [("first run", *_pass(out, spec, args.personas, args.faults))]
        rows.append(("same args again", *_pass(out, spec, args.personas, args.faults)))
        for name in ("responses.jsonl", "judgments.jsonl"):
            (out / name).unlink()
        rows.append(("records lost, cache kept", *_pass(out, spec, args.personas, args.faults)))
    first = rows[0][1]
    print(f"{'pass':<26}{'wall s':>9}{'inst/s':>9}{'backend calls':>15}{'cache hits':>12}{'vs first':>10}")
    for name, wall, calls, hits, n in rows:
        print(f"{name:<26}{wall:>9.2f}{n / wall:>9.1f}{calls:>15}{hits:>12}{wall / first:>10.3f}")


if __name__ == "__main__":
    main()
