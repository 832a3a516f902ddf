"""The learned aggregation: standardized L2 logistic regression with participant-grouped CV (§4.2, §5).

* :func:`make_pipeline` — ``SimpleImputer → StandardScaler → LogisticRegression`` (L2), so that
  imputation and standardization are fitted on training rows only.
* :func:`fit_inner_cv` — C from :data:`C_GRID` by inner participant-grouped k-fold CV (accuracy).
* :func:`cross_validate` — outer participant-grouped k-fold CV repeated over shuffles; a
  *featurizer* builds each fold's features from that fold's training pairs only (rubric
  induction happens inside it), and each comparison's held-out predictions are averaged over
  the repeats. Feature-block ablations (memory-only, response-only) reuse the fold's features.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

import numpy as np

from mirage_bench.reward.data import PreferencePair, ScoreRecord
from mirage_bench.reward.features import FeatureSet, build_features
from mirage_bench.reward.rubric import Rubric, RubricError, induce_rubric

if TYPE_CHECKING:
    from sklearn.pipeline import Pipeline

    from mirage_bench.backends.base import GenerateParams
    from mirage_bench.client import Client

#: The L2 strengths searched in every fold (§5).
C_GRID: tuple[float, ...] = (0.003, 0.01, 0.03, 0.1, 0.3)
#: Method name of the full model and of its two feature-block ablations.
BLOCK_METHODS: dict[str, str] = {
    "all": "memory_aware_rm",
    "memory": "memory_aware_rm_memory_only",
    "response": "memory_aware_rm_response_only",
}


class CVError(ValueError):
    """The data cannot support the requested cross-validation (too few participants, one class)."""


def make_pipeline(C: float = 1.0) -> Pipeline:
    """The fold-safe model: median imputation, standardization, L2 logistic regression."""
    from sklearn.impute import SimpleImputer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler

    return Pipeline(
        [
            ("impute", SimpleImputer(strategy="median", keep_empty_features=True)),
            ("scale", StandardScaler()),
            ("logreg", LogisticRegression(C=C, solver="lbfgs", max_iter=2000)),
        ]
    )


def fit_inner_cv(
    X: np.ndarray,
    y: np.ndarray,
    groups: np.ndarray,
    *,
    inner_splits: int = 4,
    c_grid: Sequence[float] = C_GRID,
) -> tuple[Pipeline, float]:
    """Choose C by inner participant-grouped CV (accuracy), refit on all of ``X``; return (pipeline, C).

    ``GridSearchCV`` over :func:`make_pipeline` with ``GroupKFold(inner_splits)``; ties between Cs go
    to the first (smallest) C of ``c_grid``.
    """
    from sklearn.model_selection import GridSearchCV, GroupKFold
    from threadpoolctl import threadpool_limits

    n_groups = len(np.unique(groups))
    if len(np.unique(y)) < 2:
        raise CVError("training rows hold a single class; logistic regression needs both")
    if n_groups < inner_splits:
        raise CVError(f"{n_groups} training participants < {inner_splits} inner folds")
    search = GridSearchCV(
        make_pipeline(),
        {"logreg__C": list(c_grid)},
        scoring="accuracy",
        cv=GroupKFold(n_splits=inner_splits),
        refit=True,
        error_score="raise",
    )
    # Tiny problems: BLAS/OpenMP thread start-up costs more than the fit itself, so fit single-threaded
    # (benchmarks/bench_reward_cv.py measures the difference).
    with threadpool_limits(limits=1):
        search.fit(X, y, groups=groups)
    return search.best_estimator_, float(search.best_params_["logreg__C"])


class Featurizer(Protocol):
    """Builds one fold's features; must look at labels of ``train`` pairs only."""

    async def fold_features(
        self, train: Sequence[PreferencePair], test: Sequence[PreferencePair], *, seed: int
    ) -> tuple[FeatureSet, Rubric | None]:
        """Features for ``train`` + ``test`` pairs and the rubric used (if any)."""
        ...


@dataclass
class FixedFeaturizer:
    """Uses a precomputed :class:`FeatureSet` (deterministic features, or a test matrix)."""

    features: FeatureSet

    async def fold_features(
        self, train: Sequence[PreferencePair], test: Sequence[PreferencePair], *, seed: int
    ) -> tuple[FeatureSet, Rubric | None]:
        """Return the fixed features (labels are never consulted)."""
        return self.features, None


@dataclass
class RubricFeaturizer:
    """Induces a rubric from the fold's training pairs, then scores every pair of the fold with it.

    ``on_failure``: ``"raise"`` (default) lets a failed induction (:class:`RubricError`) stop the
    run; ``"response_only"`` fits that fold on the deterministic response features alone and
    records why in :attr:`FeatureSet.rubric_error` (used for smoke tests with a model that cannot
    write the JSON answers; never silently).
    """

    client: Client
    passes: int = 5
    per_pass: int = 10
    dims_per_pass: int = 10
    params: GenerateParams | None = None
    max_dimensions: int | None = None
    on_failure: str = "raise"

    def __post_init__(self) -> None:
        if self.on_failure not in ("raise", "response_only"):
            raise ValueError(f"on_failure must be 'raise' or 'response_only', not {self.on_failure!r}")

    async def fold_features(
        self, train: Sequence[PreferencePair], test: Sequence[PreferencePair], *, seed: int
    ) -> tuple[FeatureSet, Rubric | None]:
        """Induce on ``train`` only; score ``train`` and ``test`` with that rubric."""
        try:
            rubric = await induce_rubric(
                self.client,
                train,
                passes=self.passes,
                per_pass=self.per_pass,
                dims_per_pass=self.dims_per_pass,
                seed=seed,
                params=self.params,
                max_dimensions=self.max_dimensions,
            )
        except RubricError as exc:
            if self.on_failure == "raise":
                raise
            feats = await build_features(None, None, [*train, *test])
            feats.rubric_error = f"rubric induction failed: {exc}"
            return feats, None
        feats = await build_features(self.client, rubric, [*train, *test], params=self.params)
        return feats, rubric


@dataclass
class FoldRecord:
    """What happened in one outer fold (kept for audit and for the leakage test)."""

    shuffle: int
    fold: int
    train_participants: list[str]
    test_participants: list[str]
    chosen_C: dict[str, float]
    rubric: Rubric | None
    failed_scores: int
    rubric_error: str | None = None


@dataclass
class CVResult:
    """Averaged held-out predictions per method, plus the per-fold audit trail."""

    scores: dict[str, list[ScoreRecord]]
    folds: list[FoldRecord] = field(default_factory=list)
    n_splits: int = 5
    n_shuffles: int = 10
    seed: int = 0


def repeat_seeds(seed: int, n_shuffles: int, n_splits: int) -> list[tuple[int, list[int]]]:
    """Each repeat's outer-split random state and its folds' featurizer seeds, drawn from ``seed``.

    All are drawn from one ``numpy.random.SeedSequence(seed)`` (one child per repeat), so runs with
    different seeds are independent: seeds 0 and 1 share no repeat's random state (with
    ``random_state=seed + r`` they shared all but one of their outer partitions).

    >>> states = repeat_seeds(0, 3, 5)
    >>> len(states), len(states[0][1]), states == repeat_seeds(0, 3, 5)
    (3, 5, True)
    """
    out = []
    for child in np.random.SeedSequence(seed).spawn(n_shuffles):
        state = child.generate_state(1 + n_splits, dtype=np.uint32)
        out.append((int(state[0]), [int(v) for v in state[1:]]))
    return out


def labels_and_groups(pairs: Sequence[PreferencePair]) -> tuple[np.ndarray, np.ndarray]:
    """``y`` (1 = human prefers the memory response) and participant groups; strict labels only."""
    y = []
    for p in pairs:
        if p.human_prefers_memory is None:
            raise CVError(f"pair {p.pair_id} has no strict preference (tie or unlabelled)")
        y.append(int(p.human_prefers_memory))
    return np.array(y), np.array([p.participant_id for p in pairs])


async def cross_validate(
    pairs: Sequence[PreferencePair],
    featurizer: Featurizer,
    *,
    n_splits: int = 5,
    n_shuffles: int = 10,
    inner_splits: int = 4,
    c_grid: Sequence[float] = C_GRID,
    seed: int = 0,
    blocks: Sequence[str] = ("all", "memory", "response"),
) -> CVResult:
    """Outer participant-grouped CV × shuffles; returns per-pair predictions averaged over shuffles."""
    from sklearn.model_selection import GroupKFold

    pairs = list(pairs)
    y, groups = labels_and_groups(pairs)
    if len(np.unique(groups)) < n_splits:
        raise CVError(
            f"{len(np.unique(groups))} participants (in {len(pairs)} pairs) < {n_splits} outer folds: "
            + (
                f"use --folds {len(np.unique(groups))} or fewer, or more participants"
                if len(np.unique(groups)) >= 2
                else "grouped CV needs at least 2 participants"
            )
        )
    sums = {b: np.zeros(len(pairs)) for b in blocks}
    counts = {b: np.zeros(len(pairs)) for b in blocks}
    folds: list[FoldRecord] = []
    for r, (split_state, fold_seeds) in enumerate(repeat_seeds(seed, n_shuffles, n_splits)):
        splitter = GroupKFold(n_splits=n_splits, shuffle=True, random_state=split_state)
        for k, (tr, te) in enumerate(splitter.split(np.zeros(len(pairs)), y, groups)):
            train = [pairs[i] for i in tr]
            test = [pairs[i] for i in te]
            feats, rubric = await featurizer.fold_features(train, test, seed=fold_seeds[k])
            X_tr = feats.rows([p.pair_id for p in train])
            X_te = feats.rows([p.pair_id for p in test])
            chosen: dict[str, float] = {}
            for b in blocks:
                cols = feats.block(b)
                if not cols:
                    continue
                model, C = fit_inner_cv(
                    X_tr[:, cols], y[tr], groups[tr], inner_splits=inner_splits, c_grid=c_grid
                )
                sums[b][te] += model.predict_proba(X_te[:, cols])[:, 1]
                counts[b][te] += 1
                chosen[b] = C
            folds.append(
                FoldRecord(
                    r,
                    k,
                    sorted(set(groups[tr])),
                    sorted(set(groups[te])),
                    chosen,
                    rubric,
                    feats.failed_scores,
                    feats.rubric_error,
                )
            )
    scores: dict[str, list[ScoreRecord]] = {}
    for b in blocks:
        if not counts[b].any():
            continue
        method = BLOCK_METHODS.get(b, f"memory_aware_rm_{b}")
        # A pair whose test folds all lacked this block (e.g. a fold without rubric features under
        # on_failure="response_only") has no prediction: a recorded failure, never a made-up score.
        scores[method] = [
            ScoreRecord(
                pair_id=p.pair_id,
                method=method,
                p_memory=float(sums[b][i] / counts[b][i]),
                details={"n_predictions": int(counts[b][i])},
            )
            if counts[b][i]
            else ScoreRecord(
                pair_id=p.pair_id,
                method=method,
                error=f"no held-out prediction: the '{b}' feature block was empty in every test fold "
                "of this pair",
                details={"n_predictions": 0},
            )
            for i, p in enumerate(pairs)
        ]
    return CVResult(scores, folds, n_splits, n_shuffles, seed)
