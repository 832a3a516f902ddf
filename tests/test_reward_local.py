"""The reward train / score / evaluate cycle with the embedded ``local`` model as a SMOKE TEST.

Slow: the base Gemma 3 270M loads once per process (~50 s on an idle 2-core machine; it is shared
with the other ``local`` tests of the same run) and generates ~9 tok/s, so the configuration is
minimal: 2 SYNTHETIC participants x 2 pairs, one induction pass over 2 examples, the rubric capped
at 2 dimensions, 16 output tokens per call, and the direct judge on one pair (two calls, both
orders); ``benchmarks/bench_reward_local.py`` times the same cycle stage by stage. The base
model cannot write the JSON answers at that length, so rubric induction fails and (with
``--on-rubric-failure response-only``) the model is fit on response features, with the reason
recorded. What is tested is that the real local path runs end to end, that every failure is
recorded rather than raised or filled in, and that every output
is flagged ``smoke_test``. Its numbers are never results.
"""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from mirage_bench.reward.data import write_jsonl
from mirage_bench.reward.synthetic import synthetic_pairs
from tests.local_model import LOCAL_MODEL_MARKS

pytestmark = LOCAL_MODEL_MARKS

#: Seed of ``synthetic_pairs(2, 2, tie_rate=0)`` giving each participant one pair of each class, so the
#: inner GroupKFold(2) of the full-data fit trains on both classes.
SMOKE_SEED = 1


def _ok(args: list[str]) -> str:
    from mirage_bench.cli import app

    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    return result.output


def test_local_smoke_cycle_is_flagged_and_records_failures(tmp_path: Path) -> None:
    pairs = synthetic_pairs(2, 2, seed=SMOKE_SEED, tie_rate=0.0)
    for person in {p.participant_id for p in pairs}:
        assert {p.human_prefers_memory for p in pairs if p.participant_id == person} == {True, False}
    data = write_jsonl(tmp_path / "synthetic_smoke_pairs.jsonl", pairs)
    model = tmp_path / "model"
    out = _ok([
        "reward", "train", "--pairs", str(data), "--judge", "local", "--out", str(model), "--no-cv",
        "--subset", "strict", "--inner-folds", "2", "--passes", "1", "--per-pass", "2",
        "--dims-per-pass", "2", "--max-dims", "2", "--max-tokens", "16",
        "--on-rubric-failure", "response-only", "--concurrency", "1",
    ])
    assert "SMOKE TEST" in out
    saved = json.loads((model / "reward_model.json").read_text())
    assert saved["smoke_test"] is True and saved["judge"] == "local"
    assert saved["pair_sources"] == ["synthetic"]
    if saved["rubric"] is None:  # the expected outcome for a base model at 16 tokens: the reason is kept
        assert "rubric induction failed" in saved["rubric_error"]
    else:
        assert len(saved["rubric"]["dimensions"]) <= 2

    _ok(["reward", "score", "--pairs", str(data), "--method", "model", "--model", str(model),
         "--judge", "local", "--max-tokens", "16", "--out", str(tmp_path / "model.jsonl"),
         "--allow-in-sample"])  # its own training pairs: refused without the flag, flagged with it
    shortest = min(pairs, key=lambda p: len(p.response_memory) + len(p.response_no_memory))
    one = write_jsonl(tmp_path / "synthetic_smoke_one_pair.jsonl", [shortest])  # 2 calls: both orders
    _ok(["reward", "score", "--pairs", str(one), "--method", "direct-judge", "--judge", "local",
         "--max-tokens", "16", "--concurrency", "1", "--out", str(tmp_path / "direct.jsonl")])
    for name in ("model.jsonl", "direct.jsonl"):
        for line in (tmp_path / name).read_text().splitlines():
            record = json.loads(line)
            assert record["details"].get("smoke_test") is True
            assert record["p_memory"] is not None or record["error"]  # a failure says why, never a made-up p

    store = tmp_path / "store"
    out = _ok(["reward", "evaluate", "--pairs", str(data), "--subset", "strict",
               "--scores", str(tmp_path / "model.jsonl"), "--scores", str(tmp_path / "direct.jsonl"),
               "--out-dir", str(store)])
    assert out.startswith("SMOKE TEST") and "not results" in out
    names = [p.name for p in store.iterdir()]
    assert all(n.startswith("smoke_") and "synthetic_" in n for n in names)
    in_sample = [n for n in names if "insample_" in n]
    assert in_sample == ["smoke_insample_synthetic_memory_aware_rm_full_fit.jsonl"]
