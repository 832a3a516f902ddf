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


def _reference_scores(p: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Accuracy and memory-selection rate by a plain loop (ties at 0.5: half credit, half a pick)."""
    credit = picks = 0.0
    for pi, yi in zip(p, y, strict=True):
        pick = 0.5 if pi == 0.5 else float(pi > 0.5)
        picks += pick
        credit += pick if yi == 1 else 1 - pick
    return credit / len(p), picks / len(p)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_rates_match_an_independent_loop_on_random_inputs(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 291  # seed 003's clear-preference pairs
    y = rng.integers(0, 2, n)
    p = np.round(rng.uniform(0, 1, n), 1)  # rounding to 0.1 puts ties at exactly 0.5
    out = reward_accuracy(p, y)
    accuracy, selection = _reference_scores(p, y)
    assert out["n_ties"] == int((p == 0.5).sum()) > 0
    assert out["accuracy"] == pytest.approx(accuracy)
    assert out["memory_selection_rate"] == pytest.approx(selection)
    assert out["human_memory_rate"] == pytest.approx(y.mean())
    assert out["majority_baseline"] == pytest.approx(max(y.mean(), 1 - y.mean()))
    assert out["no_memory_baseline"] == pytest.approx(1 - y.mean())
    # the "Majority" row of seed 003 Table 3 is always-no-memory: 55.0 % when 45.0 % chose memory
    assert seed003("accuracy", "majority") == pytest.approx(100 - seed003("human_memory_rate"))


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


def test_directional_agreement_matches_an_independent_loop() -> None:
    rng = np.random.default_rng(4)
    first, second = rng.integers(-2, 3, 500), rng.integers(-2, 3, 500)
    out = directional_agreement(first, second)
    agree = [a != 0 and b != 0 and (a > 0) == (b > 0) for a, b in zip(first, second, strict=True)]
    assert out["n"] == 500 and out["agreement"] == pytest.approx(np.mean(agree))
    for name, strength in (("much", 2), ("slightly", 1)):
        chosen = [g for g, a in zip(agree, first, strict=True) if abs(a) == strength]
        assert out[name]["n"] == len(chosen) and out[name]["agreement"] == pytest.approx(np.mean(chosen))
    assert out["n_first_ties"] == int((first == 0).sum())
    # same side counts whatever the strength; "about the same" is no direction
    named = directional_agreement(["A much better", "about the same"],
                                  ["A slightly better", "about the same"])
    assert named["agreement"] == 0.5 and named["n_first_ties"] == 1
    with pytest.raises(ValueError, match="unknown preference"):
        directional_agreement(["C better"], [1])
    with pytest.raises(ValueError, match="-2..2"):
        directional_agreement([3], [1])
