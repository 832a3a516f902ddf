"""Self-monitoring: OI_self vs OI_judge, the gap of Eq. (3), Table 2's pattern, Spearman statistics.

**Gap** = OI_judge − OI_self (percentage points): positive means the model under-detects its own
over-inference. **Pattern** (Table 2): ``Under`` if gap > +T, ``Over`` if gap < −T, else ``Calib.``,
with T = :data:`PATTERN_THRESHOLD_PP` = 5 pp. The paper does not state its threshold; it is read off
Table 2, where the largest |gap| labelled Calib. is 4.6 pp (DeepSeek-v4-pro) and the smallest
labelled otherwise is 6.2 pp (Claude-Opus-4-6), so any symmetric T in [4.6, 6.2) reproduces all
twelve labels; 5 pp is the round number inside that interval.

**Cross-model Spearman** between self and judge OI: ρ, a two-sided permutation p-value (the
pairings test of ``scipy.stats.permutation_test``, with its conventions, vectorised here as one
matrix product over permuted rank vectors; exact when all n! permutations fit in ``n_permutations``),
and percentile bootstrap CIs resampling models (naive) or model families (clustered). Bootstrap
resamples are computed without materialising them: a resample is a weight vector (how often each
model is drawn) and ρ is the weighted Pearson correlation of weighted mid-ranks, which equals
``scipy.stats.spearmanr`` on the replicated data exactly.

>>> monitoring_pattern(35.7), monitoring_pattern(-0.9), monitoring_pattern(-6.2)
('Under', 'Calib.', 'Over')
>>> out = cross_model_spearman([1, 2, 3, 4, 5], [5, 4, 3, 2, 1], n_resamples=100)
>>> round(out["rho"], 6), round(out["p_value"], 4), out["p_value_exact"]
(-1.0, 0.0167, True)
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from mirage_bench.metrics.bootstrap import DEFAULT_RESAMPLES, as_generator, percentile_ci

#: Half-width (pp) of the Calib. band of Table 2's pattern; see the module docstring.
PATTERN_THRESHOLD_PP = 5.0
#: Default number of random permutations for the permutation p-value.
DEFAULT_PERMUTATIONS = 100_000

ArrayLike = Sequence[Any] | np.ndarray | pd.Series


def monitoring_pattern(gap_pp: float, threshold: float = PATTERN_THRESHOLD_PP) -> str:
    """Table 2's pattern for a gap (pp): ``Under`` (> T), ``Over`` (< −T), else ``Calib.``.

    Raises ``ValueError`` for a NaN gap.
    """
    if gap_pp != gap_pp:  # NaN
        raise ValueError("gap is NaN: a pattern needs both self and judge OI")
    if gap_pp > threshold:
        return "Under"
    if gap_pp < -threshold:
        return "Over"
    return "Calib."


def self_monitoring_table(
    models: ArrayLike, self_oi_pct: ArrayLike, judge_oi_pct: ArrayLike,
    threshold: float = PATTERN_THRESHOLD_PP,
) -> pd.DataFrame:
    """Table 2: ``model``, ``self_oi_pct``, ``judge_oi_pct``, ``gap_pp``, ``pattern``, by gap descending.

    >>> self_monitoring_table(["a", "b"], [13.0, 58.2], [48.7, 43.1])[["model", "pattern"]].values.tolist()
    [['a', 'Under'], ['b', 'Over']]
    """
    frame = pd.DataFrame({"model": list(models), "self_oi_pct": np.asarray(self_oi_pct, dtype=float),
                          "judge_oi_pct": np.asarray(judge_oi_pct, dtype=float)})
    frame["gap_pp"] = frame.judge_oi_pct - frame.self_oi_pct
    frame["pattern"] = [monitoring_pattern(g, threshold) for g in frame.gap_pp]
    return frame.sort_values("gap_pp", ascending=False, kind="stable").reset_index(drop=True)


def _weighted_midranks(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Mid-ranks of ``values`` in the data that repeats item i ``weights[b, i]`` times (per row b)."""
    order = np.argsort(values, kind="stable")
    sorted_values = values[order]
    starts = np.r_[True, sorted_values[1:] != sorted_values[:-1]]
    tie_group = np.cumsum(starts) - 1  # tie group of each sorted position
    w_sorted = weights[:, order]
    one_hot = np.zeros((len(values), tie_group[-1] + 1))
    one_hot[np.arange(len(values)), tie_group] = 1.0
    group_weight = w_sorted @ one_hot
    below = np.cumsum(group_weight, axis=1) - group_weight  # weight strictly below each tie group
    ranks_sorted = below[:, tie_group] + (group_weight[:, tie_group] + 1) / 2
    ranks = np.empty_like(ranks_sorted)
    ranks[:, order] = ranks_sorted
    return ranks


def weighted_spearman(x: np.ndarray, y: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Spearman ρ of the data replicating item i ``weights[b, i]`` times, for each row b.

    Equals ``scipy.stats.spearmanr(np.repeat(x, w), np.repeat(y, w))`` (average ranks for ties);
    NaN where a replicated sample is constant in x or y.

    >>> float(weighted_spearman(np.array([1., 2, 3]), np.array([1., 3, 2]), np.array([[1, 1, 1]]))[0])
    0.5
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    w = np.atleast_2d(np.asarray(weights, dtype=float))
    rx, ry = _weighted_midranks(x, w), _weighted_midranks(y, w)
    total = w.sum(axis=1, keepdims=True)
    dx = rx - (w * rx).sum(axis=1, keepdims=True) / total
    dy = ry - (w * ry).sum(axis=1, keepdims=True) / total
    cov = (w * dx * dy).sum(axis=1)
    var = (w * dx * dx).sum(axis=1) * (w * dy * dy).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = cov / np.sqrt(var)
    rho[~(var > 1e-12)] = np.nan
    return rho


def _check_pairs(x: ArrayLike, y: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError("self and judge OI must be 1-D arrays of the same length")
    if len(x) < 3:
        raise ValueError("a Spearman correlation across models needs at least 3 models")
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise ValueError("self and judge OI must be finite numbers")
    return x, y


def _permutation_p(permuted: np.ndarray, centered_x: np.ndarray, centered_y: np.ndarray, norm: float,
                   exact: bool) -> float:
    """Two-sided permutation p-value of the rank correlation (``scipy.stats.permutation_test``'s
    conventions: relative tolerance for ties with the observed statistic, +1 in numerator and
    denominator for a randomized test, two-sided = 2 × the smaller tail)."""
    null = permuted @ centered_y / norm
    observed = float(centered_x @ centered_y / norm)
    gamma = 1e-14 * max(1.0, abs(observed))
    add = 0 if exact else 1
    p_greater = (np.count_nonzero(null >= observed - gamma) + add) / (len(null) + add)
    p_less = (np.count_nonzero(null <= observed + gamma) + add) / (len(null) + add)
    return float(min(1.0, 2 * min(p_greater, p_less)))


def cross_model_spearman(
    self_oi: ArrayLike,
    judge_oi: ArrayLike,
    *,
    families: ArrayLike | None = None,
    n_resamples: int = DEFAULT_RESAMPLES,
    n_permutations: int = DEFAULT_PERMUTATIONS,
    confidence: float = 0.95,
    seed: int | np.random.Generator | None = 0,
) -> dict[str, Any]:
    """Spearman ρ between per-model self-audit OI and judge OI, with p-value and bootstrap CIs.

    Returns ``rho``, ``p_value`` (two-sided permutation test; NaN with ``rho`` when a side is
    constant), ``p_value_exact`` (whether every
    permutation was enumerated), ``ci`` (naive percentile bootstrap over models), ``n``,
    ``n_resamples``, ``n_degenerate`` (resamples with a constant side, left out of the CI); with
    ``families`` (one per model) also ``ci_clustered`` and ``n_degenerate_clustered`` (whole
    families resampled with replacement).
    """
    x, y = _check_pairs(self_oi, judge_oi)
    n = len(x)
    rng = as_generator(seed)
    rank_y = stats.rankdata(y)
    centered_y = rank_y - rank_y.mean()
    rank_x = stats.rankdata(x)
    norm = np.sqrt(((rank_x - rank_x.mean()) ** 2).sum() * (centered_y ** 2).sum())
    rho = float(stats.spearmanr(x, y).statistic) if norm > 0 else float("nan")

    centered_x = rank_x - rank_x.mean()
    exact = math.factorial(n) <= n_permutations
    if not norm > 0:  # a constant side: ρ is undefined, and so is its p-value
        p_value = float("nan")
    elif exact:
        p_value = _permutation_p(centered_x[np.array(list(itertools.permutations(range(n))),
                                                     dtype=np.intp)], centered_x, centered_y, norm, exact)
    else:
        permuted = rng.permuted(np.broadcast_to(centered_x, (n_permutations, n)), axis=1)
        p_value = _permutation_p(permuted, centered_x, centered_y, norm, exact)
    out: dict[str, Any] = {
        "rho": rho,
        "p_value": p_value,
        "p_value_exact": exact,
        "n": n,
        "n_resamples": int(n_resamples),
        "confidence": float(confidence),
    }
    weights = rng.multinomial(n, np.full(n, 1 / n), size=n_resamples)
    naive = weighted_spearman(x, y, weights)
    out["ci"] = tuple(float(v) for v in percentile_ci(naive, confidence))
    out["n_degenerate"] = int(np.isnan(naive).sum())
    if families is not None:
        family_codes, family_names = pd.factorize(np.asarray(list(families)))
        if family_codes.shape != (n,) or (family_codes < 0).any():
            raise ValueError("families must give one family per model")
        k = len(family_names)
        draws = rng.multinomial(k, np.full(k, 1 / k), size=n_resamples)
        clustered = weighted_spearman(x, y, draws[:, family_codes])
        out["ci_clustered"] = tuple(float(v) for v in percentile_ci(clustered, confidence))
        out["n_degenerate_clustered"] = int(np.isnan(clustered).sum())
        out["n_families"] = k
    return out


#: How records exactly at a model's median judge OI are classed by :func:`within_model_signal`.
MEDIAN_TIES: dict[str, str] = {"negative": "above_median", "positive": "at_or_above_median"}


def within_model_signal(self_oi: ArrayLike, judge_oi: ArrayLike, models: ArrayLike, *,
                        median_ties: str = "negative") -> pd.DataFrame:
    """Table 6: per model, Spearman ρ and AUROC of record-level self-audit OI vs judge OI.

    Inputs hold one value per (persona, task) record with valid self-audit and judge outputs. AUROC
    scores self-audit OI as a predictor of the record being an "above-median-Judge-OI record"
    (App. D). Records *at* the median are negatives with ``median_ties="negative"`` (default:
    positives are strictly above the median) and positives with ``median_ties="positive"``
    (at or above). Record-level OI is a ratio of small counts, so many records sit exactly at the
    median and the choice moves AUROC by as much as the differences between models; the column
    ``positives`` says which rule was used and ``n_at_median`` how many records it concerned.

    The default is the literal reading of App. D: a record at the median is not *above* it, and
    "above-median" is the usual name of the split ``x > median(x)``; counting ties as positives
    would make the positive class the majority whenever the median is tied, which is no longer a
    median split of "high" records. NaN where a model's records are all on one side.

    Returns ``model``, ``spearman_rho``, ``auroc``, ``n_records``, ``n_positive``, ``n_at_median``,
    ``positives`` sorted by ρ descending. All models are computed at once from within-model
    average ranks: ρ is the Pearson correlation of the ranks (``scipy.stats.spearmanr``'s
    definition) and AUROC the Mann–Whitney form (rank sum of positives − n₊(n₊+1)/2) / (n₊n₋),
    which equals ``sklearn.metrics.roc_auc_score`` including its half credit for ties; the tests
    check both equalities.
    """
    if median_ties not in MEDIAN_TIES:
        raise ValueError(f"median_ties must be one of {sorted(MEDIAN_TIES)}, got {median_ties!r}")
    frame = pd.DataFrame({"model": np.asarray(list(models)) if not isinstance(models, pd.Series)
                          else models.to_numpy(), "self": np.asarray(self_oi, dtype=float),
                          "judge": np.asarray(judge_oi, dtype=float)})
    if frame[["self", "judge"]].isna().any().any():
        raise ValueError("record-level OI values must not be missing; drop invalid records first")
    grouped = frame.groupby("model", sort=False)
    rank_self = grouped["self"].rank(method="average")
    rank_judge = grouped["judge"].rank(method="average")
    median = grouped["judge"].transform("median")
    positive = frame["judge"] >= median if median_ties == "positive" else frame["judge"] > median
    work = pd.DataFrame({"model": frame["model"], "rs": rank_self, "rj": rank_judge,
                         "pos": positive.astype(float), "pos_rank": rank_self.where(positive, 0.0),
                         "at_median": (frame["judge"] == median).astype(int)})
    work["rs2"], work["rj2"], work["rsj"] = work.rs**2, work.rj**2, work.rs * work.rj
    sums = work.groupby("model", sort=False).sum()
    n = frame.groupby("model", sort=False).size().astype(float)
    cov = sums.rsj - sums.rs * sums.rj / n
    var = (sums.rs2 - sums.rs**2 / n) * (sums.rj2 - sums.rj**2 / n)
    rho = cov / np.sqrt(var.where(var > 0))
    n_pos, n_neg = sums.pos, n - sums.pos
    auroc = (sums.pos_rank - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg).where((n_pos > 0) & (n_neg > 0))
    table = pd.DataFrame({"model": n.index, "spearman_rho": rho.to_numpy(), "auroc": auroc.to_numpy(),
                          "n_records": n.astype(int).to_numpy(), "n_positive": n_pos.astype(int).to_numpy(),
                          "n_at_median": sums.at_median.astype(int).to_numpy(),
                          "positives": MEDIAN_TIES[median_ties]})
    return table.sort_values("spearman_rho", ascending=False, kind="stable").reset_index(drop=True)
