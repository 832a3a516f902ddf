"""Grouped cross-validation of the memory-aware reward model: cycle, reproducibility, no leakage."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest
from sklearn.model_selection import StratifiedKFold

from mirage_bench.reward.data import PreferencePair, clear_pairs
from mirage_bench.reward.features import FeatureSet, build_features
from mirage_bench.reward.model import (
    CVError,
    FixedFeaturizer,
    RubricFeaturizer,
    cross_validate,
    fit_inner_cv,
)
from mirage_bench.reward.synthetic import synthetic_client, synthetic_pairs


def _tagged(pairs: list[PreferencePair]) -> list[PreferencePair]:
    """Make every query name its participant, so prompts reveal whose pairs they show."""
    return [p.model_copy(update={"query": f"{p.query} [{p.participant_id}]"}) for p in pairs]


@pytest.fixture(scope="module")
def pairs() -> list[PreferencePair]:
    return _tagged(clear_pairs(synthetic_pairs(12, 10, seed=11)))


def _acc(result, method, pairs) -> float:
    y = np.array([p.human_prefers_memory for p in pairs])
    p = np.array([r.p_memory for r in result.scores[method]])
    return float(((p > 0.5) == y).mean())


@pytest.fixture(scope="module")
def rubric_cv(pairs):
    """One rubric-feature CV run (5 folds) with every backend call recorded."""
    record: list = []
    client = synthetic_client(record)
    res = asyncio.run(
        cross_validate(
            pairs,
            RubricFeaturizer(client, passes=3, per_pass=6),
            n_shuffles=1,
            seed=5,
            blocks=("all", "response"),
        )
    )
    return res, record


def test_rubric_model_beats_majority_and_ablations_on_synthetic(pairs, rubric_cv):
    res, record = rubric_cv
    y = np.array([p.human_prefers_memory for p in pairs])
    majority = max(y.mean(), 1 - y.mean())
    full = _acc(res, "memory_aware_rm", pairs)
    assert full > majority + 0.15
    assert full >= _acc(res, "memory_aware_rm_response_only", pairs)
    assert {f.fold for f in res.folds} == set(range(5))
    assert all(set(f.chosen_C.values()) <= {0.003, 0.01, 0.03, 0.1, 0.3} for f in res.folds)
    # every fold induced its own rubric: 3 passes + 1 consolidation per fold
    titles = [t for t, _ in record]
    assert titles.count("InductionAnswer") == 15 and titles.count("ConsolidationAnswer") == 5


def test_rubric_is_induced_from_training_participants_only(pairs, rubric_cv):
    res, record = rubric_cv
    induction = [text for title, text in record if title == "InductionAnswer"]
    assert len(induction) == 3 * len(res.folds) == 15
    participants = {p.participant_id for p in pairs}
    by_pair = {p.pair_id: p.participant_id for p in pairs}
    for i, fold in enumerate(res.folds):  # folds run one after another, passes inside a fold concurrently
        assert set(fold.train_participants).isdisjoint(fold.test_participants)
        assert set(fold.train_participants) | set(fold.test_participants) == participants
        shown = {pid for text in induction[3 * i : 3 * i + 3] for pid in participants if f"[{pid}]" in text}
        assert shown and shown <= set(fold.train_participants)
        assert {by_pair[pid] for pid in fold.rubric.induced_from} <= set(fold.train_participants)


def test_cross_validation_is_reproducible_given_the_seed(pairs):
    feats = asyncio.run(build_features(None, None, pairs))

    def run(seed: int):
        return asyncio.run(
            cross_validate(
                pairs, FixedFeaturizer(feats), n_shuffles=2, seed=seed, blocks=("all",), c_grid=(0.1,)
            )
        )

    a, b, c = run(7), run(7), run(8)
    pa = [r.p_memory for r in a.scores["memory_aware_rm"]]
    assert pa == [r.p_memory for r in b.scores["memory_aware_rm"]]
    assert [f.test_participants for f in a.folds] == [f.test_participants for f in b.folds]
    assert [f.test_participants for f in a.folds] != [f.test_participants for f in c.folds]
    assert all(r.details["n_predictions"] == 2 for r in a.scores["memory_aware_rm"])  # averaged over shuffles


def _participant_label_data(seed: int = 0):
    """SYNTHETIC: each participant almost always prefers one side; features carry no other signal."""
    rng = np.random.default_rng(seed)
    n_part, per = 20, 8
    groups = np.repeat([f"synthetic_u{i:02d}" for i in range(n_part)], per)
    side = rng.random(n_part) < 0.5
    y = np.array([s if rng.random() < 0.95 else not s for s in np.repeat(side, per)]).astype(int)
    onehot = (groups[:, None] == np.unique(groups)[None, :]).astype(float)
    noise = rng.normal(size=(len(y), 3))
    pairs = [
        PreferencePair(
            pair_id=f"synthetic_{i}",
            participant_id=g,
            query="q",
            memories=[],
            response_memory="a",
            response_no_memory="b",
            generator="g",
            source="synthetic",
            preference="memory_much_better" if yi else "no_memory_much_better",
        )
        for i, (g, yi) in enumerate(zip(groups, y, strict=True))
    ]
    return pairs, y, groups, noise, onehot


def test_participant_id_feature_cannot_raise_held_out_accuracy():
    pairs, y, groups, noise, onehot = _participant_label_data()
    ids = [p.pair_id for p in pairs]
    X_leak = np.hstack([noise, onehot, np.arange(len(y))[:, None] // 8])  # one-hot + integer participant code
    names = [f"f{i}" for i in range(X_leak.shape[1])]
    with_id = FeatureSet(ids, X_leak, names, [], list(range(len(names))))
    without = FeatureSet(ids, noise, names[:3], [], [0, 1, 2])
    acc_with = _mean_acc(pairs, y, with_id)
    acc_without = _mean_acc(pairs, y, without)
    assert acc_with <= acc_without + 0.08
    assert acc_with <= 0.65  # participant-level labels are not predictable for unseen participants
    # The same features under a row-level (leaky) split would look excellent: the test has power.
    leaky = []
    for tr, te in StratifiedKFold(5, shuffle=True, random_state=0).split(X_leak, y):
        model, _ = fit_inner_cv(X_leak[tr], y[tr], np.arange(len(tr)) % 4, c_grid=(0.1,))
        leaky.append((model.predict(X_leak[te]) == y[te]).mean())
    assert np.mean(leaky) > 0.85


def _mean_acc(pairs, y, feats) -> float:
    res = asyncio.run(
        cross_validate(pairs, FixedFeaturizer(feats), n_shuffles=2, seed=1, blocks=("all",), c_grid=(0.1,))
    )
    p = np.array([r.p_memory for r in res.scores["memory_aware_rm"]])
    return float(((p > 0.5) == y).mean())


def test_cv_refuses_unusable_data():
    pairs, *_ = _participant_label_data()
    few = [p for p in pairs if p.participant_id in ("synthetic_u00", "synthetic_u01", "synthetic_u02")]
    feats = asyncio.run(build_features(None, None, few))
    with pytest.raises(CVError, match=r"3 participants \(in \d+ pairs\) < 5 outer folds: use --folds 3"):
        asyncio.run(cross_validate(few, FixedFeaturizer(feats)))
    tie = pairs[0].model_copy(update={"preference": "about_same"})
    with pytest.raises(CVError, match="no strict preference"):
        asyncio.run(cross_validate([tie, *pairs[1:]], FixedFeaturizer(feats)))
    with pytest.raises(CVError, match="single class"):
        fit_inner_cv(np.zeros((8, 2)), np.ones(8, int), np.arange(8))


def test_standardization_and_fit_see_training_participants_only():
    """Shifting one participant's features by 1000 leaves every other held-out prediction of its test
    fold unchanged: imputation, standardization and the fit saw training participants only."""
    pairs, y, groups, noise, _ = _participant_label_data(seed=3)
    ids = [p.pair_id for p in pairs]
    base = FeatureSet(ids, noise, ["a", "b", "c"], [], [0, 1, 2])
    shifted_x = noise.copy()
    shifted_x[groups == "synthetic_u00"] += 1000.0
    shifted_x[np.flatnonzero(groups == "synthetic_u00")[:2], 0] = np.nan  # imputed in the same pass
    shifted = FeatureSet(ids, shifted_x, ["a", "b", "c"], [], [0, 1, 2])
    runs = [asyncio.run(cross_validate(pairs, FixedFeaturizer(f), n_shuffles=1, seed=2, blocks=("all",)))
            for f in (base, shifted)]
    fold = next(f for f in runs[0].folds if "synthetic_u00" in f.test_participants)
    same_fold = [i for i, g in enumerate(groups) if g in fold.test_participants and g != "synthetic_u00"]
    p0, p1 = (np.array([r.p_memory for r in run.scores["memory_aware_rm"]]) for run in runs)
    assert same_fold and np.allclose(p0[same_fold], p1[same_fold], rtol=0, atol=1e-12)
    # the test has power: pairs whose training folds held the shifted participant do move (a scaler
    # or imputer fitted on train + test rows would move the same-fold pairs in the same way)
    elsewhere = [i for i, g in enumerate(groups) if g not in fold.test_participants]
    assert not np.allclose(p0[elsewhere], p1[elsewhere], atol=1e-6)


class _NoMemoryInFirstFold:
    """Wraps fixed features; the first outer fold of each shuffle has no memory block (a failed rubric)."""

    def __init__(self, feats: FeatureSet, n_splits: int = 5) -> None:
        self.feats = feats
        self.n_splits = n_splits
        self.calls = 0

    async def fold_features(self, train, test, *, seed):  # noqa: ANN001, ANN201
        first = self.calls % self.n_splits == 0  # folds of a repeat run one after another
        self.calls += 1
        if first:
            f = self.feats
            return FeatureSet(f.pair_ids, f.X, f.names, [], f.response_columns, rubric_error="failed"), None
        return self.feats, None


def test_a_pair_without_any_held_out_prediction_is_a_recorded_failure(pairs) -> None:
    feats = asyncio.run(build_features(None, None, pairs))
    feats = FeatureSet(feats.pair_ids, feats.X, feats.names, [0], feats.response_columns)
    res = asyncio.run(
        cross_validate(pairs, _NoMemoryInFirstFold(feats), n_shuffles=1, inner_splits=2, seed=0,
                       blocks=("memory", "response"))
    )
    memory = res.scores["memory_aware_rm_memory_only"]
    first_test = set(res.folds[0].test_participants)
    held = [(r, p.participant_id in first_test) for r, p in zip(memory, pairs, strict=True)]
    missing = [r for r, in_first in held if in_first]
    assert missing
    assert all(r.p_memory is None and "no held-out prediction" in (r.error or "") for r in missing)
    assert all(r.p_memory is not None for r, in_first in held if not in_first)
    assert all(r.p_memory is not None for r in res.scores["memory_aware_rm_response_only"])
