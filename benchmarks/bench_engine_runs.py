"""Cost of a whole run with the simulated scripted backend (SIMULATION: no real model is called).

Measures, side by side in one process, for the Task+Judge stages over N personas x 6 tasks:

1. a first run with injected faults (``--faults``, default 0.2) and no latency;
2. a re-run with the same arguments (all records on disk: expected 0 backend calls);
3. a re-run after deleting the record files but keeping the response cache (every call a cache hit);

4. a first run in a fresh directory with the response cache at ``synchronous=FULL`` (sync every
   commit) instead of the default ``NORMAL`` (WAL: sync at checkpoints);

and prints wall time, instances/s, backend calls and cache hits of each pass, and each pass's wall
time relative to the first. A second table times 2000 single-row cache writes under each
``synchronous`` mode, side by side. A one-persona warm-up run comes first, so no pass pays the
imports. Run: ``.venv/bin/python benchmarks/bench_engine_runs.py [--personas all]``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import tempfile
import time
from collections.abc import Iterator
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


@contextlib.contextmanager
def _cache_sync(mode: str) -> Iterator[None]:
    """Make ``mode`` the default ``synchronous`` of every ResponseCache opened inside the block."""
    from mirage_bench.cache import ResponseCache

    defaults = ResponseCache.__init__.__kwdefaults__
    old = defaults["synchronous"]
    defaults["synchronous"] = mode
    try:
        yield
    finally:
        defaults["synchronous"] = old


def _cache_writes(path: Path, mode: str, n: int = 2000) -> float:
    """Seconds per single-row cache write (one transaction each, as the client does)."""
    from mirage_bench.backends.base import Completion
    from mirage_bench.cache import ResponseCache

    completion = Completion(text="x" * 800)
    with ResponseCache(path, synchronous=mode) as cache:  # type: ignore[arg-type]
        start = time.perf_counter()
        for i in range(n):
            cache.put(f"key-{i}", completion)
        return (time.perf_counter() - start) / n


def main() -> None:
    """Run the passes and print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--personas", default="all")
    parser.add_argument("--faults", type=float, default=0.2)
    args = parser.parse_args()
    spec = f"scripted:simulate,faults={args.faults}"
    with tempfile.TemporaryDirectory() as tmp:
        _pass(Path(tmp) / "warmup", spec, "1", args.faults)
        out = Path(tmp) / "run"
        rows = [("first run", *_pass(out, spec, args.personas, args.faults))]
        rows.append(("same args again", *_pass(out, spec, args.personas, args.faults)))
        for name in ("responses.jsonl", "judgments.jsonl"):
            (out / name).unlink()
        rows.append(("records lost, cache kept", *_pass(out, spec, args.personas, args.faults)))
        with _cache_sync("FULL"):
            full = _pass(Path(tmp) / "full", spec, args.personas, args.faults)
        rows.append(("first run, cache FULL", *full))
        writes = [(mode, _cache_writes(Path(tmp) / f"w-{mode}.sqlite", mode)) for mode in ("NORMAL", "FULL")]
    first = rows[0][1]
    print(f"{'pass':<26}{'wall s':>9}{'inst/s':>9}{'backend calls':>15}{'cache hits':>12}{'vs first':>10}")
    for name, wall, calls, hits, n in rows:
        print(f"{name:<26}{wall:>9.2f}{n / wall:>9.1f}{calls:>15}{hits:>12}{wall / first:>10.3f}")
    print()
    print(f"{'cache synchronous':<20}{'ms/write':>10}{'vs NORMAL':>11}")
    for mode, seconds in writes:
        print(f"{mode:<20}{1000 * seconds:>10.3f}{seconds / writes[0][1]:>11.2f}")


if __name__ == "__main__":
    main()
