"""The records the instruments write (one JSONL line each) and an fsync'd, crash-safe JSONL store.

Every record carries ``schema_version`` (:data:`mirage_bench.types.SCHEMA_VERSION`) and
``smoke_test`` (True when the model or the judge is the embedded ``local`` smoke-test model).
A record is identified by :meth:`key`; on resume a later record with the same key supersedes an
earlier one, and :meth:`JsonlStore.compact` rewrites a file sorted by key with one record per key.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, model_validator

from mirage_bench.types import SCHEMA_VERSION, Accuracy, Label


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")

    schema_version: int = SCHEMA_VERSION
    smoke_test: bool = False

    def key(self) -> tuple[str, ...]:  # pragma: no cover - overridden
        """The identity of this record within its file."""
        raise NotImplementedError


class SelfAuditClaim(BaseModel):
    """One claim of a self-audit, with the model's own category."""

    claim: str
    category: Label
    reasoning: str = ""


class SelfAudit(BaseModel):
    """The G.6 self-audit of one Task response."""

    status: Literal["ok", "parse_failure", "call_failure", "skipped", "absent"]
    error: str | None = None
    claims: list[SelfAuditClaim] = Field(default_factory=list)
    n_claims: int = 0
    #: (#Stereotype + #Fabricated) / #claims under the model's own labels; None without claims.
    oi_rate: float | None = None
    repairs: list[str] = Field(default_factory=list)
    attempts: int = 0


class ResponseRecord(_Record):
    """One Task response (persona x task) and its self-audit (``responses.jsonl``)."""

    model: str
    persona_id: str
    stereotype_type: str
    task_id: str
    status: Literal["ok", "failed"]
    response: str | None = None
    error: str | None = None
    self_audit: SelfAudit = Field(default_factory=lambda: SelfAudit(status="absent"))

    def key(self) -> tuple[str, ...]:
        """``(persona_id, task_id)``."""
        return (self.persona_id, self.task_id)


class JudgedClaim(BaseModel):
    """One claim as labelled by the judge."""

    claim: str
    label: Label
    accuracy: Accuracy
    reasoning: str = ""


class Judgment(BaseModel):
    """The judge's verdict on one text (a Task response or a Probe answer)."""

    status: Literal["ok", "parse_failure", "call_failure"]
    error: str | None = None
    injection_flag: bool = False
    injection_signals: list[str] = Field(default_factory=list)
    claims: list[JudgedClaim] = Field(default_factory=list)
    repairs: list[str] = Field(default_factory=list)
    attempts: int = 0
    judge_prompt_sha256: str = ""
    #: The model snapshot the judge's provider reported for the answer (``Completion.model``).
    judge_snapshot: str | None = None


class JudgmentRecord(_Record, Judgment):
    """One judged Task response (``judgments.jsonl``)."""

    model: str
    judge: str
    persona_id: str
    stereotype_type: str
    task_id: str

    def key(self) -> tuple[str, ...]:
        """``(persona_id, task_id)``."""
        return (self.persona_id, self.task_id)


class ProbeItem(BaseModel):
    """One inference listed under Probe."""

    claim: str
    type: str
    reasoning: str = ""


class ProbeRecord(_Record):
    """One Probe answer and the judge's labels for it (``probe.jsonl``)."""

    model: str
    judge: str | None = None
    persona_id: str
    stereotype_type: str
    status: Literal["ok", "parse_failure", "call_failure"]
    error: str | None = None
    raw: str | None = None
    inferences: list[ProbeItem] = Field(default_factory=list)
    repairs: list[str] = Field(default_factory=list)
    judgment: Judgment | None = None
    #: Share of judged claims with accuracy INCORRECT; None when nothing was judged.
    incorrect_rate: float | None = None

    def key(self) -> tuple[str, ...]:
        """``(persona_id,)``."""
        return (self.persona_id,)


#: How a planted contradiction's retraction was decided: by an independent judge reading the
#: memories (the measure), or by the word-overlap heuristic (the offline fallback, when no judge).
RetractionMethod = Literal["judge", "word_overlap_fallback"]
#: What a memory snapshot says about the contradicted attribute: an entry still states it
#: (``asserted``), an entry states it corrected or qualified by the new information (``revised``),
#: or no entry states it any more (``retracted``).
RetractionVerdict = Literal["asserted", "revised", "retracted"]


class RetractionJudgment(BaseModel):
    """The retraction judge's reading of one planted contradiction (``accum_retraction_judge``)."""

    judge: str
    status: Literal["ok", "parse_failure", "call_failure"]
    error: str | None = None
    #: The memory before the planted round asserted the contradicted attribute.
    stored_before: bool | None = None
    #: Verdicts for the memory after the planted round and after the next round (``None``: no
    #: next round, e.g. the script ended or stopped).
    after_round: RetractionVerdict | None = None
    after_next_round: RetractionVerdict | None = None
    evidence: list[str] = Field(default_factory=list)
    reasoning: str = ""
    attempts: int = 0
    repairs: list[str] = Field(default_factory=list)
    prompt_sha256: str = ""


class ContradictionCheck(BaseModel):
    """Whether a planted contradiction led to a retraction of the contradicted belief.

    ``method`` says who decided ``previously_stored`` / ``retracted`` / ``outcome``: the
    independent retraction judge (``judge``: :mod:`mirage_bench.instruments.accum.retraction`)
    or, when the run has no judge, the word-overlap heuristic (``word_overlap_fallback``: an entry
    *asserts* the belief when it shares its content words with the same polarity, see
    :func:`mirage_bench.instruments.accum.asserts_belief`), which misreads paraphrase. Both look at
    the memory after the planted round *and* after the next one (``checked_rounds``), so a
    retraction one round late counts (``retracted_round``). The heuristic's evidence and verdict are
    always kept (``matched_entries`` ... ``fallback_retracted``) so the two can be compared. A
    failed judge call leaves ``retracted`` ``None`` and ``previously_stored`` ``False`` (not scored,
    so outside the denominator) and is counted from ``judge.status``.
    """

    attribute: str
    contradicts: str
    method: RetractionMethod = "word_overlap_fallback"
    #: Memory entries (before this round) that assert the contradicted belief (heuristic).
    matched_entries: list[str] = Field(default_factory=list)
    previously_stored: bool = False
    #: True when the contradicted belief is no longer asserted after the last checked round
    #: (removed or revised); None when nothing was stored to retract, or the judge failed.
    retracted: bool | None = None
    #: ``retracted`` / ``revised`` / ``asserted`` (stored, then still asserted) / ``not_stored``;
    #: ``None`` when the judge failed.
    outcome: Literal["retracted", "revised", "asserted", "not_stored"] | None = None
    #: Rounds whose memory was examined (the planted round, and the next one when it ran).
    checked_rounds: list[int] = Field(default_factory=list)
    #: The first checked round after which the belief was no longer asserted (and stayed so).
    retracted_round: int | None = None
    #: Entries after the last checked round that still assert the belief (heuristic).
    asserting_entries: list[str] = Field(default_factory=list)
    #: Entries after the last checked round that name the belief negated or corrected (heuristic).
    revised_entries: list[str] = Field(default_factory=list)
    #: The heuristic's own verdict (equal to ``previously_stored`` / ``retracted`` when it is the method).
    fallback_previously_stored: bool | None = None
    fallback_retracted: bool | None = None
    judge: RetractionJudgment | None = None


class AccumRound(BaseModel):
    """One Accum round: what the memory holds after it, and what changed."""

    round: int
    status: Literal["ok", "parse_failure", "call_failure"]
    error: str | None = None
    n_stored: int = 0
    #: Entries outside ``observed`` (the inferred-attribute store of Table 4).
    n_inferred: int = 0
    added: list[str] = Field(default_factory=list)
    removed: list[str] = Field(default_factory=list)
    memory: dict[str, list[str]] | None = None
    repairs: list[str] = Field(default_factory=list)
    #: One check per contradiction planted in this round (a round may hold several).
    contradictions: list[ContradictionCheck] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _legacy_single_check(cls, data: Any) -> Any:
        """Read records written before rounds held a list (a single ``contradiction`` field)."""
        if isinstance(data, dict) and "contradiction" in data:
            data = dict(data)
            legacy = data.pop("contradiction")
            if legacy is not None and not data.get("contradictions"):
                data["contradictions"] = [legacy]
        return data


class AccumRecord(_Record):
    """One Accum script under one memory prompt (``accum.jsonl``)."""

    model: str
    persona_id: str
    stereotype_type: str
    #: ``accum_update`` (the paper's G.7 prompt) or ``accum_update_prune_control``.
    condition: str
    status: Literal["ok", "parse_failure", "call_failure"]
    error: str | None = None
    initial_memory: dict[str, list[str]]
    rounds: list[AccumRound] = Field(default_factory=list)

    def key(self) -> tuple[str, ...]:
        """``(condition, persona_id)``."""
        return (self.condition, self.persona_id)


R = TypeVar("R", bound=_Record)


class JsonlStore:
    """Append-only JSONL file of one record type; each append is a single ``write`` + ``fsync``.

    Opening the store drops a torn last line (a crash mid-write), so a record is whole or absent; a
    last line that is a whole, valid record without its newline only gets the newline.
    """

    def __init__(self, path: Path, model: type[R]) -> None:
        self.path = Path(path)
        self.model = model
        self._repair_tail()

    def _repair_tail(self) -> None:
        if not self.path.exists():
            return
        data = self.path.read_bytes()
        if not data or data.endswith(b"\n"):
            return
        cut = data.rfind(b"\n") + 1
        try:  # a whole record merely missing its newline (a hand-edited file) is kept, not dropped
            self.model.model_validate_json(data[cut:])
        except ValueError:
            torn = True
        else:
            torn = False
        with open(self.path, "r+b") as fh:
            if torn:
                fh.truncate(cut)
            else:
                fh.seek(0, os.SEEK_END)
                fh.write(b"\n")
            fh.flush()
            os.fsync(fh.fileno())

    def read(self) -> dict[tuple[str, ...], Any]:
        """All records, the last one winning for each key. Raises ``ValueError`` on a corrupt line."""
        records: dict[tuple[str, ...], Any] = {}
        for number, record in self._iter():
            del number
            records[record.key()] = record
        return records

    def _iter(self) -> Iterator[tuple[int, Any]]:
        if not self.path.exists():
            return
        with open(self.path, encoding="utf-8") as fh:
            for number, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                try:
                    yield number, self.model.model_validate_json(line)
                except ValueError as exc:
                    raise ValueError(
                        f"{self.path}:{number}: not a valid {self.model.__name__}: {exc}"
                    ) from exc

    def append(self, record: _Record) -> None:
        """Append one record durably (one ``os.write`` of the whole line, then ``fsync``)."""
        line = (record.model_dump_json() + "\n").encode("utf-8")
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line)
            os.fsync(fd)
        finally:
            os.close(fd)

    def compact(self) -> int:
        """Rewrite the file atomically: one record per key, sorted by key. Returns the record count."""
        records = self.read()
        tmp = self.path.with_suffix(self.path.suffix + ".tmp")
        with open(tmp, "w", encoding="utf-8") as fh:
            for key in sorted(records):
                fh.write(records[key].model_dump_json() + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, self.path)
        return len(records)


def write_json_atomic(path: Path, data: Any) -> None:
    """Write ``data`` as indented JSON via a temporary file and ``os.replace``."""
    path = Path(path)
    tmp = path.with_suffix(path.suffix + ".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=2, ensure_ascii=False, sort_keys=False)
        fh.write("\n")
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
