"""A trained memory-aware reward model on disk: rubric, weights, standardization, prompt sha256s.

The file ``reward_model.json`` holds plain numbers (no pickle): the imputation medians, the
scaler's means and scales, the logistic coefficients on standardized features, the intercept,
the chosen C, the rubric, the sha256 of each prompt template the features depend on, and the
sources of the training pairs (so a model trained on synthetic fixtures says so). Loading it
and scoring new pairs re-runs the rubric judge with the saved rubric. It also lists the
training participants and pair ids, so that scoring a pair the model (or its rubric) was fitted
on, or a pair of a training participant, is caught (:meth:`TrainedRewardModel.in_sample`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from pydantic import BaseModel, Field

from mirage_bench.reward.data import PreferencePair, ScoreRecord
from mirage_bench.reward.features import FeatureSet, build_features
from mirage_bench.reward.model import Featurizer, fit_inner_cv, labels_and_groups
from mirage_bench.reward.rubric import CONSOLIDATION_TEMPLATE, INDUCTION_TEMPLATE, SCORING_TEMPLATE, Rubric

if TYPE_CHECKING:
    from mirage_bench.backends.base import GenerateParams
    from mirage_bench.client import Client

ARTIFACT_FILE = "reward_model.json"
ARTIFACT_SCHEMA_VERSION = 1
METHOD = "memory_aware_rm"


class ArtifactError(ValueError):
    """A saved reward model is missing, malformed, or was made with different prompts."""


def prompt_sha256s(names: Sequence[str]) -> dict[str, str]:
    """The current sha256 of each named prompt template."""
    from mirage_bench.prompts import load_template

    return {n: load_template(n).sha256 for n in names}


class TrainedRewardModel(BaseModel):
    """A fitted aggregation model and everything needed to apply it to new pairs."""

    schema_version: int = ARTIFACT_SCHEMA_VERSION
    method: str = METHOD
    rubric: Rubric | None
    feature_names: list[str]
    impute_medians: list[float]
    scaler_mean: list[float]
    scaler_scale: list[float]
    coef: list[float]
    intercept: float
    C: float
    prompt_sha256: dict[str, str] = Field(default_factory=dict)
    judge: str | None = None
    #: True when the rubric judge was a smoke-test model (e.g. ``local``): weights mean nothing.
    smoke_test: bool = False
    #: Why the model has no rubric although a judge was given (induction failed; response features only).
    rubric_error: str | None = None
    n_pairs: int
    n_participants: int
    pair_sources: list[str]
    seed: int = 0
    package_version: str = ""
    #: Participants and pairs the full-data fit (and its rubric induction) saw; ``None`` in models
    #: saved before these were recorded (in-sample scoring cannot be detected for them).
    train_participant_ids: list[str] | None = None
    train_pair_ids: list[str] | None = None

    def in_sample(self, pairs: Sequence[PreferencePair]) -> list[str]:
        """The ids of ``pairs`` that are training pairs or come from a training participant.

        Raises :class:`ArtifactError` when the model does not record its training ids (saved by an
        older version): then in-sample scoring cannot be ruled out.
        """
        if self.train_pair_ids is None or self.train_participant_ids is None:
            raise ArtifactError(
                "this model does not record its training participants and pairs (saved by an older "
                "version); retrain it to score with an in-sample check"
            )
        pair_ids, people = set(self.train_pair_ids), set(self.train_participant_ids)
        return [p.pair_id for p in pairs if p.pair_id in pair_ids or p.participant_id in people]

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        """P(memory response preferred) for feature rows ``X`` (same columns as training)."""
        X = np.asarray(X, dtype=float)
        if X.ndim != 2 or X.shape[1] != len(self.feature_names):
            raise ArtifactError(f"expected {len(self.feature_names)} feature columns, got {X.shape}")
        X = np.where(np.isnan(X), np.asarray(self.impute_medians), X)
        Z = (X - np.asarray(self.scaler_mean)) / np.asarray(self.scaler_scale)
        logit = Z @ np.asarray(self.coef) + self.intercept
        return 1.0 / (1.0 + np.exp(-logit))

    def top_coefficients(self, k: int = 5) -> list[tuple[str, float, bool]]:
        """The ``k`` largest standardized coefficients: (feature, coefficient, memory-dependent)."""
        memory_keys = (
            {f"rubric:{d.key}" for d in self.rubric.dimensions if d.memory_dependent}
            if self.rubric
            else set()
        )
        order = sorted(range(len(self.coef)), key=lambda i: -abs(self.coef[i]))[:k]
        return [(self.feature_names[i], self.coef[i], self.feature_names[i] in memory_keys) for i in order]

    def save(self, out_dir: str | Path) -> Path:
        """Write ``reward_model.json`` under ``out_dir``."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        path = out / ARTIFACT_FILE
        path.write_text(self.model_dump_json(indent=2) + "\n", encoding="utf-8")
        return path

    @classmethod
    def load(cls, path: str | Path, *, check_prompts: bool = True) -> TrainedRewardModel:
        """Load a saved model (a directory or the JSON file); refuse changed prompt templates."""
        path = Path(path)
        if path.is_dir():
            path = path / ARTIFACT_FILE
        if not path.is_file():
            raise ArtifactError(f"{path}: no saved reward model")
        try:
            model = cls.model_validate(json.loads(path.read_text(encoding="utf-8")))
        except (json.JSONDecodeError, ValueError) as exc:
            raise ArtifactError(f"{path}: not a reward model: {exc}") from exc
        if model.schema_version != ARTIFACT_SCHEMA_VERSION:
            raise ArtifactError(f"{path}: schema_version {model.schema_version} is not supported")
        if check_prompts and model.prompt_sha256:
            current = prompt_sha256s(list(model.prompt_sha256))
            changed = [n for n, sha in model.prompt_sha256.items() if current[n] != sha]
            if changed:
                raise ArtifactError(
                    f"{path}: prompt templates changed since training: {changed} "
                    "(retrain, or pass check_prompts=False to score anyway)"
                )
        return model

    async def score_pairs(
        self, pairs: Sequence[PreferencePair], client: Client | None, *, params: GenerateParams | None = None
    ) -> list[ScoreRecord]:
        """Score new pairs: rubric judge (saved rubric) + deterministic features → probability.

        A pair whose rubric scoring failed (the judge gave no score, so every rubric feature is
        missing) is a recorded failure (``p_memory`` null, ``error`` set), not a prediction made
        from the training medians.
        """
        feats = await build_features(client, self.rubric, pairs, params=params)
        if feats.names != self.feature_names:
            raise ArtifactError("feature columns differ from the trained model's")
        probs = self.predict_proba(feats.X)
        failed = np.isnan(feats.X).any(axis=1)
        smoke = {"smoke_test": True} if self.smoke_test else {}
        why: dict[str, list[str]] = {}
        for err in feats.errors:
            pid, _, msg = err.partition(": ")
            why.setdefault(pid, []).append(msg)
        return [
            ScoreRecord(
                pair_id=p.pair_id,
                method=self.method,
                p_memory=float(probs[i]),
                details={"imputed_features": False, **smoke},
            )
            if not failed[i]
            else ScoreRecord(
                pair_id=p.pair_id,
                method=self.method,
                error="rubric scoring failed: " + ("; ".join(why.get(p.pair_id, [])) or "no scores"),
                details={"imputed_features": True, **smoke},
            )
            for i, p in enumerate(pairs)
        ]


def from_pipeline(
    pipeline: object,
    feats: FeatureSet,
    rubric: Rubric | None,
    C: float,
    *,
    pairs: Sequence[PreferencePair],
    judge: str | None,
    seed: int,
) -> TrainedRewardModel:
    """Turn a fitted :func:`~mirage_bench.reward.model.make_pipeline` into a saveable model."""
    from mirage_bench import __version__

    steps = pipeline.named_steps  # type: ignore[attr-defined]
    logreg = steps["logreg"]
    templates = [INDUCTION_TEMPLATE, CONSOLIDATION_TEMPLATE, SCORING_TEMPLATE] if rubric else []
    return TrainedRewardModel(
        rubric=rubric,
        feature_names=feats.names,
        impute_medians=[float(v) for v in steps["impute"].statistics_],
        scaler_mean=[float(v) for v in steps["scale"].mean_],
        scaler_scale=[float(v) for v in steps["scale"].scale_],
        coef=[float(v) for v in logreg.coef_[0]],
        intercept=float(logreg.intercept_[0]),
        C=C,
        prompt_sha256=prompt_sha256s(templates) if templates else {},
        judge=judge,
        n_pairs=len(pairs),
        n_participants=len({p.participant_id for p in pairs}),
        pair_sources=sorted({p.source for p in pairs}),
        seed=seed,
        package_version=__version__,
        train_participant_ids=sorted({p.participant_id for p in pairs}),
        train_pair_ids=sorted(p.pair_id for p in pairs),
    )


async def fit_full(
    pairs: Sequence[PreferencePair],
    featurizer: Featurizer,
    *,
    judge: str | None = None,
    inner_splits: int = 4,
    seed: int = 0,
) -> TrainedRewardModel:
    """The descriptive full-data fit (Table 4): rubric from all pairs, C by grouped inner CV."""
    pairs = list(pairs)
    y, groups = labels_and_groups(pairs)
    feats, rubric = await featurizer.fold_features(pairs, [], seed=seed)
    X = feats.rows([p.pair_id for p in pairs])
    pipeline, C = fit_inner_cv(X, y, groups, inner_splits=inner_splits)
    model = from_pipeline(pipeline, feats, rubric, C, pairs=pairs, judge=judge, seed=seed)
    model.rubric_error = feats.rubric_error
    check = model.predict_proba(X)
    expected = pipeline.predict_proba(X)[:, 1]
    if not np.allclose(check, expected, atol=1e-9) or any(math.isnan(v) for v in check):
        raise ArtifactError("saved parameters do not reproduce the fitted pipeline")
    return model
