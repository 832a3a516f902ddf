"""Record builders shared by the tests: one base record per type, overridden field by field."""

from __future__ import annotations

from typing import Any

from dataset_builder.preferences import RawPreferenceRecord
from mirage_bench.reward.data import PreferencePair

RAW_PREFERENCE: dict[str, Any] = {
    "record_id": "x1",
    "participant_id": "PROLIFIC_5f00aa",
    "query": "What should I cook tonight?",
    "retrieved_memories": ["The user likes pasta."],
    "response_with_memory": "Make pasta.",
    "response_without_memory": "Make soup.",
    "generator": "gpt-5.2",
    "regime": "ordinary",
    "memory_position": "A",
    "preference": "A_much_better",
}


def raw_preference_record(**overrides: object) -> RawPreferenceRecord:
    """A valid raw study judgment (:data:`RAW_PREFERENCE`) with ``overrides`` applied."""
    return RawPreferenceRecord.model_validate({**RAW_PREFERENCE, **overrides})


def synthetic_pair(**overrides: Any) -> PreferencePair:
    """A labelled synthetic preference pair with ``overrides`` applied."""
    base: dict[str, Any] = dict(
        pair_id="synthetic_1", participant_id="synthetic_u1", query="q", memories=["m"],
        response_memory="a", response_no_memory="b", generator="g",
        preference="memory_much_better", source="synthetic",
    )
    return PreferencePair(**{**base, **overrides})
