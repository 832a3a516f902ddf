"""Direct and rubric LLM-judge baselines: both orders, identity mapping, votes, failures."""

from __future__ import annotations

import asyncio
import json

import pytest

from mirage_bench.backends.scripted import ScriptedBackend
from mirage_bench.client import Client, ClientConfig
from mirage_bench.reward.baselines import judge_pairs, vote
from mirage_bench.reward.rubric import Rubric, RubricDimension
from tests.helpers_records import synthetic_pair

PAIR = synthetic_pair(response_memory="MEMORY-RESPONSE", response_no_memory="PLAIN-RESPONSE")
RUBRIC = Rubric(dimensions=[RubricDimension(key="k", name="K", description="d", memory_dependent=True)])


def _client(answer) -> Client:
    return Client(ScriptedBackend(answer), ClientConfig(max_attempts=1))


def _which(messages) -> str:
    text = messages[-1].content
    return "A" if text.index("MEMORY-RESPONSE") < text.index("PLAIN-RESPONSE") else "B"


def test_direct_judge_maps_both_orders_to_the_memory_response():
    always_memory = _client(lambda m, p: json.dumps({"preferred": _which(m), "confidence": 90}))
    out = asyncio.run(judge_pairs(always_memory, [PAIR], kind="direct"))
    single, both = out["direct_judge_single"][0], out["direct_judge_vote"][0]
    assert single.p_memory == pytest.approx(0.95) and both.p_memory == pytest.approx(0.95)
    assert both.order_agreement is True


def test_position_bias_shows_as_order_disagreement():
    always_a = _client(lambda m, p: json.dumps({"preferred": "A", "confidence": 70}))
    both = asyncio.run(judge_pairs(always_a, [PAIR], kind="direct"))["direct_judge_vote"][0]
    assert both.order_agreement is False and both.p_memory == 0.5


def test_rubric_judge_tie_and_magnitude():
    tie = _client(lambda m, p: json.dumps({"verdict": "tie", "magnitude": 3}))
    out = asyncio.run(judge_pairs(tie, [PAIR], kind="rubric", rubric=RUBRIC))
    assert out["rubric_judge_vote"][0].p_memory == 0.5
    memory = _client(lambda m, p: json.dumps({"verdict": _which(m), "magnitude": 5}))
    out = asyncio.run(judge_pairs(memory, [PAIR], kind="rubric", rubric=RUBRIC))
    assert out["rubric_judge_single"][0].p_memory == 1.0
    with pytest.raises(ValueError, match="needs a rubric"):
        asyncio.run(judge_pairs(memory, [PAIR], kind="rubric"))


def test_failures_are_recorded_not_scored():
    garbage = _client(lambda m, p: "I think A is better")
    out = asyncio.run(judge_pairs(garbage, [PAIR], kind="direct"))
    for rec in (out["direct_judge_single"][0], out["direct_judge_vote"][0]):
        assert rec.p_memory is None and rec.error.startswith("parse_failure")


def test_vote_is_confidence_weighted():
    assert vote([0.9, -0.5]) == pytest.approx(0.6)
