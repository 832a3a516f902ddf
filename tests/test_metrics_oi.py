"""OI rates, composition, breakdowns and the record-level bootstrap."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from mirage_bench.metrics.bootstrap import paired_bootstrap_sums, percentile_ci, record_bootstrap_sums
from mirage_bench.metrics.labels import LABEL_NAMES, encode_labels
from mirage_bench.metrics.oi import (
    bootstrap_oi,
    bootstrap_oi_ci,
    macro_micro,
    model_task_table,
    oi_summary,
    oi_table,
    stereotype_group_table,
)
from mirage_bench.reported import load_reported, reported_statistic


def table1_claims() -> tuple[np.ndarray, np.ndarray]:
    """Claim-level labels and models rebuilt from Table 1 (counts = claims × printed share)."""
    t1 = load_reported("table1")
    t1 = t1[t1.row_type == "model"]
    labels, models = [], []
    for row in t1.itertuples():
        shares = (row.grounded_pct, row.stereotype_pct, row.fabricated_pct)
        g, s, f = (round(row.claims * p / 100) for p in shares)
        counts = [g, row.claims - g - s - f, s, f]
        labels.append(np.repeat(np.arange(4), counts))
        models.append(np.full(row.claims, row.model))
    return np.concatenate(labels), np.concatenate(models)


def synthetic_claims(seed: int = 0, n_models: int = 4, n_personas: int = 30) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    groups = ["stereotypical", "counter_stereotypical", "neutral"]
    for m in range(n_models):
        for p in range(n_personas):
            for t in ("apartment", "gift", "dating"):
                k = int(rng.integers(1, 8))
                probs = rng.dirichlet([2, 2, 1, 2])
                rows += [{"model": f"m{m}", "persona_id": f"p{p}", "task_id": t,
                          "stereotype_type": groups[p % 3], "label": LABEL_NAMES[c]}
                         for c in rng.choice(4, size=k, p=probs)]
    return pd.DataFrame(rows)


def test_reproduces_table1_macro_and_micro() -> None:
    labels, models = table1_claims()
    out = oi_summary(labels, models=models)
    assert out["n_claims"] == reported_statistic("total_claims") == 143_616
    assert out["n_models"] == 12
    assert round(100 * out["macro_oi_rate"], 1) == reported_statistic("macro_oi_pct") == 41.6
    assert round(100 * out["micro_oi_rate"], 1) == reported_statistic("micro_oi_pct") == 41.8
    assert out["micro_oi_rate"] == out["oi_rate"] != out["macro_oi_rate"]
    t1 = load_reported("table1").set_index("model")
    for model, stats_ in out["per_model"].items():
        assert round(100 * stats_["oi_rate"], 1) == pytest.approx(t1.loc[model, "oi_pct"], abs=0.11)
        shares = [stats_[f"{k}_rate"] for k in ("grounded", "reasonable", "stereotype", "fabricated")]
        assert sum(shares) == pytest.approx(1.0)


def test_summary_matches_pandas_groupby() -> None:
    claims = synthetic_claims()
    out = oi_summary(claims.label, models=claims.model, tasks=claims.task_id, groups=claims.stereotype_type)
    is_oi = claims.label.isin(["INFERRED_STEREOTYPE", "FABRICATED"])
    assert out["oi_rate"] == pytest.approx(is_oi.mean())
    by_model = is_oi.groupby(claims.model).mean()
    for model, rate in by_model.items():
        assert out["per_model"][model]["oi_rate"] == pytest.approx(rate)
    assert out["macro_oi_rate"] == pytest.approx(by_model.mean())
    by_model_task = is_oi.groupby([claims.model, claims.task_id]).mean()
    for (model, task), rate in by_model_task.items():
        assert out["per_model_task"][model][task] == pytest.approx(rate)
    by_group = is_oi.groupby(claims.stereotype_type).mean()
    gap = by_group["stereotypical"] - by_group["counter_stereotypical"]
    assert out["stereotype_gap"] == pytest.approx(gap)
    by_model_group = is_oi.groupby([claims.model, claims.stereotype_type]).mean().unstack()
    gaps = by_model_group["stereotypical"] - by_model_group["counter_stereotypical"]
    for model, gap in gaps.items():
        assert out["per_model_stereotype_gap"][model] == pytest.approx(gap)


def test_tables_match_groupby() -> None:
    claims = synthetic_claims(1)
    is_oi = claims.label.isin(["INFERRED_STEREOTYPE", "FABRICATED"])
    table = oi_table(claims, ["model", "task_id"])
    expected = 100 * is_oi.groupby([claims.model, claims.task_id]).mean()
    assert np.allclose(table.oi_pct.to_numpy(), expected.to_numpy())
    assert np.allclose(table.filter(like="_pct").drop(columns="oi_pct").sum(axis=1), 100)
    wide = model_task_table(claims)
    assert wide.loc["pooled", "all"] == pytest.approx(100 * is_oi.mean())
    assert wide.loc["macro", "all"] == pytest.approx(100 * is_oi.groupby(claims.model).mean().mean())
    assert wide.loc["pooled", "gift"] == pytest.approx(100 * is_oi[claims.task_id == "gift"].mean())
    groups = stereotype_group_table(claims)
    assert groups.loc["m0", "delta_pp"] == pytest.approx(
        groups.loc["m0", "stereotypical"] - groups.loc["m0", "counter_stereotypical"])
    assert "pooled" in groups.index


def test_label_spellings_and_errors() -> None:
    assert encode_labels(["G", "reasonable", "INFERRED_STEREOTYPE", "Fabricated"]).tolist() == [0, 1, 2, 3]
    assert encode_labels(np.array([3, 0])).tolist() == [3, 0]
    with pytest.raises(ValueError, match="unknown label"):
        encode_labels(["GROUNDED", "HALLUCINATED"])
    with pytest.raises(ValueError, match="missing"):
        encode_labels(["GROUNDED", None])
    with pytest.raises(ValueError, match="0..3"):
        encode_labels(np.array([4]))
    with pytest.raises(ValueError, match="one value per claim"):
        oi_summary(["G", "F"], models=["a"])
    with pytest.raises(ValueError, match="no claims"):
        oi_summary([])
    with pytest.raises(ValueError, match="lacks column"):
        oi_table(pd.DataFrame({"label": ["G"]}), "model")


def test_macro_micro_helper() -> None:
    assert macro_micro([[1, 0, 0, 1], [3, 0, 0, 1]]) == {"macro_oi_rate": 0.375, "micro_oi_rate": 1 / 3,
                                                        "n_models": 2, "n_models_without_claims": 0}


def test_record_bootstrap_resamples_records_not_claims() -> None:
    # Two records: one all-OI with 9 claims, one clean with 1 claim. Resampling records gives OI in
    # {0, 0.9, 1}; resampling claims would give many intermediate values.
    labels = ["F"] * 9 + ["G"]
    records = ["a"] * 9 + ["b"]
    out = bootstrap_oi(labels, records, n_resamples=2000, return_samples=True)
    assert set(np.unique(np.round(out["samples"][:, 0], 6))) <= {0.0, 0.9, 1.0}
    assert out["per_model"]["all"]["n_records"] == 2


def test_bootstrap_ci_agrees_with_scipy() -> None:
    claims = synthetic_claims(2, n_models=1, n_personas=60)
    claims["record"] = claims.persona_id + "/" + claims.task_id
    low, high = bootstrap_oi_ci(claims.label, claims.record, n_resamples=10_000, seed=1)
    per = claims.assign(oi=claims.label.isin(["INFERRED_STEREOTYPE", "FABRICATED"])).groupby("record").oi.agg(
        ["sum", "size"])
    ref = stats.bootstrap((per["sum"].to_numpy(), per["size"].to_numpy()),
                          lambda s, n, axis=-1: s.sum(axis=axis) / n.sum(axis=axis), paired=True,
                          vectorized=True, n_resamples=10_000, method="percentile", rng=2)
    assert low == pytest.approx(ref.confidence_interval.low, abs=0.01)
    assert high == pytest.approx(ref.confidence_interval.high, abs=0.01)
    point = per["sum"].sum() / per["size"].sum()
    assert low < point < high


def test_bootstrap_designs_and_aggregates() -> None:
    claims = synthetic_claims(3)
    records = claims.persona_id + "/" + claims.task_id
    paired = bootstrap_oi(claims.label, records, models=claims.model, n_resamples=3000, seed=0)
    strat = bootstrap_oi(claims.label, records, models=claims.model, n_resamples=3000, seed=0, paired=False)
    assert paired["design"] == "paired" and strat["design"] == "stratified"
    summary = oi_summary(claims.label, models=claims.model)
    for out in (paired, strat):
        assert out["micro"]["oi_rate"] == pytest.approx(summary["micro_oi_rate"])
        assert out["macro"]["oi_rate"] == pytest.approx(summary["macro_oi_rate"])
        for name in ("micro", "macro"):
            assert out[name]["ci_low"] < out[name]["oi_rate"] < out[name]["ci_high"]
        for model, stats_ in out["per_model"].items():
            assert stats_["oi_rate"] == pytest.approx(summary["per_model"][model]["oi_rate"])
            assert stats_["ci_low"] < stats_["oi_rate"] < stats_["ci_high"]
            assert stats_["n_records"] == 90
    # per-model intervals agree between designs (same records, same resampling of each model)
    for model in paired["per_model"]:
        assert paired["per_model"][model]["ci_low"] == pytest.approx(
            strat["per_model"][model]["ci_low"], abs=0.03)
    # a 99% interval is wider than a 90% one, from the same resamples
    wide = bootstrap_oi(claims.label, records, models=claims.model, n_resamples=3000, confidence=0.99)
    narrow = bootstrap_oi(claims.label, records, models=claims.model, n_resamples=3000, confidence=0.90)
    def width(out: dict) -> float:
        return out["micro"]["ci_high"] - out["micro"]["ci_low"]

    assert width(wide) > width(narrow)


def test_bootstrap_primitives() -> None:
    values = np.array([[1, 3], [0, 2], [4, 4], [2, 5]])
    sums = record_bootstrap_sums(values, strata=np.array([0, 0, 1, 1]), n_resamples=500, seed=0)
    assert sums.shape == (500, 2, 2)
    assert set(np.unique(sums[:, 0, 1])) <= {4, 5, 6}  # two draws from claim counts {3, 2}
    dense = np.stack([values, values[::-1]])
    paired = paired_bootstrap_sums(dense, n_resamples=300, seed=0)
    assert paired.shape == (300, 2, 2) and (paired[..., 0] <= paired[..., 1]).all()
    assert (paired[:, 0, 1] + paired[:, 1, 1]).min() >= 4 * 2
    # large counts take the 64-bit packing; sums stay exact
    big = np.array([[40_000, 50_000], [0, 70_000]])
    sums = record_bootstrap_sums(big, n_resamples=50, seed=0)[:, 0]
    assert set(map(tuple, sums.tolist())) <= {(80_000, 100_000), (40_000, 120_000), (0, 140_000)}
    with pytest.raises(ValueError, match="too large"):
        record_bootstrap_sums(np.array([[2**30, 2**30], [0, 1]]), n_resamples=2)
    with pytest.raises(ValueError, match="non-negative"):
        record_bootstrap_sums(np.array([[-1, 2]]), n_resamples=2)
    with pytest.raises(ValueError, match="confidence"):
        percentile_ci(np.arange(3.0), 1.5)
