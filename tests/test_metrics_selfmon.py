"""Self-monitoring: Table 2's pattern and Spearman statistics, Table 6's within-model signal."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import roc_auc_score

from mirage_bench.metrics.selfmon import (
    PATTERN_THRESHOLD_PP,
    cross_model_spearman,
    monitoring_pattern,
    self_monitoring_table,
    weighted_spearman,
    within_model_signal,
)
from mirage_bench.reported import load_reported, reported_statistic


@pytest.fixture(scope="module")
def table2_stats() -> dict:
    t2 = load_reported("table2")
    return cross_model_spearman(t2.self_oi_pct, t2.judge_oi_pct, families=t2.family, seed=0)


def test_reproduces_table2_rho_and_p(table2_stats: dict) -> None:
    assert round(table2_stats["rho"], 2) == reported_statistic("self_vs_judge_spearman_rho") == -0.60
    # Monte Carlo permutation p (100,000 permutations): the paper prints 0.044
    assert 0.035 < table2_stats["p_value"] < 0.05
    assert table2_stats["p_value_exact"] is False and table2_stats["n"] == 12


def test_reproduces_table2_bootstrap_cis(table2_stats: dict) -> None:
    low, high = table2_stats["ci"]
    assert low == pytest.approx(reported_statistic("self_vs_judge_bootstrap_ci_low"), abs=0.03)
    assert high == pytest.approx(reported_statistic("self_vs_judge_bootstrap_ci_high"), abs=0.05)
    clow, chigh = table2_stats["ci_clustered"]
    assert clow == pytest.approx(reported_statistic("self_vs_judge_clustered_ci_low"), abs=0.03)
    assert chigh == pytest.approx(reported_statistic("self_vs_judge_clustered_ci_high"), abs=0.05)
    assert table2_stats["n_families"] == 7


def test_reproduces_table2_patterns() -> None:
    t2 = load_reported("table2")
    table = self_monitoring_table(t2.model, t2.self_oi_pct, t2.judge_oi_pct)
    expected = t2.set_index("model")
    assert list(table.model) == list(t2.model)  # Table 2 is sorted by gap, descending
    for row in table.itertuples():
        # the paper's gap is computed before rounding: printed inputs differ by up to 0.05 + 0.05,
        # the printed gap by another 0.05 (GPT-5.5: 38.5 − 46.4 = −7.9, printed −8.0)
        assert row.gap_pp == pytest.approx(expected.loc[row.model, "gap_pp"], abs=0.151)
        assert row.pattern == expected.loc[row.model, "pattern"]
    # the threshold sits inside the interval the table allows
    calib = t2[t2.pattern == "Calib."].gap_pp.abs().max()
    other = t2[t2.pattern != "Calib."].gap_pp.abs().min()
    assert calib <= PATTERN_THRESHOLD_PP < other
    with pytest.raises(ValueError, match="NaN"):
        monitoring_pattern(float("nan"))


def test_weighted_spearman_equals_scipy_on_replicated_data() -> None:
    rng = np.random.default_rng(4)
    x = rng.integers(0, 4, 9).astype(float)  # ties
    y = rng.normal(size=9)
    weights = rng.multinomial(9, np.full(9, 1 / 9), size=200)
    ours = weighted_spearman(x, y, weights)
    ref = []
    for w in weights:
        xr, yr = np.repeat(x, w), np.repeat(y, w)
        ref.append(np.nan if np.ptp(xr) == 0 or np.ptp(yr) == 0 else stats.spearmanr(xr, yr).statistic)
    assert np.allclose(ours, np.array(ref), equal_nan=True)


def test_exact_permutation_p_matches_scipy() -> None:
    x = np.array([3.0, 1, 2, 5, 4, 6])
    y = np.array([1.0, 2, 3, 4, 6, 5])
    ours = cross_model_spearman(x, y, n_resamples=100)
    ref = stats.permutation_test((x,), lambda a: stats.spearmanr(a, y).statistic, permutation_type="pairings",
                                 n_resamples=np.inf)
    assert ours["p_value_exact"] is True
    assert ours["p_value"] == pytest.approx(ref.pvalue)
    assert ours["rho"] == pytest.approx(stats.spearmanr(x, y).statistic)


def test_spearman_input_errors() -> None:
    with pytest.raises(ValueError, match="at least 3"):
        cross_model_spearman([1, 2], [2, 1])
    with pytest.raises(ValueError, match="same length"):
        cross_model_spearman([1, 2, 3], [2, 1])
    with pytest.raises(ValueError, match="one family per model"):
        cross_model_spearman([1, 2, 3], [3, 1, 2], families=["a", "b"])


@pytest.mark.parametrize(("median_ties", "positive"),
                         [("negative", np.greater), ("positive", np.greater_equal)])
def test_within_model_signal_matches_sklearn(median_ties, positive) -> None:
    rng = np.random.default_rng(5)
    judge = rng.uniform(0, 100, 300)
    self_ = judge + rng.normal(0, 30, 300)
    models = np.repeat(["a", "b", "c"], 100)
    self_[200:] = rng.uniform(0, 100, 100)  # model c: no signal
    table = within_model_signal(self_, judge, models, median_ties=median_ties).set_index("model")
    for model, lo in (("a", 0), ("b", 100)):
        j, s = judge[lo:lo + 100], self_[lo:lo + 100]
        assert table.loc[model, "auroc"] == pytest.approx(roc_auc_score(positive(j, np.median(j)), s))
        assert table.loc[model, "spearman_rho"] == pytest.approx(stats.spearmanr(s, j).statistic)
        assert table.loc[model, "n_records"] == 100
    assert table.loc["a", "auroc"] > 0.7 and abs(table.loc["c", "auroc"] - 0.5) < 0.15
    # heavy ties (OI% of short records): each convention equals sklearn on its own positives
    tied_self, tied_judge = np.round(self_ / 25), np.round(judge / 20)
    tied = within_model_signal(tied_self, tied_judge, models, median_ties=median_ties).set_index("model")
    for model, lo in (("a", 0), ("b", 100), ("c", 200)):
        j, s = tied_judge[lo:lo + 100], tied_self[lo:lo + 100]
        assert tied.loc[model, "auroc"] == pytest.approx(roc_auc_score(positive(j, np.median(j)), s))
        assert tied.loc[model, "n_positive"] == int(positive(j, np.median(j)).sum())
        assert tied.loc[model, "n_at_median"] == int((j == np.median(j)).sum())
        assert tied.loc[model, "spearman_rho"] == pytest.approx(stats.spearmanr(s, j).statistic)
    constant = within_model_signal([1.0, 2.0, 3.0], [5.0, 5.0, 5.0], ["m", "m", "m"])
    assert np.isnan(constant.auroc.iloc[0])
