"""Pair construction: retrieval, generation with and without memory, screening, top-k, regimes."""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path

import pytest

from mirage_bench.reward.data import Participant, read_jsonl
from mirage_bench.reward.pairs import build_pairs
from mirage_bench.reward.retrieval import make_embedder, top_k
from mirage_bench.reward.synthetic import synthetic_client

FIX = Path(__file__).parent / "fixtures" / "reward"


def test_build_pairs_screens_keeps_top_and_balances_regimes():
    people = read_jsonl(FIX / "synthetic_participants.jsonl", Participant)
    record: list = []
    gens = {"gen_a": synthetic_client(record), "gen_b": synthetic_client(record)}
    report = asyncio.run(
        build_pairs(
            people, gens, synthetic_client(record), make_embedder("hashing"), k=4, per_participant=3, seed=1
        )
    )
    assert len(report.pairs) == 3 * len(people) and not report.dropped
    for person in people:
        mine = [p for p in report.pairs if p.participant_id == person.participant_id]
        assert Counter(p.regime for p in mine) == Counter({"conservative": 1, "ordinary": 1, "aggressive": 1})
        for p in mine:
            assert len(p.memories) == 4 and set(p.memories) <= set(person.memories)
            assert p.preference is None and p.source == "synthetic" and p.generator in gens
    screened = sorted((p.screening_score for p in report.pairs), reverse=True)
    assert screened[0] >= screened[-1]
    systems = [text for title, text in record if title is None]
    assert systems, "generation calls go through the client"


def test_failed_calls_drop_queries_and_say_why():
    people = read_jsonl(FIX / "synthetic_participants.jsonl", Participant)[:1]
    broken = synthetic_client(fault_rate=1.0, fault_kinds=("server_error",))
    report = asyncio.run(
        build_pairs(people, {"g": broken}, broken, make_embedder("hashing"), per_participant=2)
    )
    assert report.pairs == [] and len(report.dropped) == len(people[0].queries)
    assert "generation failed" in report.dropped[0]


def test_top_k_orders_by_similarity_and_validates():
    e = make_embedder("hashing")
    assert top_k(e, ["green tea"], ["coffee beans", "green tea leaves", "tea"], k=2)[0][0] == 1
    with pytest.raises(ValueError, match="at least one memory"):
        top_k(e, ["q"], [], k=3)
    with pytest.raises(ValueError, match="unknown embedder"):
        make_embedder("word2vec")


@pytest.mark.slow
def test_default_sentence_transformer_embedder_loads_offline():
    e = make_embedder()
    idx = top_k(
        e,
        ["Should I watch the trilogy tonight?"],
        ["Watched a Spiderman movie marathon", "Went out for a smokehouse dinner", "Bought running shoes"],
        k=1,
    )
    assert idx == [[0]]
