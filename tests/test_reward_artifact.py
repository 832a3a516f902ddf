"""Saving, reloading and applying a trained memory-aware reward model."""

from __future__ import annotations

import asyncio
import json

import numpy as np
import pytest

from mirage_bench.reward import artifact as artifact_mod
from mirage_bench.reward.artifact import ArtifactError, TrainedRewardModel, fit_full
from mirage_bench.reward.data import clear_pairs
from mirage_bench.reward.features import build_features
from mirage_bench.reward.model import RubricFeaturizer
from mirage_bench.reward.synthetic import synthetic_client, synthetic_pairs


@pytest.fixture(scope="module")
def trained():
    pairs = clear_pairs(synthetic_pairs(10, 8, seed=2))
    client = synthetic_client()
    model = asyncio.run(fit_full(pairs, RubricFeaturizer(client, passes=2, per_pass=5), judge="synthetic"))
    return model, pairs, client


def test_saved_model_reloads_and_scores_new_pairs(trained, tmp_path):
    model, _, client = trained
    path = model.save(tmp_path)
    saved = json.loads(path.read_text())
    assert {"rubric", "coef", "scaler_mean", "scaler_scale", "impute_medians", "prompt_sha256", "C"} <= set(
        saved
    )
    assert set(saved["prompt_sha256"]) == {
        "reward_rubric_induction",
        "reward_rubric_consolidation",
        "reward_rubric_scoring",
    }
    assert model.pair_sources == ["synthetic"] and model.C in (0.003, 0.01, 0.03, 0.1, 0.3)
    loaded = TrainedRewardModel.load(tmp_path)
    assert loaded == model
    new = clear_pairs(synthetic_pairs(4, 6, seed=99))
    scores = asyncio.run(loaded.score_pairs(new, client))
    feats = asyncio.run(build_features(client, loaded.rubric, new))
    assert np.allclose([s.p_memory for s in scores], model.predict_proba(feats.X))
    y = np.array([p.human_prefers_memory for p in new])
    assert ((np.array([s.p_memory for s in scores]) > 0.5) == y).mean() > 0.7


def test_top_coefficients_mark_memory_features(trained):
    model, *_ = trained
    top = model.top_coefficients(3)
    assert len(top) == 3 and abs(top[0][1]) >= abs(top[1][1]) >= abs(top[2][1])
    assert top[0][0] == "rubric:memory_relevance" and top[0][2] is True and top[0][1] > 0


def test_changed_prompt_is_refused(trained, tmp_path, monkeypatch):
    model, *_ = trained
    model.save(tmp_path)
    real = artifact_mod.prompt_sha256s
    monkeypatch.setattr(
        artifact_mod,
        "prompt_sha256s",
        lambda names: {n: ("0" * 64 if n == "reward_rubric_scoring" else v) for n, v in real(names).items()},
    )
    with pytest.raises(ArtifactError, match="reward_rubric_scoring"):
        TrainedRewardModel.load(tmp_path)
    assert TrainedRewardModel.load(tmp_path, check_prompts=False).coef == model.coef


def test_bad_artifacts_get_clear_errors(trained, tmp_path):
    model, *_ = trained
    with pytest.raises(ArtifactError, match="no saved reward model"):
        TrainedRewardModel.load(tmp_path / "nothing")
    (tmp_path / "reward_model.json").write_text("{}")
    with pytest.raises(ArtifactError, match="not a reward model"):
        TrainedRewardModel.load(tmp_path)
    with pytest.raises(ArtifactError, match="feature columns"):
        model.predict_proba(np.zeros((2, 3)))


def test_judge_failures_are_recorded_failures_never_invented(trained):
    model, pairs, _ = trained
    broken = synthetic_client(fault_rate=1.0, fault_kinds=("malformed_json",))
    scores = asyncio.run(model.score_pairs(pairs[:3], broken))
    assert all(s.details["imputed_features"] for s in scores)
    # no rubric score at all: the pair is a failure with its reason, not a score from training medians
    assert all(s.p_memory is None and s.error.startswith("rubric scoring failed: ") for s in scores)
    assert all("parse_failure" in s.error for s in scores)
