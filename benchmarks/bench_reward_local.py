"""Time the reward SMOKE-TEST cycle with the embedded ``local`` model, stage by stage, in one process.

The configuration is the one of ``tests/test_reward_local.py``: 2 SYNTHETIC participants x 2 pairs,
``train --judge local --no-cv --passes 1 --per-pass 2 --max-dims 2 --max-tokens 16``, ``score``
with the trained model and with the direct judge (16 tokens; on the ``--direct-pairs`` shortest
pairs, default 1 as in the test), then ``evaluate``. The model load
is timed on its own (one 1-token call) so that the cycle's time is measured with the model loaded,
as in a test run where another ``local`` test loaded it first. The numbers it prints are timings,
never results: the base model's answers are meaningless.

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/bench_reward_local.py [--max-tokens 16] [--direct-pairs 1]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from pathlib import Path

from _timings import print_timings
from typer.testing import CliRunner

from mirage_bench.backends.base import GenerateParams
from mirage_bench.cli import app
from mirage_bench.reward.data import write_jsonl
from mirage_bench.reward.llm import open_client
from mirage_bench.reward.synthetic import synthetic_pairs
from mirage_bench.types import Message


def _stage(rows: list[tuple[str, float, str]], name: str, args: list[str]) -> None:
    started = time.perf_counter()
    result = CliRunner().invoke(app, args)
    seconds = time.perf_counter() - started
    if result.exit_code != 0:
        raise SystemExit(f"{name} failed: {result.output}")
    last = [line for line in result.output.splitlines() if line.strip()][-1]
    rows.append((name, seconds, last[:70]))


def main() -> None:
    """Print one row per stage: wall seconds and the command's last output line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-tokens", default="16")
    parser.add_argument("--direct-pairs", type=int, default=1, help="direct-judge pairs (2 calls each)")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    tmp = Path(tempfile.mkdtemp(prefix="bench_reward_local_"))
    pairs = synthetic_pairs(2, 2, seed=1, tie_rate=0.0)
    data = write_jsonl(tmp / "synthetic_smoke_pairs.jsonl", pairs)
    by_length = sorted(pairs, key=lambda p: len(p.response_memory) + len(p.response_no_memory))
    direct = write_jsonl(tmp / "synthetic_smoke_direct_pairs.jsonl", by_length[: args.direct_pairs])
    rows: list[tuple[str, float, str]] = []
    started = time.perf_counter()
    client = open_client("local")
    asyncio.run(client.call([Message(role="user", content="Hi")], GenerateParams(max_tokens=1)))
    rows.append(("load local model (1-token call)", time.perf_counter() - started, ""))
    mt = args.max_tokens
    _stage(rows, "train (1 induction call)", [
        "reward", "train", "--pairs", str(data), "--judge", "local", "--out", str(tmp / "m"), "--no-cv",
        "--subset", "strict", "--inner-folds", "2", "--passes", "1", "--per-pass", "2",
        "--dims-per-pass", "2", "--max-dims", "2", "--max-tokens", mt,
        "--on-rubric-failure", "response-only", "--concurrency", "1",
    ])
    _stage(rows, "score --method model", [
        "reward", "score", "--pairs", str(data), "--method", "model", "--model", str(tmp / "m"),
        "--judge", "local", "--max-tokens", mt, "--out", str(tmp / "model.jsonl"),
        "--allow-in-sample",  # its own training pairs (a timing, not a result)
    ])
    _stage(rows, f"score --method direct-judge ({2 * len(pairs[: args.direct_pairs])} calls)", [
        "reward", "score", "--pairs", str(direct), "--method", "direct-judge", "--judge", "local",
        "--max-tokens", mt, "--concurrency", "1", "--out", str(tmp / "direct.jsonl"),
    ])
    _stage(rows, "evaluate", [
        "reward", "evaluate", "--pairs", str(data), "--subset", "strict",
        "--scores", str(tmp / "model.jsonl"), "--scores", str(tmp / "direct.jsonl"),
        "--out-dir", str(tmp / "store"),
    ])
    cycle = sum(s for name, s, _ in rows[1:])
    print(f"reward SMOKE-TEST cycle with local (max_tokens={mt}); outputs in {tmp}")
    print("timings only: the base model's answers are not results")
    print_timings([*rows, ("cycle after load", cycle, "")], first="stage", last="last output line", digits=1)


if __name__ == "__main__":
    main()
