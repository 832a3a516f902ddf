"""Record types and JSONL input/output of the memory-aware reward model (seed 003, §3).

A :class:`PreferencePair` is one comparison: the same query and generator, one response written
with the participant's retrieved memories (``response_memory``, y^m) and one without
(``response_no_memory``, y^0), and optionally the participant's five-point preference.
A :class:`ScoreRecord` is one evaluator's probability that the memory-conditioned response is
preferred; a :class:`ScoredPair` joins that probability with the human label (the file the
Space's Reward tab reads).

>>> p = PreferencePair(pair_id="synthetic_1", participant_id="u1", query="q", memories=["m"],
...                    response_memory="a", response_no_memory="b", generator="g",
...                    preference="no_memory_much_better", source="synthetic")
>>> (p.human_prefers_memory, p.strength, p.is_clear)
(False, 'much', True)
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

Regime = Literal["conservative", "ordinary", "aggressive"]
REGIMES: tuple[str, ...] = ("conservative", "ordinary", "aggressive")

Preference = Literal[
    "memory_much_better",
    "memory_slightly_better",
    "about_same",
    "no_memory_slightly_better",
    "no_memory_much_better",
]
#: The five-point scale of §3.3, expressed in terms of the two response identities.
PREFERENCES: tuple[str, ...] = (
    "memory_much_better",
    "memory_slightly_better",
    "about_same",
    "no_memory_slightly_better",
    "no_memory_much_better",
)
Strength = Literal["much", "slightly", "tie"]


class Participant(BaseModel):
    """One participant's memory store and candidate queries (input of ``reward build-pairs``)."""

    model_config = ConfigDict(extra="forbid")

    participant_id: str = Field(min_length=1)
    memories: list[str] = Field(min_length=1)
    queries: list[str] = Field(min_length=1)
    source: str = Field(min_length=1, description="where the record comes from, e.g. 'synthetic'")


class PreferencePair(BaseModel):
    """One memory vs. no-memory comparison; ``preference`` is ``None`` until a human labels it."""

    model_config = ConfigDict(extra="allow")

    pair_id: str = Field(min_length=1)
    participant_id: str = Field(min_length=1)
    query: str
    memories: list[str]
    response_memory: str
    response_no_memory: str
    generator: str
    regime: Regime = "ordinary"
    preference: Preference | None = None
    source: str = Field(min_length=1, description="'synthetic', 'seed_003_appendix_b', 'study', ...")
    #: Screening score of the stored pair (``None`` when not screened, or its screening failed).
    screening_score: float | None = None
    #: Screening score of the ordinary-regime pair that selected this query (differs from
    #: ``screening_score`` when the memory response was regenerated under another regime).
    selection_screening_score: float | None = None

    @property
    def human_prefers_memory(self) -> bool | None:
        """True/False for a strict preference, ``None`` for a tie or an unlabelled pair."""
        if self.preference is None or self.preference == "about_same":
            return None
        return self.preference.startswith("memory_")

    @property
    def strength(self) -> Strength | None:
        """``much`` / ``slightly`` / ``tie`` (``None`` when unlabelled)."""
        if self.preference is None:
            return None
        if self.preference == "about_same":
            return "tie"
        return "much" if "much" in self.preference else "slightly"

    @property
    def is_clear(self) -> bool:
        """Whether the pair belongs to the clear-preference ("much better") subset of §5."""
        return self.strength == "much"


class ScoreRecord(BaseModel):
    """One evaluator's output for one pair: P(memory-conditioned response preferred)."""

    model_config = ConfigDict(extra="forbid")

    pair_id: str
    method: str
    #: ``None`` when the evaluator failed on this pair (``error`` says why); never a made-up value.
    p_memory: float | None = Field(default=None, ge=0.0, le=1.0)
    error: str | None = None
    #: For two-order judges: whether both presentation orders chose the same response.
    order_agreement: bool | None = None
    details: dict[str, Any] = Field(default_factory=dict)


class ScoredPair(BaseModel):
    """A row of a "scored pair set" (read by the Space's Reward tab).

    ``synthetic``, ``smoke_test`` and ``in_sample`` travel with each row, so the Space flags a set
    from its content whatever the file is called.
    """

    model_config = ConfigDict(extra="forbid")

    pair_id: str
    generator: str
    p_memory: float = Field(ge=0.0, le=1.0)
    human_prefers_memory: bool
    strength: Literal["much", "slightly"]
    method: str | None = None
    #: The pair is a SYNTHETIC fixture or was generated/screened by a scripted or smoke-test model.
    synthetic: bool = False
    #: The score came from a smoke-test model.
    smoke_test: bool = False
    #: The scoring model (or its rubric) was fitted on this pair or on its participant.
    in_sample: bool = False


#: ``source`` prefixes of pairs that are not data: SYNTHETIC fixtures, and pairs whose responses or
#: screening came from a scripted or smoke-test model (``build-pairs`` writes ``synthetic+<source>``
#: or ``smoke_test+<source>`` then).
FLAGGED_SOURCE_PREFIXES: tuple[str, ...] = ("synthetic", "smoke_test")


def is_flagged_source(source: str) -> bool:
    """Whether a pair's ``source`` marks it as SYNTHETIC or smoke-test material (never data).

    >>> is_flagged_source("synthetic"), is_flagged_source("synthetic+study_2026"), is_flagged_source("study")
    (True, True, False)
    """
    return source.startswith(FLAGGED_SOURCE_PREFIXES)


class DataError(ValueError):
    """A reward-model input file is malformed; the message names the file and line."""


M = TypeVar("M", bound=BaseModel)


def read_jsonl(path: str | Path, model: type[M]) -> list[M]:
    """Read and validate every line of ``path`` as ``model``; raise :class:`DataError` on any bad line."""
    path = Path(path)
    if not path.is_file():
        raise DataError(f"{path}: no such file")
    out: list[M] = []
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                out.append(model.model_validate(json.loads(line)))
            except json.JSONDecodeError as exc:
                raise DataError(f"{path}:{lineno}: not JSON ({exc.msg})") from exc
            except ValidationError as exc:
                raise DataError(f"{path}:{lineno}: invalid {model.__name__}: {exc}") from exc
    return out


def write_jsonl(path: str | Path, records: Iterable[BaseModel]) -> Path:
    """Write ``records`` as JSON lines (atomically: a temporary file renamed into place)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        for rec in records:
            fh.write(rec.model_dump_json() + "\n")
    tmp.replace(path)
    return path


def load_pairs(path: str | Path, *, splits: Sequence[str] | None = None) -> list[PreferencePair]:
    """Load preference pairs, refusing duplicate ``pair_id`` values.

    ``path`` is this area's pairs JSONL, or the dataset builder's ``preference_pairs`` config (a
    built dataset folder, its parquet, or JSONL of its rows: see
    :mod:`mirage_bench.reward.dataset_pairs`). ``splits`` keeps only pairs whose ``split`` field
    is listed (dataset pairs carry one; a pair without it is dropped).
    """
    from mirage_bench.reward.dataset_pairs import is_dataset_input, read_dataset_pairs

    if is_dataset_input(path):
        pairs = read_dataset_pairs(path, splits=splits)
        if not pairs:
            where = f" in split(s) {list(splits)}" if splits else ""
            raise DataError(f"{path}: no preference pairs{where}")
        return pairs
    pairs = read_jsonl(path, PreferencePair)
    if not pairs:
        raise DataError(f"{path}: no pairs (the file is empty)")
    seen: set[str] = set()
    for p in pairs:
        if p.pair_id in seen:
            raise DataError(f"{path}: duplicate pair_id {p.pair_id!r}")
        seen.add(p.pair_id)
    if splits is not None:
        pairs = [p for p in pairs if getattr(p, "split", None) in splits]
        if not pairs:
            raise DataError(f"{path}: no pairs of split(s) {list(splits)}")
    return pairs


def clear_pairs(pairs: Sequence[PreferencePair]) -> list[PreferencePair]:
    """The clear-preference ("much better") subset used for training and testing in §5."""
    return [p for p in pairs if p.is_clear]


def scored_pairs(pairs: Sequence[PreferencePair], scores: Sequence[ScoreRecord]) -> list[ScoredPair]:
    """Join scores with human labels: strict preferences with a successful score only."""
    by_id = {p.pair_id: p for p in pairs}
    out: list[ScoredPair] = []
    for s in scores:
        pair = by_id.get(s.pair_id)
        if pair is None:
            raise DataError(f"score for unknown pair_id {s.pair_id!r}")
        prefers = pair.human_prefers_memory
        if s.p_memory is None or prefers is None:
            continue
        strength = pair.strength
        assert strength in ("much", "slightly")
        out.append(
            ScoredPair(
                pair_id=s.pair_id,
                generator=pair.generator,
                p_memory=s.p_memory,
                human_prefers_memory=prefers,
                strength=strength,
                method=s.method,
                synthetic=is_flagged_source(pair.source),
                smoke_test=bool(s.details.get("smoke_test")),
                in_sample=bool(s.details.get("in_sample")),
            )
        )
    return out
