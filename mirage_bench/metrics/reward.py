"""Reward accuracy: pairwise preference accuracy of a reward model or judge against human choices.

Each comparison pairs a memory-conditioned response with a no-memory response (seed 003, §3.2).
A *prediction* is the evaluator's probability p̂ that the memory-conditioned response is preferred
(``scale="probability"``, threshold 0.5) or its score margin, memory minus no-memory
(``scale="margin"``, threshold 0); a *reference* is 1 if the human preferred the memory-conditioned
response, else 0.

**Tie policy** (a prediction exactly at the threshold; stated because it changes the numbers):
``"half"`` (default) scores a tie as half correct and half a memory pick — the expectation of a
fair coin flip, so ties neither help nor hurt; ``"no_memory"`` / ``"memory"`` resolve ties to that
side (``"no_memory"`` is the majority-baseline convention of seed 003, Table 3); ``"exclude"`` drops
tied comparisons from accuracy and selection rate (their count is reported as ``n_ties``).

Also: the majority baseline (always predicting the references' majority class), the evaluator's
memory-selection rate vs the humans' (seed 003 reports 67.2 % and 81.1 % vs 45.0 %), selective
accuracy at given coverages ranking comparisons by confidence |p̂ − 0.5| (or |margin|), per-generator
breakdowns, a percentile bootstrap CI over comparisons, and test–retest directional agreement
(§3.4).

>>> out = reward_accuracy([0.9, 0.2, 0.6, 0.5], [1, 0, 0, 1])
>>> out["accuracy"], out["memory_selection_rate"], out["human_memory_rate"], out["n_ties"]
(0.625, 0.625, 0.5, 1)
>>> out["selective_accuracy"][0.5]
1.0
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd

from mirage_bench.metrics.bootstrap import as_generator, index_chunks, percentile_ci

TiePolicy = Literal["half", "no_memory", "memory", "exclude"]
TIE_POLICIES: tuple[str, ...] = ("half", "no_memory", "memory", "exclude")
#: Coverages of seed 003's Table 5.
DEFAULT_COVERAGES: tuple[float, ...] = (0.25, 0.5, 0.75, 1.0)

ArrayLike = Sequence[Any] | np.ndarray | pd.Series


def _inputs(predictions: ArrayLike, references: ArrayLike, scale: str) -> tuple[np.ndarray, np.ndarray]:
    p = np.asarray(predictions, dtype=float)
    y = np.asarray(references)
    if p.ndim != 1 or p.shape != y.shape:
        raise ValueError(f"predictions and references must be 1-D and equally long: {p.shape}, {y.shape}")
    if len(p) == 0:
        raise ValueError("no comparisons to score")
    if not np.isfinite(p).all():
        raise ValueError("predictions must be finite numbers")
    if scale == "probability" and ((p < 0) | (p > 1)).any():
        raise ValueError("probabilities must lie in [0, 1]; pass scale='margin' for score differences")
    if scale not in ("probability", "margin"):
        raise ValueError(f"scale must be 'probability' or 'margin', got {scale!r}")
    if not np.isin(y, (0, 1)).all():
        raise ValueError("references must be 1 (human preferred the memory response) or 0")
    return p, y.astype(np.int8)


def _scores(
    p: np.ndarray, y: np.ndarray, threshold: float, tie_policy: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per comparison: correctness credit, memory-pick credit (floats) and a keep mask."""
    if tie_policy not in TIE_POLICIES:
        raise ValueError(f"tie_policy must be one of {TIE_POLICIES}, got {tie_policy!r}")
    tie = p == threshold
    pick = (p > threshold).astype(float)
    tie_pick = {"half": 0.5, "no_memory": 0.0, "memory": 1.0, "exclude": 0.0}[tie_policy]
    pick[tie] = tie_pick
    correct = pick * y + (1 - pick) * (1 - y)
    keep = ~tie if tie_policy == "exclude" else np.ones(len(p), dtype=bool)
    return correct, pick, keep


def _selective(confidence: np.ndarray, correct: np.ndarray, coverages: Sequence[float]) -> dict[float, float]:
    """Accuracy over the ⌈c·n⌉ most confident comparisons, for each coverage c.

    Comparisons tied in confidence at the cut are not ordered by their position in the input:
    the ones needed to fill the quota are credited with the mean correctness of the whole tied
    block (the expectation over every order of the ties), so the result does not depend on the
    row order.
    """
    order = np.argsort(-confidence, kind="stable")
    conf, corr = confidence[order], correct[order]
    running = np.r_[0.0, np.cumsum(corr)]
    # for each sorted position: the start and end of its block of equal confidence
    new_block = np.r_[True, conf[1:] != conf[:-1]]
    block_start = np.flatnonzero(new_block)
    block_of = np.cumsum(new_block) - 1
    block_end = np.r_[block_start[1:], len(conf)]
    out = {}
    for c in coverages:
        if not 0 < c <= 1:
            raise ValueError(f"coverage must lie in (0, 1], got {c}")
        k = max(1, int(np.ceil(c * len(order) - 1e-9)))
        b = block_of[k - 1]
        lo, hi = block_start[b], block_end[b]
        tied_mean = (running[hi] - running[lo]) / (hi - lo)
        out[float(c)] = float((running[lo] + (k - lo) * tied_mean) / k)
    return out


def reward_accuracy(
    predictions: ArrayLike,
    references: ArrayLike,
    *,
    scale: Literal["probability", "margin"] = "probability",
    tie_policy: TiePolicy = "half",
    generators: ArrayLike | None = None,
    coverages: Sequence[float] = DEFAULT_COVERAGES,
    n_resamples: int = 0,
    confidence: float = 0.95,
    seed: int | np.random.Generator | None = 0,
) -> dict[str, Any]:
    """Preference accuracy of an evaluator against human choices, with baselines and breakdowns.

    Returns ``n``, ``n_ties``, ``tie_policy``, ``accuracy``, ``majority_baseline``,
    ``no_memory_baseline`` (always predicting no-memory, seed 003's "Majority" row),
    ``memory_selection_rate``, ``human_memory_rate``, ``selective_accuracy`` ({coverage: accuracy},
    the top ⌈coverage·n⌉ comparisons by confidence; ties at the cut credited with
    their block's mean); with ``generators`` (one per comparison)
    ``per_generator`` ({generator: {n, accuracy, memory_selection_rate, human_memory_rate}}); with
    ``n_resamples`` > 0 ``accuracy_ci`` (percentile bootstrap over comparisons).
    """
    p, y = _inputs(predictions, references, scale)
    threshold = 0.5 if scale == "probability" else 0.0
    correct, pick, keep = _scores(p, y, threshold, tie_policy)
    if not keep.any():
        raise ValueError("every comparison is a tie and tie_policy='exclude' leaves nothing to score")
    human_rate = float(y.mean())
    out: dict[str, Any] = {
        "n": int(len(p)),
        "n_ties": int((p == threshold).sum()),
        "tie_policy": tie_policy,
        "accuracy": float(correct[keep].mean()),
        "majority_baseline": max(human_rate, 1 - human_rate),
        "no_memory_baseline": 1 - human_rate,
        "memory_selection_rate": float(pick[keep].mean()),
        "human_memory_rate": human_rate,
        "selective_accuracy": _selective(np.abs(p - threshold)[keep], correct[keep], coverages),
    }
    if generators is not None:
        gen = np.asarray(list(generators) if not isinstance(generators, np.ndarray) else generators)
        if gen.shape != p.shape:
            raise ValueError("generators must give one generator per comparison")
        out["per_generator"] = {}
        for name in pd.unique(gen):
            mask = (gen == name) & keep
            out["per_generator"][name.item() if hasattr(name, "item") else name] = {
                "n": int((gen == name).sum()),
                "accuracy": float(correct[mask].mean()) if mask.any() else float("nan"),
                "memory_selection_rate": float(pick[mask].mean()) if mask.any() else float("nan"),
                "human_memory_rate": float(y[gen == name].mean()),
            }
    if n_resamples > 0:
        kept = correct[keep]
        samples = np.concatenate([kept[idx].mean(axis=1) for idx in index_chunks(len(kept), n_resamples,
                                                                                  as_generator(seed))])
        out["accuracy_ci"] = tuple(float(v) for v in percentile_ci(samples, confidence))
        out["n_resamples"] = int(n_resamples)
    return out


#: The five-point scale of seed 003 §3.3, mapped to −2..2 (negative: Response A preferred).
FIVE_POINT_SCALE: dict[str, int] = {
    "a much better": -2,
    "a slightly better": -1,
    "about the same": 0,
    "b slightly better": 1,
    "b much better": 2,
}


def _five_point(values: ArrayLike) -> np.ndarray:
    out = []
    for v in values:
        if isinstance(v, str):
            key = v.strip().casefold()
            if key not in FIVE_POINT_SCALE:
                raise ValueError(f"unknown preference {v!r}; expected one of {list(FIVE_POINT_SCALE)}")
            out.append(FIVE_POINT_SCALE[key])
        else:
            if int(v) != v or not -2 <= int(v) <= 2:
                raise ValueError(f"preference codes must be integers in -2..2, got {v!r}")
            out.append(int(v))
    return np.asarray(out, dtype=np.int8)


def directional_agreement(first: ArrayLike, second: ArrayLike) -> dict[str, Any]:
    """Test–retest directional agreement (seed 003 §3.4) of two sessions' five-point choices.

    Each choice is a five-point label (``"A much better"`` … ``"B much better"``) or its code
    −2..2 for the same pair shown in both sessions. A comparison agrees when the same response is
    preferred both times, whatever the strength; "about the same" in either session is not a
    directional preference and counts as disagreement. Returns ``n``, ``agreement`` and, grouped by
    the first session's strength, ``much`` and ``slightly`` (``{"n", "agreement"}``) and
    ``n_first_ties`` (first-session "about the same", in the overall rate only).

    >>> directional_agreement([2, -1, 1, 0], [1, -2, -1, 0])["agreement"]
    0.5
    """
    a, b = _five_point(first), _five_point(second)
    if a.shape != b.shape or len(a) == 0:
        raise ValueError("both sessions need the same, non-zero number of choices")
    same = (np.sign(a) == np.sign(b)) & (a != 0)
    out: dict[str, Any] = {"n": int(len(a)), "agreement": float(same.mean()),
                           "n_first_ties": int((a == 0).sum())}
    for name, strength in (("much", 2), ("slightly", 1)):
        mask = np.abs(a) == strength
        rate = float(same[mask].mean()) if mask.any() else float("nan")
        out[name] = {"n": int(mask.sum()), "agreement": rate}
    return out
