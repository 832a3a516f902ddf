"""Judge-stage throughput of the engine against a raw aiohttp client, side by side in one run.

The server (``tests/openai_server.py``) runs as a separate process so it does not share this
process's interpreter lock; it answers every request after a fixed latency with schema-valid judge
JSON. For each latency the same N judge requests are sent, at the same concurrency, by:

* ``raw aiohttp`` - one ``aiohttp.ClientSession`` encoding and posting the judge request body and
  decoding the JSON answer: the transport's ceiling on this machine;
* ``openai SDK alone`` - the same bodies through ``openai.AsyncOpenAI(http_client=DefaultAioHttpClient())
  .post("/chat/completions", body=..., cast_to=object)`` in a bare loop (no engine): the provider's
  SDK used as its README shows for any endpoint;
* ``openai backend alone`` - :meth:`OpenAIBackend.generate` in a bare loop (no client, cache or judge):
  the engine's own way through the same SDK client (``request`` with options built once per client,
  the body encoded and the raw response decoded by orjson), the floor the engine cannot beat while
  it stays on the SDK;
* ``engine`` - :func:`mirage_bench.instruments.judge.judge_text` through ``Client(openai:...@server)``
  with its sqlite cache and the run's usage ledger journalling every request (what ``mirage-bench
  run`` does): the openai SDK on its aiohttp transport (``openai[aiohttp]``), one SDK client per
  event loop;
* ``engine, httpx SDK transport`` - the same with the SDK's default httpx transport.

Every row's timed part runs under the run's collector settings
(:func:`~mirage_bench.instruments.pipeline.throughput_gc`). Reported: wall time, requests the
server answered per second, the ideal ``concurrency / latency``, each row's ratio to the raw client
and to the SDK alone at the same latency, this process's CPU time per request (on a loaded machine
this column moves far less than the rates do), the server process's CPU time per request (read
from ``/proc``; ``-`` elsewhere) and the 1-minute load average at the end of the pass. Run:
``python benchmarks/bench_engine_throughput.py`` (``--n 1500 --concurrency 64 --latency-s 0.05 0.5``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


@dataclass
class Pass:
    """One pass over the workload."""

    mode: str
    latency_s: float
    wall_s: float
    requests: int
    ok: int
    #: This process's CPU seconds over the timed part (the server is another process).
    cpu_s: float = 0.0
    #: The server process's CPU seconds over the pass (preflight included); None where unreadable.
    server_cpu_s: float | None = None
    #: The 1-minute load average when the pass ended.
    load: float = 0.0


def process_cpu_s(pid: int) -> float | None:
    """User + system CPU seconds of process ``pid`` from ``/proc`` (None where there is no ``/proc``)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def timed_gather(aws: list[Any]) -> tuple[list[Any], float, float]:
    """``asyncio.gather(*aws)`` with its wall and CPU seconds, inside the run's collector settings.

    Every row runs under :func:`~mirage_bench.instruments.pipeline.throughput_gc`, as a run's
    pipeline does around its work: without it a pass of the SDK rows could take a full collection
    (~50 ms, the loop stalled) and another not, which the ratios would show as noise.
    """
    from mirage_bench.instruments.pipeline import throughput_gc

    with throughput_gc():
        start, cpu = time.perf_counter(), time.process_time()
        results = await asyncio.gather(*aws)
        return results, time.perf_counter() - start, time.process_time() - cpu


def start_server(latency_s: float) -> tuple[subprocess.Popen[str], str]:
    """Start ``tests/openai_server.py`` in a child process; return it and its base URL."""
    proc = subprocess.Popen(
        [sys.executable, str(REPO / "tests" / "openai_server.py"), "--latency-s", str(latency_s)],
        stdout=subprocess.PIPE, text=True, cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
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


async def raw_pass(base_url: str, latency_s: float, concurrency: int,
                   items: list[tuple[object, str, str]]) -> Pass:
    """The same judge requests through a bare aiohttp session (no SDK, no engine)."""
    import aiohttp

    bodies = sdk_bodies(items)
    semaphore = asyncio.Semaphore(concurrency)
    ok = 0
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector, headers={"Content-Type": "application/json",
                                                                   "Authorization": "Bearer x"}) as session:
        async def one(body: dict[str, object]) -> None:
            nonlocal ok
            url = f"{base_url}/chat/completions"
            async with semaphore, session.post(url, data=json.dumps(body)) as response:
                data = await response.json()
                ok += bool(data["choices"][0]["message"]["content"])

        async with session.get(f"{base_url}/models") as warm_up:  # like the engine's preflight
            await warm_up.read()
        _, wall, cpu = await timed_gather([one(b) for b in bodies])
    return Pass("raw aiohttp", latency_s, wall, len(bodies), ok, cpu)


def sdk_bodies(items: list[tuple[object, str, str]]) -> list[dict[str, object]]:
    """The judge request bodies exactly as the engine's openai backend sends them."""
    from mirage_bench.backends.base import GenerateParams
    from mirage_bench.backends.openai_api import OpenAIBackend
    from mirage_bench.instruments.judge import build_judge_messages
    from mirage_bench.instruments.parsing import JUDGE_OUTPUT_SCHEMA

    backend = OpenAIBackend("bench-judge", base_url="http://unused/v1", api_key="x")
    params = GenerateParams(temperature=0.0, max_tokens=4096, seed=0, json_schema=JUDGE_OUTPUT_SCHEMA)
    return [backend._request(build_judge_messages(p, t, r), params, "json_schema")  # type: ignore[arg-type]
            for p, t, r in items]


async def sdk_pass(base_url: str, latency_s: float, concurrency: int,
                   items: list[tuple[object, str, str]]) -> Pass:
    """The same judge requests through the openai SDK alone (its aiohttp transport, no engine)."""
    import openai

    bodies = sdk_bodies(items)
    sdk = openai.AsyncOpenAI(api_key="x", base_url=base_url, max_retries=0,
                             http_client=openai.DefaultAioHttpClient())
    semaphore = asyncio.Semaphore(concurrency)
    ok = 0

    async def one(body: dict[str, object]) -> None:
        nonlocal ok
        async with semaphore:
            data = await sdk.post("/chat/completions", cast_to=object, body=body)
            ok += bool(data["choices"][0]["message"]["content"])  # type: ignore[index]

    await sdk.models.list()  # one warm-up request, like the engine's preflight
    _, wall, cpu = await timed_gather([one(b) for b in bodies])
    await sdk.close()
    return Pass("openai SDK alone", latency_s, wall, len(bodies), ok, cpu)


async def backend_pass(base_url: str, latency_s: float, concurrency: int,
                       items: list[tuple[object, str, str]]) -> Pass:
    """The same judge requests through ``OpenAIBackend.generate`` alone (no client, cache or judge)."""
    from mirage_bench.backends.base import GenerateParams
    from mirage_bench.backends.openai_api import OpenAIBackend
    from mirage_bench.instruments.judge import build_judge_messages
    from mirage_bench.instruments.parsing import JUDGE_OUTPUT_SCHEMA

    backend = OpenAIBackend("bench-judge", base_url=base_url, api_key="x")
    params = GenerateParams(temperature=0.0, max_tokens=4096, seed=0, json_schema=JUDGE_OUTPUT_SCHEMA)
    messages = [build_judge_messages(p, t, r) for p, t, r in items]  # type: ignore[arg-type]
    semaphore = asyncio.Semaphore(concurrency)
    ok = 0

    async def one(msgs: list[object]) -> None:
        nonlocal ok
        async with semaphore:
            completion = await backend.generate(msgs, params)  # type: ignore[arg-type]
            ok += bool(completion.text)

    await backend.preflight()  # one warm-up request, like the engine's preflight
    _, wall, cpu = await timed_gather([one(m) for m in messages])
    await backend.aclose()
    return Pass("openai backend alone", latency_s, wall, len(messages), ok, cpu)


async def engine_pass(mode: str, base_url: str, latency_s: float, cache_path: Path, concurrency: int,
                      items: list[tuple[object, str, str]]) -> Pass:
    """Judge every item once through a fresh Client and cache (the engine's path)."""
    from mirage_bench.backends.openai_api import OpenAIBackend
    from mirage_bench.client import Client, ClientConfig, ResponseCache
    from mirage_bench.instruments.judge import judge_text
    from mirage_bench.runs import UsageLedger
    from mirage_bench.usage import stage

    backend = OpenAIBackend("bench-judge", base_url=base_url, api_key="x",
                            transport="httpx" if "httpx" in mode else "auto")
    ledger = UsageLedger(cache_path.with_suffix(".usage.log"))
    cache = ResponseCache(cache_path, group_commit=True)  # as a run opens its cache
    client = Client(backend, ClientConfig(concurrency=concurrency, timeout_s=60.0), cache, role="judge",
                    ledger=ledger)

    async def one(persona: object, task: str, response: str) -> object:
        with stage("judge"):  # as the run's pipeline does: usage per stage, journalled per request
            return await judge_text(client, persona, task, response)  # type: ignore[arg-type]

    await client.preflight()  # as a run does before its first real call (it also builds the SDK client)
    judgments, wall, cpu = await timed_gather([one(p, t, r) for p, t, r in items])
    await client.aclose()
    client.cache.close()  # type: ignore[union-attr]
    ledger.close()
    assert ledger.totals["judge"]["backend_calls"] == client.stats.backend_calls
    ok = sum(j.status == "ok" for j in judgments)  # type: ignore[attr-defined]
    return Pass(mode, latency_s, wall, client.stats.backend_calls - client.stats.preflight_calls, ok, cpu)


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1500, help="judge requests per pass")
    parser.add_argument("--latency-s", type=float, nargs="+", default=[0.05, 0.5])
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--modes", nargs="+",
                        default=["raw aiohttp", "openai SDK alone", "openai backend alone", "engine",
                                 "engine, httpx SDK transport"])
    args = parser.parse_args(argv)
    sys.path.insert(0, str(REPO))

    import openai  # noqa: F401 - imported (~1-3 s) before any timer starts

    import mirage_bench.instruments.judge  # noqa: F401

    load_before = os.getloadavg()[0]
    items = workload(args.n)
    rows: list[Pass] = []
    with tempfile.TemporaryDirectory() as tmp:
        for latency in args.latency_s:
            for mode in args.modes:
                # a fresh server per pass: it keeps every request body, and a heap grown by the
                # earlier passes would slow the later rows
                proc, base_url = start_server(latency)
                server_cpu = process_cpu_s(proc.pid)
                try:
                    if mode == "raw aiohttp":
                        row = asyncio.run(raw_pass(base_url, latency, args.concurrency, items))
                    elif mode == "openai SDK alone":
                        row = asyncio.run(sdk_pass(base_url, latency, args.concurrency, items))
                    elif mode == "openai backend alone":
                        row = asyncio.run(backend_pass(base_url, latency, args.concurrency, items))
                    else:
                        cache = Path(tmp) / f"cache-{mode}-{latency}.sqlite"
                        row = asyncio.run(engine_pass(mode, base_url, latency, cache, args.concurrency,
                                                      items))
                    after = process_cpu_s(proc.pid)
                    if server_cpu is not None and after is not None:
                        row.server_cpu_s = after - server_cpu
                    row.load = os.getloadavg()[0]
                    rows.append(row)
                finally:
                    proc.terminate()
                    proc.wait(10)

    print(f"judge stage, N={args.n} requests per pass, concurrency {args.concurrency}, server in its own "
          f"process; {os.cpu_count()} CPUs, 1-min load average {load_before:.1f} before / "
          f"{os.getloadavg()[0]:.1f} after")
    columns = ("mode", "latency ms", "wall s", "requests", "ok", "req/s", "ideal", "vs raw aiohttp",
               "vs SDK alone", "client CPU ms/req", "server CPU ms/req", "load")
    raw = {r.latency_s: r for r in rows if r.mode == "raw aiohttp"}
    sdk = {r.latency_s: r for r in rows if r.mode == "openai SDK alone"}
    table = []
    for r in rows:
        rate = r.requests / r.wall_s
        base = raw.get(r.latency_s)
        ratio = f"{rate / (base.requests / base.wall_s):.2f}" if base else "-"
        floor = sdk.get(r.latency_s)
        vs_sdk = f"{rate / (floor.requests / floor.wall_s):.2f}" if floor else "-"
        table.append((r.mode, f"{r.latency_s * 1000:.0f}", f"{r.wall_s:.2f}", str(r.requests), str(r.ok),
                      f"{rate:.0f}", f"{args.concurrency / r.latency_s:.0f}", ratio, vs_sdk,
                      f"{1000 * r.cpu_s / r.requests:.2f}",
                      "-" if r.server_cpu_s is None else f"{1000 * r.server_cpu_s / r.requests:.2f}",
                      f"{r.load:.1f}"))
    widths = [max(len(col), *(len(row[i]) for row in table)) for i, col in enumerate(columns)]
    print("| " + " | ".join(col.ljust(w) for col, w in zip(columns, widths, strict=True)) + " |")
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for row in table:
        print("| " + " | ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)) + " |")


if __name__ == "__main__":
    main()
