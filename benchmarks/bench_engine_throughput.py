"""Throughput of the judge stage through the Client against a local OpenAI-compatible server.

The server (``tests/openai_server.py``, run as a separate process so it does not share this
process's interpreter lock) answers every request after a fixed latency with schema-valid judge
JSON. For each concurrency level the benchmark judges N distinct (persona, task, response) triples
with :func:`mirage_bench.instruments.judge.judge_text` through ``Client(openai:...@server)`` and a
fresh sqlite cache, then re-runs the identical workload against the now-filled cache.

Reported per concurrency: wall time, backend calls, achieved requests/s, the ideal
``concurrency / latency``, their ratio, and the cached re-run's wall time and backend calls
relative to the first run. Run: ``.venv/bin/python benchmarks/bench_engine_throughput.py``
(``--n 300 --latency-s 0.05 --concurrency 1 8 32``).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


@dataclass
class Pass:
    """One pass over the workload."""

    wall_s: float
    backend_calls: int
    judged_ok: int
    cache_hits: int


def start_server(latency_s: float) -> tuple[subprocess.Popen[str], str]:
    """Start ``tests/openai_server.py`` in a child process; return it and its base URL."""
    proc = subprocess.Popen(
        [sys.executable, str(REPO / "tests" / "openai_server.py"), "--latency-s", str(latency_s)],
        stdout=subprocess.PIPE, text=True, cwd=REPO, env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
    )
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    if not line.startswith("PORT "):
        proc.kill()
        raise RuntimeError(f"test server did not start (said {line!r})")
    return proc, f"http://127.0.0.1:{line.split()[1]}/v1"


def workload(n: int) -> list[tuple[object, str, str]]:
    """N distinct judge inputs: (persona, task prompt, response) built from the shipped data."""
    from mirage_bench.personas import load_personas
    from mirage_bench.tasks import TASKS

    personas = load_personas()
    items = []
    for i in range(n):
        persona = personas[i % len(personas)]
        task = TASKS[(i // len(personas)) % len(TASKS)]
        response = (f"Draft {i}: Based on what you told me ({'; '.join(persona.revealed_facts)}), here is "
                    f"a plan. You probably enjoy quiet mornings, a good coffee and a walk in the park.")
        items.append((persona, task.prompt, response))
    return items


async def one_pass(transport: str, base_url: str, latency_s: float, cache_path: Path, concurrency: int,
                   items: list[tuple[object, str, str]]) -> Pass:
    """Judge every item once through a fresh Client sharing ``cache_path``.

    ``transport`` is ``http`` (the openai backend against the server process) or ``in-process``
    (the scripted backend sleeping ``latency_s``: the same workload without SDK and HTTP costs).
    """
    from mirage_bench.backends.registry import make_backend
    from mirage_bench.client import Client, ClientConfig, ResponseCache
    from mirage_bench.instruments.judge import judge_text

    if transport == "http":
        backend = make_backend(f"openai:bench-judge@{base_url}")
    else:
        backend = make_backend("scripted", latency_s=latency_s)
    client = Client(backend, ClientConfig(concurrency=concurrency, timeout_s=30.0), ResponseCache(cache_path))
    start = time.perf_counter()
    judgments = await asyncio.gather(*(judge_text(client, p, t, r) for p, t, r in items))  # type: ignore[arg-type]
    wall = time.perf_counter() - start
    await client.aclose()
    client.cache.close()  # type: ignore[union-attr]
    return Pass(wall_s=wall, backend_calls=client.stats.backend_calls,
                judged_ok=sum(j.status == "ok" for j in judgments), cache_hits=client.stats.cache_hits)


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=300, help="judge calls per pass")
    parser.add_argument("--latency-s", type=float, default=0.05, help="server latency per request")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 8, 32])
    parser.add_argument("--transports", nargs="+", default=["http", "in-process"],
                        choices=["http", "in-process"])
    args = parser.parse_args(argv)
    sys.path.insert(0, str(REPO))

    import openai  # noqa: F401 - imported (~1-3 s) before any timer starts

    import mirage_bench.instruments.judge  # noqa: F401

    load_before = os.getloadavg()[0]
    items = workload(args.n)
    proc, base_url = start_server(args.latency_s)
    rows = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for transport in args.transports:
                for c in args.concurrency:
                    cache_path = Path(tmp) / f"cache-{transport}-c{c}.sqlite"
                    run = (transport, base_url, args.latency_s, cache_path, c, items)
                    first = asyncio.run(one_pass(*run))
                    again = asyncio.run(one_pass(*run))
                    rows.append((transport, c, first, again))
    finally:
        proc.terminate()
        proc.wait(10)

    print(f"judge stage via Client; http = openai backend -> local server process, in-process = scripted "
          f"backend sleeping the same latency; N={args.n} judge calls per pass, "
          f"server latency {args.latency_s * 1000:.0f} ms; {os.cpu_count()} CPUs, "
          f"1-min load average {load_before:.1f} before / {os.getloadavg()[0]:.1f} after")
    print("ms/call = wall x concurrency / calls (latency + client, SDK, HTTP and judge-parsing overhead)")
    columns = ("transport", "conc", "wall s", "calls", "ok", "req/s", "ideal", "eff", "ms/call",
               "cached wall s", "cached calls", "cached/first wall")
    table = []
    for transport, c, first, again in rows:
        achieved = first.backend_calls / first.wall_s
        ideal = c / args.latency_s
        table.append((transport, str(c), f"{first.wall_s:.2f}", str(first.backend_calls),
                      str(first.judged_ok),
                      f"{achieved:.1f}", f"{ideal:.1f}", f"{achieved / ideal:.2f}",
                      f"{first.wall_s * c / max(first.backend_calls, 1) * 1000:.1f}", f"{again.wall_s:.3f}",
                      str(again.backend_calls), f"{again.wall_s / first.wall_s:.4f}"))
    widths = [max(len(col), *(len(row[i]) for row in table)) for i, col in enumerate(columns)]
    print(" | ".join(col.rjust(w) for col, w in zip(columns, widths, strict=True)))
    print("-+-".join("-" * w for w in widths))
    for row in table:
        print(" | ".join(cell.rjust(w) for cell, w in zip(row, widths, strict=True)))

if __name__ == "__main__":
    main()
