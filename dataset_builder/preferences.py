"""Raw preference-study records (memory-aware reward paper, seed 003 §3) and their published form.

A raw study folder holds one or more ``*.jsonl`` files, one :class:`RawPreferenceRecord` per
line: one participant's judgment of one response pair. Raw records contain recruitment ids and
un-redacted text: they never leave the machine that builds the dataset. The builder turns them,
through :mod:`dataset_builder.deidentify`, into rows of the ``preference_pairs`` config.

The participant saw the two responses as A and B; ``memory_position`` says which one was the
memory-conditioned response, and :func:`memory_preference` turns the five-point A/B choice into
memory terms:

>>> memory_preference("A_much_better", memory_position="B")
('no_memory_much_better', 'no_memory', 'much')
>>> memory_preference("about_the_same", memory_position="A")
('about_the_same', 'tie', None)
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from mirage_bench.fileio import nonblank_lines
from mirage_bench.structs import first_error

__all__ = [
    "FIVE_POINT",
    "MEMORY_FIVE_POINT",
    "PREFERENCE_SCHEMA_VERSION",
    "REGIMES",
    "PreferenceFormatError",
    "RawPreferenceRecord",
    "load_raw_preferences",
    "memory_preference",
]

PREFERENCE_SCHEMA_VERSION = 1

#: The five answers of the study interface (seed 003 §3.3), in A→B order.
FIVE_POINT: tuple[str, ...] = (
    "A_much_better",
    "A_slightly_better",
    "about_the_same",
    "B_slightly_better",
    "B_much_better",
)
#: The same scale in memory terms, as published (ClassLabel names, in this order).
MEMORY_FIVE_POINT: tuple[str, ...] = (
    "memory_much_better",
    "memory_slightly_better",
    "about_the_same",
    "no_memory_slightly_better",
    "no_memory_much_better",
)
#: Prompting regimes for the memory-conditioned response (seed 003 §3.2).
REGIMES: tuple[str, ...] = ("conservative", "ordinary", "aggressive")

FivePoint = Literal[
    "A_much_better", "A_slightly_better", "about_the_same", "B_slightly_better", "B_much_better"
]


class PreferenceFormatError(ValueError):
    """A raw study file is malformed."""


class RawPreferenceRecord(BaseModel):
    """One raw study judgment (never published as is).

    ``participant_id`` is the recruitment-platform id and ``record_id`` the study's own id of the
    judgment: both are dropped on publication. ``participant_profile`` (field → text, e.g.
    ``{"occupation": ..., "location": ...}``) and ``event_memories`` are the participant's
    collected context; ``retrieved_memories`` are the memories retrieved for this query (nine in
    the study). ``excluded`` marks judgments removed by the quality filter (attention checks,
    incomplete pairs), ``test_retest`` the repeats of the three-day retest.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: Literal[1] = PREFERENCE_SCHEMA_VERSION
    record_id: str = Field(min_length=1)
    participant_id: str = Field(min_length=1)
    participant_profile: dict[str, str] = Field(default_factory=dict)
    event_memories: list[str] = Field(default_factory=list)
    query: str = Field(min_length=1)
    retrieved_memories: list[str] = Field(min_length=1)
    response_with_memory: str = Field(min_length=1)
    response_without_memory: str = Field(min_length=1)
    generator: str = Field(min_length=1)
    regime: Literal["conservative", "ordinary", "aggressive"]
    memory_position: Literal["A", "B"]
    preference: FivePoint
    note: str | None = None
    test_retest: bool = False
    excluded: bool = False
    exclusion_reason: str | None = None

    @model_validator(mode="after")
    def _exclusion_has_reason(self) -> RawPreferenceRecord:
        if self.excluded and not self.exclusion_reason:
            raise ValueError("an excluded record needs an exclusion_reason")
        return self


def memory_preference(preference: str, *, memory_position: str) -> tuple[str, str, str | None]:
    """Map an A/B five-point answer to ``(five_point_in_memory_terms, collapsed, strength)``.

    ``collapsed`` is ``memory``, ``no_memory`` or ``tie``; ``strength`` is ``much``,
    ``slightly`` or ``None`` for a tie.
    """
    if preference not in FIVE_POINT:
        raise PreferenceFormatError(f"unknown preference {preference!r}")
    if memory_position not in ("A", "B"):
        raise PreferenceFormatError(f"memory_position must be 'A' or 'B', not {memory_position!r}")
    if preference == "about_the_same":
        return "about_the_same", "tie", None
    side, strength = preference.split("_", 1)
    strength = strength.removesuffix("_better")
    collapsed = "memory" if side == memory_position else "no_memory"
    return f"{collapsed}_{strength}_better", collapsed, strength


def load_raw_preferences(raw_dir: str | Path) -> list[RawPreferenceRecord]:
    """Read every ``*.jsonl`` file of ``raw_dir`` (sorted by name).

    Raises :class:`PreferenceFormatError` naming the file and line of a bad record, a duplicated
    ``record_id``, or a folder without any ``*.jsonl`` file.
    """
    folder = Path(raw_dir)
    if not folder.is_dir():
        raise PreferenceFormatError(f"{folder} is not a folder of raw study records")
    files = sorted(folder.glob("*.jsonl"))
    if not files:
        raise PreferenceFormatError(f"{folder} holds no *.jsonl file")
    records: list[RawPreferenceRecord] = []
    seen: set[str] = set()
    for path in files:
        for number, line in nonblank_lines(path.read_text(encoding="utf-8")):
            try:
                record = RawPreferenceRecord.model_validate_json(line)
            except ValidationError as exc:
                raise PreferenceFormatError(f"{path.name}:{number}: {first_error(exc)}") from exc
            if record.record_id in seen:
                raise PreferenceFormatError(
                    f"{path.name}:{number}: record_id {record.record_id} appears twice"
                )
            seen.add(record.record_id)
            records.append(record)
    return records
