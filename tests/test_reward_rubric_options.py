"""Rubric cost cap and the explicit response-only fallback when rubric induction fails (SYNTHETIC pairs)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mirage_bench.backends.scripted import ScriptedBackend
from mirage_bench.client import Client
from mirage_bench.reward.artifact import fit_full
from mirage_bench.reward.data import write_jsonl
from mirage_bench.reward.evaluation import evaluate_scores, write_scored_sets
from mirage_bench.reward.model import RubricFeaturizer, cross_validate
from mirage_bench.reward.rubric import RubricError, induce_rubric
from mirage_bench.reward.synthetic import synthetic_client, synthetic_pairs


@pytest.fixture(scope="module")
def pairs():  # noqa: ANN201
    return [p for p in synthetic_pairs(6, 6, seed=4) if p.human_prefers_memory is not None]


def _not_json_client() -> Client:
    """A judge that never writes JSON (like the base ``local`` model with a small token cap)."""
    return Client(ScriptedBackend(lambda messages, params: "Sure! Some ideas", name="scripted:prose"))


def test_max_dimensions_caps_the_consolidated_rubric(pairs) -> None:
    full = asyncio.run(induce_rubric(synthetic_client(), pairs, passes=2, per_pass=4))
    assert len(full.dimensions) > 2 and full.capped_from is None
    capped = asyncio.run(induce_rubric(synthetic_client(), pairs, passes=2, per_pass=4, max_dimensions=2))
    assert capped.keys == full.keys[:2] and capped.capped_from == len(full.dimensions)
    with pytest.raises(ValueError, match="max_dimensions"):
        asyncio.run(induce_rubric(synthetic_client(), pairs, max_dimensions=0))


def test_failed_induction_raises_by_default_and_falls_back_only_when_asked(pairs) -> None:
    with pytest.raises(RubricError, match="parse_failure"):
        asyncio.run(cross_validate(pairs, RubricFeaturizer(_not_json_client(), passes=1), n_splits=3,
                                   n_shuffles=1, inner_splits=2))
    fallback = RubricFeaturizer(_not_json_client(), passes=1, on_failure="response_only")
    res = asyncio.run(cross_validate(pairs, fallback, n_splits=3, n_shuffles=1, inner_splits=2,
                                     blocks=("all", "memory")))
    assert all(f.rubric is None and "rubric induction failed" in (f.rubric_error or "") for f in res.folds)
    assert set(res.scores) == {"memory_aware_rm"}  # no memory-dependent features to fit a memory block on
    model = asyncio.run(fit_full(pairs, fallback, judge="scripted:prose", inner_splits=2))
    assert model.rubric is None and model.rubric_error
    assert all(n.startswith("response:") for n in model.feature_names)
    with pytest.raises(ValueError, match="on_failure"):
        RubricFeaturizer(_not_json_client(), on_failure="ignore")


def test_smoke_scores_are_flagged_in_tables_and_file_names(pairs, tmp_path: Path) -> None:
    from mirage_bench.reward.data import ScoreRecord

    scores = {
        "direct_judge_vote": [ScoreRecord(pair_id=p.pair_id, method="direct_judge_vote", p_memory=0.7,
                                          details={"smoke_test": True}) for p in pairs],
        "other": [ScoreRecord(pair_id=p.pair_id, method="other", p_memory=0.4) for p in pairs],
    }
    report = evaluate_scores(pairs, scores, subset="strict")
    assert report.smoke_methods == ["direct_judge_vote"] and report.format().startswith("SMOKE TEST")
    assert report.table3.loc["direct_judge_vote", "smoke_test"]
    assert not report.table3.loc["other", "smoke_test"]
    names = sorted(p.name for p in write_scored_sets(pairs, scores, tmp_path))
    assert names == ["smoke_synthetic_direct_judge_vote.jsonl", "synthetic_other.jsonl"]


def test_train_cli_options_reach_the_featurizer(pairs, tmp_path: Path) -> None:
    from mirage_bench.cli import app

    data = tmp_path / "synthetic_pairs.jsonl"
    write_jsonl(data, pairs)
    result = CliRunner().invoke(app, [
        "reward", "train", "--pairs", str(data), "--judge", "synthetic", "--out", str(tmp_path / "m"),
        "--no-cv", "--subset", "strict", "--inner-folds", "2", "--passes", "1", "--per-pass", "4",
        "--max-dims", "2", "--max-tokens", "64",
    ])
    assert result.exit_code == 0, result.output
    saved = json.loads((tmp_path / "m" / "reward_model.json").read_text())
    assert len(saved["rubric"]["dimensions"]) == 2 and saved["rubric"]["capped_from"] > 2
    bad = CliRunner().invoke(app, ["reward", "train", "--pairs", str(data), "--out", str(tmp_path / "n"),
                                   "--on-rubric-failure", "ignore"])
    assert bad.exit_code == 2 and "fail or response-only" in bad.output
