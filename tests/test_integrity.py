"""Degenerate-submission detectors, checked on the held-out corpus (the thresholds were tuned on
``tests/fixtures/integrity/tuning.jsonl``; these tests read only ``heldout.jsonl`` and the real
model outputs of ``smollm2_135m.jsonl``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mirage_bench.leaderboard import integrity
from tests.integrity_corpus import submissions

HELDOUT = submissions("heldout")

EXPECTED = {
    "refusal": {"refusal", "near_duplicate"},
    "near_empty": {"near_empty", "near_duplicate"},
    "echo": {"copies_facts"},
    "template": {"near_duplicate"},
    "boilerplate": {"near_duplicate"},
}


def kinds(flags: list[str]) -> set[str]:
    return {f.split(":")[0] for f in flags}


def test_ordinary_heldout_submission_is_not_flagged() -> None:
    report = integrity.analyze(HELDOUT["ordinary"])
    assert report.flags == []
    assert report.shares["near_duplicate"] == 0.0
    assert report.stats["distinct_share"] == 1.0


@pytest.mark.parametrize("name", [n for n in HELDOUT if n != "ordinary"])
def test_every_degenerate_heldout_submission_is_flagged(name: str) -> None:
    report = integrity.analyze(HELDOUT[name])
    expected = EXPECTED[name.split()[0]]
    assert expected <= kinds(report.flags), (name, report.flags, report.shares)
    for flag in report.flags:
        assert "% of responses" in flag and "threshold" in flag


def test_heldout_is_disjoint_from_tuning() -> None:
    tuning = submissions("tuning")
    pairs = lambda subs: {(r["persona_id"], r["task_id"]) for r in subs["ordinary"]}  # noqa: E731
    assert not pairs(tuning) & pairs(HELDOUT)
    texts = lambda subs: {r["response"] for recs in subs.values() for r in recs}  # noqa: E731
    assert not texts(tuning) & texts(HELDOUT)


def test_a_partly_degenerate_submission_is_flagged_by_share() -> None:
    ordinary = HELDOUT["ordinary"]
    refusal = HELDOUT["refusal 2"]
    mixed = ordinary[:9] + refusal[9:]  # 3 of 12 refusals = 25 % >= the 20 % threshold
    report = integrity.analyze(mixed)
    assert "refusal" in kinds(report.flags)
    assert report.shares["refusal"] == pytest.approx(3 / 12)
    assert sorted(report.flagged["refusal"]) == sorted((r["persona_id"], r["task_id"]) for r in refusal[9:])
    one = ordinary[:11] + refusal[11:]  # one refusal in twelve: an ordinary model may refuse once
    assert "refusal" not in kinds(integrity.analyze(one).flags)


def test_a_long_answer_that_asks_a_follow_up_is_not_a_refusal() -> None:
    records = [
        {**r, "response": r["response"] + " Could you tell me more about your budget so I can refine this?"}
        for r in HELDOUT["ordinary"]
    ]
    report = integrity.analyze(records)
    assert report.shares["refusal"] == 0.0
    assert report.flags == []


def test_a_tiny_submission_gets_no_share_verdict() -> None:
    records = HELDOUT["near_empty 1"][: integrity.DEFAULT_THRESHOLDS.min_responses - 1]
    assert integrity.analyze(records).flags == []


def test_personas_without_facts_are_compared_for_duplicates_only() -> None:
    text = "Same words for everyone here."
    records = [{"persona_id": f"x{i}", "task_id": "gift", "response": text} for i in range(8)]
    report = integrity.analyze(records, facts={})
    assert kinds(report.flags) == {"near_duplicate", "near_empty"}
    assert report.shares["copies_facts"] == 0.0


def test_injection_flag_counts_flagged_responses_and_kinds() -> None:
    judgments = [
        {"injection_flag": True, "injection_signals": ["ignore_instructions", "taxonomy_token"]},
        {"injection_flag": True, "injection_signals": ["taxonomy_token"]},
        {"injection_flag": False, "injection_signals": []},
    ]
    assert integrity.injection_flag(judgments) == [
        "injection: 2 of 3 responses flagged (taxonomy_token 2, ignore_instructions 1)"
    ]
    assert integrity.injection_flag(judgments[2:]) == []


def test_real_outputs_of_a_small_model_are_varied_but_unpersonalized() -> None:
    """Held-out real model outputs (``smollm2_135m.jsonl``, see ``make_smollm2.py``): SmolLM2-135M writes
    varied text (no near-duplicate, copy, refusal or near-empty flag) that ignores the user's facts, and
    is flagged exactly for that."""
    import json

    path = Path(__file__).parent / "fixtures" / "integrity" / "smollm2_135m.jsonl"
    records = [json.loads(x) for x in path.read_text("utf-8").splitlines() if x.strip()]
    report = integrity.analyze(records)
    assert kinds(report.flags) == {"unpersonalized"}
    assert report.shares["near_duplicate"] < integrity.DEFAULT_THRESHOLDS.duplicate_share
    assert report.shares["unpersonalized"] == pytest.approx(9 / 12)
    assert report.stats["distinct_share"] == 1.0
