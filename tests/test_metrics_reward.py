"""Reward accuracy: tie policy, baselines, selective accuracy, breakdowns, CI, test–retest."""

from __future__ import annotations

import numpy as np
import pytest

from mirage_bench.metrics.reward import directional_agreement, reward_accuracy
from mirage_bench.reported import load_reported


def seed003(statistic: str, evaluator_prefix: str = "") -> float:
    table = load_reported("seed003_reward")
    rows = table[(table.statistic == statistic) & table.evaluator.str.startswith(evaluator_prefix)]
    assert len(rows) == 1, (statistic, evaluator_prefix)
    return float(rows.value_pct.iloc[0])


def test_tie_policies_are_explicit() -> None:
    p, y = [0.5, 0.5, 0.9, 0.1], [1, 0, 1, 1]
    half = reward_accuracy(p, y)
    assert half["tie_policy"] == "half" and half["n_ties"] == 2
    assert half["accuracy"] == pytest.approx((0.5 + 0.5 + 1 + 0) / 4)
    assert reward_accuracy(p, y, tie_policy="no_memory")["accuracy"] == pytest.approx(2 / 4)
    assert reward_accuracy(p, y, tie_policy="memory")["accuracy"] == pytest.approx(2 / 4)
    excluded = reward_accuracy(p, y, tie_policy="exclude")
    assert excluded["accuracy"] == 0.5 and excluded["memory_selection_rate"] == 0.5
    assert reward_accuracy(p, y, tie_policy="memory")["memory_selection_rate"] == 0.75
    with pytest.raises(ValueError, match="tie_policy"):
        reward_accuracy(p, y, tie_policy="coin")
    with pytest.raises(ValueError, match="every comparison is a tie"):
        reward_accuracy([0.5], [1], tie_policy="exclude")


def test_margin_scale_and_input_errors() -> None:
    out = reward_accuracy([2.0, -1.0, 0.0], [1, 0, 1], scale="margin")
    assert out["accuracy"] == pytest.approx((1 + 1 + 0.5) / 3)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        reward_accuracy([1.5], [1])
    with pytest.raises(ValueError, match="references must be 1"):
        reward_accuracy([0.7], [2])
    with pytest.raises(ValueError, match="equally long"):
        reward_accuracy([0.7, 0.2], [1])
    with pytest.raises(ValueError, match="finite"):
        reward_accuracy([float("nan")], [1])


def test_reproduces_seed003_rates_from_counts() -> None:
    # 291 clear-preference pairs; humans chose memory in 131 (45.0 %); an evaluator picking memory
    # for 236 pairs has Skywork's 81.1 % selection rate. Accuracy counts follow from the overlap.
    n, human_memory, picks_memory = 291, 131, 236
    references = np.r_[np.ones(human_memory, int), np.zeros(n - human_memory, int)]
    predictions = np.r_[np.full(picks_memory, 0.8), np.full(n - picks_memory, 0.2)]
    out = reward_accuracy(predictions, references)
    assert round(100 * out["human_memory_rate"], 1) == seed003("human_memory_rate") == 45.0
    assert round(100 * out["majority_baseline"], 1) == seed003("accuracy", "majority") == 55.0
    assert out["no_memory_baseline"] == out["majority_baseline"]
    assert round(100 * out["memory_selection_rate"], 1) == seed003("memory_selection_rate", "Skywork") == 81.1
    assert out["accuracy"] == pytest.approx((131 + 55) / 291)


def test_selective_accuracy_ranks_by_confidence() -> None:
    # confident predictions right, unconfident ones wrong
    p = np.array([0.99, 0.02, 0.95, 0.1, 0.6, 0.45, 0.55, 0.4])
    y = np.array([1, 0, 1, 0, 0, 1, 0, 1])
    sel = reward_accuracy(p, y)["selective_accuracy"]
    assert sel == {0.25: 1.0, 0.5: 1.0, 0.75: pytest.approx(4 / 6), 1.0: 0.5}
    custom = reward_accuracy(p, y, coverages=(0.1,))["selective_accuracy"]
    assert custom == {0.1: 1.0}  # ceil(0.8) = 1 comparison
    with pytest.raises(ValueError, match="coverage"):
        reward_accuracy(p, y, coverages=(0.0,))


def test_per_generator_and_bootstrap_ci() -> None:
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 300)
    p = np.clip(y * 0.3 + rng.uniform(0.1, 0.6, 300), 0, 1)
    gens = np.repeat(["gpt", "gemini", "claude"], 100)
    out = reward_accuracy(p, y, generators=gens, n_resamples=4000, seed=1)
    for name, part in out["per_generator"].items():
        mask = gens == name
        assert part["n"] == 100
        assert part["accuracy"] == pytest.approx(reward_accuracy(p[mask], y[mask])["accuracy"])
    low, high = out["accuracy_ci"]
    assert low < out["accuracy"] < high
    se = np.sqrt(out["accuracy"] * (1 - out["accuracy"]) / 300)
    assert (high - low) == pytest.approx(2 * 1.96 * se, rel=0.2)


def test_directional_agreement_reproduces_seed003_table1_counts() -> None:
    # 75 comparisons: 46 originally "much" (34 same side), 29 "slightly" (17 same side)
    first = [2] * 46 + [-1] * 29
    second = [1] * 34 + [-2] * 12 + [-2] * 17 + [1] * 12
    out = directional_agreement(first, second)
    assert out["n"] == 75
    assert round(100 * out["agreement"], 1) == seed003("test_retest_directional_agreement") == 68.0
    much = seed003("test_retest_directional_agreement_much_better")
    assert round(100 * out["much"]["agreement"], 1) == much
    assert round(100 * out["slightly"]["agreement"], 1) == seed003(
        "test_retest_directional_agreement_slightly_better")
    named = directional_agreement(["A much better", "about the same"],
                                  ["A slightly better", "about the same"])
    assert named["agreement"] == 0.5 and named["n_first_ties"] == 1
    with pytest.raises(ValueError, match="unknown preference"):
        directional_agreement(["C better"], [1])
    with pytest.raises(ValueError, match="-2..2"):
        directional_agreement([3], [1])
