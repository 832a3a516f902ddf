"""Accum statistics: Eq. (4), OLS slope and R², removal and retraction rates."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from mirage_bench.metrics.accumulation import (
    accum_frames,
    accumulation_report,
    accumulation_summary,
    removal_rate,
    retraction_rate,
)
from mirage_bench.reported import load_reported


def test_eq4_on_complete_and_truncated_panels() -> None:
    """Eq. 4, (R_T − R_1) / (T − 1), against an independent computation on random panels."""
    rng = np.random.default_rng(1)
    rows = []
    for model, rate in (("fast", 15.0), ("slow", 0.6)):
        for persona in range(5):
            start = rng.uniform(0, 20)
            rows += [{"model": model, "persona_id": f"p{persona}", "round": t,
                      "n_attributes": start + rate * (t - 1) + rng.normal(0, 2)} for t in range(1, 9)]
    frame = pd.DataFrame(rows)
    out = accumulation_summary(frame).set_index("model")
    for model in ("fast", "slow"):
        part = frame[frame.model == model]
        r1 = part[part["round"] == 1].n_attributes.mean()
        r8 = part[part["round"] == 8].n_attributes.mean()
        assert out.loc[model, "r_first"] == pytest.approx(r1)
        assert out.loc[model, "r_last"] == pytest.approx(r8)
        assert out.loc[model, "growth"] == pytest.approx(r8 - r1)
        assert out.loc[model, "per_round"] == pytest.approx((r8 - r1) / 7)
        assert out.loc[model, "n_personas"] == 5 and out.loc[model, "n_truncated"] == 0
    # a persona that stopped after round 4 contributes its own (last − first) / 3, nothing else
    cut = frame[~((frame.model == "fast") & (frame.persona_id == "p0") & (frame["round"] > 4))]
    truncated = accumulation_summary(cut).set_index("model").loc["fast"]
    fast = frame[frame.model == "fast"].pivot(index="persona_id", columns="round", values="n_attributes")
    rates = [(fast.loc[p, 8] - fast.loc[p, 1]) / 7 for p in fast.index if p != "p0"]
    rates.append((fast.loc["p0", 4] - fast.loc["p0", 1]) / 3)
    assert truncated.per_round == pytest.approx(np.mean(rates))
    assert truncated.n_truncated == 1
    assert truncated.r_last == pytest.approx(fast.loc[fast.index != "p0", 8].mean())


def test_table4_rows_satisfy_eq4() -> None:
    # The transcribed Table 4: per-round = growth / 7 and growth = R8 − R1, up to the printed rounding.
    t4 = load_reported("table4")
    assert (abs(t4.r8_attributes - t4.r1_attributes - t4.growth) <= 0.051).all()
    assert (abs(t4.growth / 7 - t4.per_round) <= 0.051).all()


def test_ols_matches_scipy_linregress() -> None:
    rng = np.random.default_rng(0)
    rows = [{"model": m, "persona_id": p, "round": t, "n_attributes": 3 + s * t + rng.normal(0, 4)}
            for m, s in (("fast", 15.0), ("flat", 0.1)) for p in ("a", "b") for t in range(1, 9)]
    frame = pd.DataFrame(rows)
    out = accumulation_summary(frame).set_index("model")
    for model, part in frame.groupby("model"):
        fit = stats.linregress(part["round"], part["n_attributes"])
        assert out.loc[model, "slope"] == pytest.approx(fit.slope)
        assert out.loc[model, "intercept"] == pytest.approx(fit.intercept)
        assert out.loc[model, "r2"] == pytest.approx(fit.rvalue**2)
        assert out.loc[model, "n_obs"] == 16
    assert out.loc["fast", "r2"] > 0.9
    constant = accumulation_summary(pd.DataFrame({"model": "m", "persona_id": "a", "round": [1, 2],
                                                  "n_attributes": [3, 3]}))
    assert np.isnan(constant.r2.iloc[0]) and constant.slope.iloc[0] == 0


def test_removal_rate_by_hand() -> None:
    memories = pd.DataFrame([
        # persona a: {x, y} -> {x, z} -> {x, z}: removal 1/2 then 0 -> mean 0.25
        ("m", "a", 1, "x"), ("m", "a", 1, "y"), ("m", "a", 2, "X "), ("m", "a", 2, "z"),
        ("m", "a", 3, "x"), ("m", "a", 3, "z"),
        # persona b: {u} -> {v}: removal 1 -> mean 1.0 ; round 3 missing (not observed)
        ("m", "b", 1, "u"), ("m", "b", 2, "v"),
    ], columns=["model", "persona_id", "round", "entry"])
    out = removal_rate(memories).set_index("model")
    assert out.loc["m", "removal_rate"] == pytest.approx((0.25 + 1.0) / 2)
    assert out.loc["m", "n_personas"] == 2 and out.loc["m", "n_transitions"] == 3
    # an observed but empty round 3 for persona b: v was removed too
    observed = pd.DataFrame({"model": "m", "persona_id": ["a"] * 3 + ["b"] * 3, "round": [1, 2, 3] * 2})
    out = removal_rate(memories, observed_rounds=observed).set_index("model")
    assert out.loc["m", "removal_rate"] == pytest.approx((0.25 + 1.0) / 2)
    assert out.loc["m", "n_transitions"] == 4


def test_retraction_rate() -> None:
    checks = pd.DataFrame({"model": ["m", "m", "m", "n"], "persona_id": ["a", "b", "c", "a"], "round": 6,
                           "previously_stored": [True, True, False, False],
                           "retracted": [True, False, None, None]})
    out = retraction_rate(checks).set_index("model")
    assert out.loc["m", "retraction_rate"] == 0.5 and out.loc["m", "stored_rate"] == pytest.approx(2 / 3)
    assert np.isnan(out.loc["n", "retraction_rate"])
    with pytest.raises(ValueError, match="lacks column"):
        retraction_rate(checks.drop(columns="retracted"))


def accum_record(model: str, persona: str, rounds: list[list[str]], contradiction_round: int = 3,
                 retracted: bool | None = True) -> dict:
    out = {"model": model, "persona_id": persona, "condition": "accum_update", "status": "ok", "rounds": []}
    for t, inferred in enumerate(rounds, start=1):
        rnd = {"round": t, "status": "ok", "n_inferred": len(inferred),
               "memory": {"observed": ["fact"], "predictions": inferred}}
        if t == contradiction_round:
            rnd["contradiction"] = {"attribute": "city", "contradicts": "lives in a big city",
                                    "previously_stored": retracted is not None, "retracted": retracted}
        out["rounds"].append(rnd)
    out["rounds"].append({"round": len(rounds) + 1, "status": "parse_failure", "memory": None})
    return out


def test_accum_frames_and_report_from_records() -> None:
    records = [accum_record("m", "a", [["x"], ["x", "y"], ["y", "z", "w"]]),
               accum_record("m", "b", [["x"], ["x", "q"], ["x", "q", "r"]], retracted=False)]
    counts, memories, checks, observed = accum_frames(records)
    assert len(counts) == 6 and len(observed) == 6  # the failed round 4 is not observed
    assert counts.n_attributes.tolist() == [1, 2, 3, 1, 2, 3]
    assert set(memories.entry) == {"x", "y", "z", "w", "q", "r"}  # "observed" entries excluded
    report = accumulation_report(records).set_index(["model", "condition"]).iloc[0]
    assert report.growth == 2 and report.per_round == 1 and report.r2 == pytest.approx(1.0)
    # removal: a: 0, 1/2 ; b: 0, 0 -> (0.25 + 0) / 2
    assert report.removal_rate == pytest.approx(0.125)
    assert report.n_stored == 2 and report.retraction_rate == 0.5
    with pytest.raises(ValueError, match="no successful"):
        accumulation_report([])


def test_accum_frames_reads_the_engines_record_model_with_several_checks_per_round() -> None:
    """The metrics read what the engine writes: ``AccumRecord`` rounds hold a list of checks."""
    from mirage_bench.instruments.records import AccumRecord

    legacy = accum_record("m", "a", [["x"], ["x", "y"], ["y"]])
    current = AccumRecord.model_validate({**legacy, "stereotype_type": "neutral", "initial_memory": {}})
    dumped = current.model_dump(mode="json")
    dumped["rounds"][2]["contradictions"].append(
        {"attribute": "pet", "contradicts": "has a dog", "previously_stored": True, "retracted": False}
    )
    assert "contradiction" not in dumped["rounds"][2]
    _, _, checks, _ = accum_frames([dumped])
    assert checks.attribute.tolist() == ["city", "pet"]
    assert checks.retracted.tolist() == [True, False]
    report = accumulation_report([dumped]).iloc[0]
    assert report.n_stored == 2 and report.retraction_rate == 0.5
