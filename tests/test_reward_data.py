"""Record types and JSONL handling of the reward area."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mirage_bench.reward.data import (
    DataError,
    PreferencePair,
    ScoreRecord,
    clear_pairs,
    load_pairs,
    read_jsonl,
    scored_pairs,
    write_jsonl,
)
from tests.helpers_records import synthetic_pair

FIX = Path(__file__).parent / "fixtures" / "reward"


def _pair(pid: str, pref: str | None) -> PreferencePair:
    return synthetic_pair(pair_id=pid, preference=pref)


@pytest.mark.parametrize(
    ("pref", "prefers", "strength", "clear"),
    [
        ("memory_much_better", True, "much", True),
        ("memory_slightly_better", True, "slightly", False),
        ("about_same", None, "tie", False),
        ("no_memory_slightly_better", False, "slightly", False),
        ("no_memory_much_better", False, "much", True),
        (None, None, None, False),
    ],
)
def test_five_point_scale_maps_to_direction_and_strength(pref, prefers, strength, clear):
    p = _pair("x", pref)
    assert (p.human_prefers_memory, p.strength, p.is_clear) == (prefers, strength, clear)


def test_roundtrip_and_extra_fields_are_kept(tmp_path):
    pairs = load_pairs(FIX / "seed_003_appendix_b.jsonl")
    assert pairs[0].source == "seed_003_appendix_b" and len(pairs[0].memories) == 9
    out = write_jsonl(tmp_path / "p.jsonl", pairs)
    again = load_pairs(out)
    assert again[0].model_dump() == pairs[0].model_dump()
    assert "note" in json.loads(out.read_text().splitlines()[0])


def test_bad_input_names_file_and_line(tmp_path):
    good = _pair("a", None).model_dump_json()
    path = tmp_path / "bad.jsonl"
    path.write_text(good + "\n{not json\n")
    with pytest.raises(DataError, match=r"bad.jsonl:2: not JSON"):
        load_pairs(path)
    path.write_text(good + "\n" + json.dumps({"pair_id": "b"}) + "\n")
    with pytest.raises(DataError, match=r"bad.jsonl:2: invalid PreferencePair"):
        load_pairs(path)
    path.write_text(good + "\n" + good + "\n")
    with pytest.raises(DataError, match="duplicate pair_id 'a'"):
        load_pairs(path)
    with pytest.raises(DataError, match="no such file"):
        load_pairs(tmp_path / "missing.jsonl")
    bad_pref = json.loads(good) | {"preference": "A much better"}
    path.write_text(json.dumps(bad_pref) + "\n")
    with pytest.raises(DataError, match="preference"):
        load_pairs(path)


def test_scored_pairs_drop_ties_failures_and_reject_unknown_ids():
    pairs = [
        _pair("a", "memory_much_better"),
        _pair("b", "about_same"),
        _pair("c", "no_memory_slightly_better"),
    ]
    scores = [
        ScoreRecord(pair_id="a", method="m", p_memory=0.7),
        ScoreRecord(pair_id="b", method="m", p_memory=0.2),
        ScoreRecord(pair_id="c", method="m", error="timeout"),
    ]
    rows = scored_pairs(pairs, scores)
    assert [(r.pair_id, r.human_prefers_memory, r.strength) for r in rows] == [("a", True, "much")]
    with pytest.raises(DataError, match="unknown pair_id"):
        scored_pairs(pairs, [ScoreRecord(pair_id="zz", method="m", p_memory=0.5)])
    assert [p.pair_id for p in clear_pairs(pairs)] == ["a"]


def test_score_record_rejects_out_of_range_probability(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps({"pair_id": "a", "method": "m", "p_memory": 1.5}) + "\n")
    with pytest.raises(DataError, match="s.jsonl:1"):
        read_jsonl(path, ScoreRecord)


def test_fixtures_are_marked_synthetic():
    for p in load_pairs(FIX / "synthetic_pairs.jsonl"):
        assert p.source == "synthetic" and p.pair_id.startswith("synthetic_")
