"""The ten statistics edge cases of issue 13: each test failed on the code before the fix."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from mirage_bench.instruments.records import AccumRecord, AccumRound
from mirage_bench.metrics.accumulation import accumulation_report, accumulation_summary
from mirage_bench.metrics.agreement import agreement
from mirage_bench.metrics.oi import bootstrap_oi, macro_micro, oi_summary
from mirage_bench.metrics.reward import reward_accuracy
from mirage_bench.metrics.selfmon import cross_model_spearman, within_model_signal


def _accum_record(memories: list[dict[str, list[str]] | None], *, persona: str = "p1",
                  condition: str = "accum_update_prune_control") -> AccumRecord:
    rounds = [
        AccumRound(round=i, status="ok", memory=m,
                   n_inferred=0 if m is None else sum(len(v) for k, v in m.items() if k != "observed"),
                   n_stored=0 if m is None else sum(len(v) for v in m.values()))
        for i, m in enumerate(memories, start=1)
    ]
    return AccumRecord(model="m", persona_id=persona, stereotype_type="neutral", condition=condition,
                       status="ok", initial_memory={"observed": ["fact a", "fact b", "fact c"]},
                       rounds=rounds)


# 1. The removal rate users see (summary.json / report) is metrics.accumulation's.
def test_summary_removal_rate_is_app_f_definition() -> None:
    from mirage_bench.instruments.summary import summarize

    observed = ["fact a", "fact b", "fact c"]
    # every round replaces all inferred entries: App. F's removal rate is 100 %
    replacing = _accum_record([{"observed": observed, "predictions": [f"guess {r}a", f"guess {r}b"]}
                               for r in range(1, 9)])
    # a second persona that keeps everything and adds one entry per round: 0 %
    keeping = _accum_record([{"observed": observed, "predictions": [f"kept {i}" for i in range(r)]}
                             for r in range(1, 9)], persona="p2")
    summary = summarize([], [], [], [replacing, keeping], model="m", judge=None, smoke_test=False)
    accum = summary["accum"]["accum_update_prune_control"]
    assert accum["removal_rate"] == pytest.approx(0.5)  # per-persona average of 1.0 and 0.0
    alone = summarize([], [], [], [replacing], model="m", judge=None, smoke_test=False)
    assert alone["accum"]["accum_update_prune_control"]["removal_rate"] == pytest.approx(1.0)
    table = accumulation_report([replacing.model_dump(mode="json"), keeping.model_dump(mode="json")])
    assert accum["removal_rate"] == pytest.approx(float(table.removal_rate.iloc[0]))


# 2. Eq. 4 and the slope when a persona stops early.
def test_eq4_and_slope_with_a_persona_that_stops_early() -> None:
    a = [{"model": "m", "persona_id": "a", "round": t, "n_attributes": 10 * t} for t in range(1, 9)]
    b = [{"model": "m", "persona_id": "b", "round": t, "n_attributes": 50 + 10 * t} for t in range(1, 5)]
    row = accumulation_summary(pd.DataFrame(a + b)).iloc[0]
    assert row.per_round == pytest.approx(10.0)
    assert row.slope == pytest.approx(10.0)
    assert row.n_truncated == 1


def test_missing_counts_are_an_error_not_dropped() -> None:
    counts = pd.DataFrame({"model": "m", "persona_id": "a", "round": [1, 2, 3],
                           "n_attributes": [1.0, np.nan, 3.0]})
    with pytest.raises(ValueError, match="missing"):
        accumulation_summary(counts)


# 3. A constant input has no Spearman p-value.
def test_constant_input_gives_nan_p_value() -> None:
    out = cross_model_spearman([0.2] * 6, [1, 2, 3, 4, 5, 6], n_resamples=50)
    assert np.isnan(out["rho"]) and np.isnan(out["p_value"])


# 4. Macro-F1 averages the classes that occur.
def test_macro_f1_ignores_absent_classes() -> None:
    labels = ["GROUNDED", "FABRICATED"] * 5
    out = agreement(labels, labels)
    assert out["macro_f1"] == 1.0
    assert out["macro_f1_classes"] == ["GROUNDED", "FABRICATED"]
    assert np.isnan(out["per_class_f1"]["INFERRED_REASONABLE"])


# 5. The paired-bootstrap macro CI is over resamples holding every model.
def test_paired_macro_ci_uses_resamples_with_every_model() -> None:
    records = [f"r{i}" for i in range(60)]
    labels = ["F" if i % 3 == 0 else "G" for i in range(60)] + ["G"]
    models = ["a"] * 60 + ["b"]
    out = bootstrap_oi(labels, records + ["r0"], models=models, n_resamples=2000, seed=3,
                       return_samples=True)
    samples = out["samples"]
    complete = np.isfinite(samples).all(axis=1)
    assert out["macro"]["n_degenerate"] == int((~complete).sum()) > 0
    expected = np.percentile(samples[complete].mean(axis=1), [2.5, 97.5])
    assert (out["macro"]["ci_low"], out["macro"]["ci_high"]) == pytest.approx(tuple(expected))


# 6. Selective accuracy does not depend on the order of tied confidences.
def test_selective_accuracy_averages_the_tied_block() -> None:
    p = np.array([0.95, 0.7, 0.7, 0.7, 0.7])
    y = np.array([1, 1, 0, 0, 0])
    forward = reward_accuracy(p, y, coverages=(0.4,))["selective_accuracy"][0.4]
    backward = reward_accuracy(p[::-1], y[::-1], coverages=(0.4,))["selective_accuracy"][0.4]
    assert forward == backward == pytest.approx((1 + 0.25) / 2)


# 7. A round whose memory was not stored is not a 100 % removal.
def test_round_without_stored_memory_is_not_a_removal() -> None:
    observed = ["fact a", "fact b", "fact c"]
    mem = {"observed": observed, "predictions": ["lives alone", "likes jazz"]}
    record = _accum_record([mem, None, mem, mem])
    table = accumulation_report([record.model_dump(mode="json")])
    assert float(table.removal_rate.iloc[0]) == 0.0


# 8. A leaderboard row is one model's.
def test_leaderboard_row_refuses_two_models() -> None:
    from mirage_bench.leaderboard.board import measured_row

    claims = pd.DataFrame({"model": ["a", "b"], "judge": "j", "persona_id": "p", "stereotype_type": "neutral",
                           "task_id": "t", "claim_index": [0, 0], "claim": "c", "label": "GROUNDED"})
    with pytest.raises(ValueError, match="exactly one model"):
        measured_row(claims, n_resamples=10)


# 9. A model with zero claims, or lacking a group, is left out rather than NaN.
def test_zero_claim_model_and_missing_group_are_left_out() -> None:
    out = macro_micro([[1, 0, 0, 1], [0, 0, 0, 0]])
    assert out["macro_oi_rate"] == 0.5 and out["n_models"] == 1
    summary = oi_summary(["F", "G", "F", "G"], models=["a", "a", "b", "b"],
                         groups=["stereotypical", "counter_stereotypical", "stereotypical", "stereotypical"])
    assert summary["per_model_stereotype_gap"] == {"a": 1.0}


# 10. The within-model AUROC's positives: a parameter, reported, default strictly above the median.
def test_auroc_median_convention_is_a_reported_parameter() -> None:
    rng = np.random.default_rng(7)
    judge = rng.integers(0, 5, 200).astype(float)  # heavy ties at the median
    self_ = judge + rng.normal(0, 1.5, 200)
    models = ["m"] * 200
    strict = within_model_signal(self_, judge, models).iloc[0]
    ties = within_model_signal(self_, judge, models, median_ties="positive").iloc[0]
    median = np.median(judge)
    assert strict.auroc == pytest.approx(roc_auc_score(judge > median, self_))
    assert ties.auroc == pytest.approx(roc_auc_score(judge >= median, self_))
    assert strict.auroc != pytest.approx(ties.auroc)
    assert strict.positives == "above_median" and ties.positives == "at_or_above_median"
    assert strict.n_at_median == int((judge == median).sum())
    with pytest.raises(ValueError, match="median_ties"):
        within_model_signal(self_, judge, models, median_ties="both")
