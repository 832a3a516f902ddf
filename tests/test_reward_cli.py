"""``mirage-bench reward ...``: the offline train / score / evaluate cycle on SYNTHETIC fixtures."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from mirage_bench.cli import app

FIX = Path(__file__).parent / "fixtures" / "reward"
runner = CliRunner()


def _ok(args: list[str]) -> str:
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    return result.output


def test_train_score_evaluate_cycle(tmp_path):
    pairs = str(FIX / "synthetic_pairs.jsonl")
    out = _ok(
        [
            "reward",
            "train",
            "--pairs",
            pairs,
            "--judge",
            "synthetic",
            "--out",
            str(tmp_path / "m"),
            "--shuffles",
            "1",
            "--passes",
            "2",
            "--per-pass",
            "5",
        ]
    )
    assert "Table 3" in out and "Table 5" in out and "Table 4" in out and "rubric:memory_relevance" in out
    assert (tmp_path / "m" / "reward_model.json").is_file() and (tmp_path / "m" / "cv_folds.json").is_file()
    _ok(
        [
            "reward",
            "score",
            "--pairs",
            pairs,
            "--method",
            "direct-judge",
            "--judge",
            "synthetic",
            "--out",
            str(tmp_path / "direct.jsonl"),
        ]
    )
    out = _ok(
        [
            "reward",
            "score",
            "--pairs",
            pairs,
            "--method",
            "model",
            "--model",
            str(tmp_path / "m"),
            "--judge",
            "synthetic",
            "--out",
            str(tmp_path / "model.jsonl"),
            "--allow-in-sample",  # these are its training pairs: refused without the flag (issue 17)
        ]
    )
    assert "0 failed" in out and "WARNING: IN-SAMPLE" in out
    store = tmp_path / "store"
    out = _ok(
        [
            "reward",
            "evaluate",
            "--pairs",
            pairs,
            "--scores",
            str(tmp_path / "m" / "cv_scores.jsonl"),
            "--scores",
            str(tmp_path / "direct.jsonl"),
            "--out-dir",
            str(store),
            "--prefix",
            "synthetic_",
        ]
    )
    assert "direct_judge_vote" in out and "order_agreement" in out and "majority (always" in out
    row = json.loads((store / "smoke_synthetic_memory_aware_rm.jsonl").read_text().splitlines()[0])
    assert set(row) >= {"pair_id", "generator", "p_memory", "human_prefers_memory", "strength"}
    assert row["strength"] == "much"


def test_response_features_only_and_clear_errors(tmp_path):
    pairs = str(FIX / "synthetic_pairs.jsonl")
    out = _ok(["reward", "train", "--pairs", pairs, "--out", str(tmp_path / "m"), "--no-cv"])
    assert "response:" in out
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"pair_id": "x"}\n')
    result = runner.invoke(app, ["reward", "train", "--pairs", str(bad), "--out", str(tmp_path / "n")])
    assert result.exit_code == 2 and "bad.jsonl:1: invalid PreferencePair" in result.output
    result = runner.invoke(
        app, ["reward", "score", "--pairs", pairs, "--method", "seq-rm", "--out", str(tmp_path / "s.jsonl")]
    )
    assert result.exit_code == 2 and "needs --rm" in result.output
    result = runner.invoke(app, ["reward", "evaluate", "--pairs", pairs, "--scores", str(bad)])
    assert result.exit_code == 2 and "bad.jsonl:1" in result.output


def test_synthetic_fixture_command(tmp_path):
    _ok(
        ["reward", "synthetic", "--out", str(tmp_path), "--participants", "3", "--pairs-per-participant", "2"]
    )
    first = json.loads((tmp_path / "synthetic_pairs.jsonl").read_text().splitlines()[0])
    assert first["source"] == "synthetic"


def test_scripted_synthetic_judge_is_flagged_smoke_even_on_non_synthetic_pairs(tmp_path):
    """The ``synthetic`` scripted test double must never yield scores that pass for results."""
    from mirage_bench.reward.data import load_pairs, write_jsonl

    fixture = load_pairs(FIX / "synthetic_pairs.jsonl")
    pairs = [p.model_copy(update={"source": "dataset:real"}) for p in fixture]
    data = write_jsonl(tmp_path / "pairs.jsonl", pairs)
    result = runner.invoke(app, ["reward", "score", "--pairs", str(data), "--method", "direct-judge",
                                 "--judge", "synthetic", "--out", str(tmp_path / "s.jsonl")])
    assert result.exit_code == 0, result.output
    assert "SMOKE TEST" in result.output
    scored = [json.loads(line) for line in (tmp_path / "s.jsonl").read_text().splitlines()]
    assert scored and all(r["details"].get("smoke_test") is True for r in scored)
    out = _ok(["reward", "evaluate", "--pairs", str(data), "--scores", str(tmp_path / "s.jsonl"),
               "--out-dir", str(tmp_path / "store")])
    assert out.startswith("SMOKE TEST")
    assert sorted(p.name for p in (tmp_path / "store").iterdir()) == [
        "smoke_direct_judge_single.jsonl", "smoke_direct_judge_vote.jsonl"]
