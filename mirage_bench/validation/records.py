"""Human-validation annotation files: the format the Space's annotate tab writes, and the join.

Two JSONL files take part (one JSON object per line, UTF-8):

* the **sample file** (:class:`ValidationSampleItem` per line): the stratified sample of judged
  claims drawn for blind validation (Appendix H.1 of the MirageBench paper), in the pre-shuffled
  order fixed by ``sample_seed``. It carries the judge's label, so the annotator never sees it.
* one or more **annotation files** (:class:`AnnotationRecord` per line): what one annotator saw
  (the claim, the three revealed facts, the task context) and the label they gave.

:func:`join_annotations` joins each annotation to its sample item by ``item_id`` and yields the
rows of the ``human_validation`` config. The judge label comes only from the sample file.

>>> item_id = make_item_id("openai:gpt-4o-mini", "anthropic:claude", "seed_001", "apartment", 3)
>>> same = make_item_id("openai:gpt-4o-mini", "anthropic:claude", "seed_001", "apartment", 3)
>>> len(item_id), item_id == same
(16, True)
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Literal, TypeVar

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, ValidationError

from mirage_bench.fileio import nonblank_lines
from mirage_bench.structs import first_error
from mirage_bench.types import Label

__all__ = [
    "ANNOTATION_SCHEMA_VERSION",
    "AnnotationError",
    "AnnotationRecord",
    "ValidationSampleItem",
    "join_annotations",
    "load_annotations",
    "load_validation_sample",
    "make_item_id",
]

#: Version written in every annotation and sample line.
ANNOTATION_SCHEMA_VERSION = 1


class AnnotationError(ValueError):
    """An annotation or sample file is malformed, or the two do not fit together."""


class AnnotationRecord(BaseModel):
    """One human label, as written by the Space's annotate tab (one JSON line).

    ``claim``, ``revealed_facts`` and ``task_context`` are exactly what was shown to the
    annotator; ``human_label`` is one of the four taxonomy labels; ``labelled_at`` is an aware
    ISO-8601 timestamp; ``sample_seed`` is the seed of the sample the item was drawn from.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: Literal[1] = ANNOTATION_SCHEMA_VERSION
    annotator_id: str = Field(min_length=1)
    item_id: str = Field(min_length=1)
    claim: str = Field(min_length=1)
    revealed_facts: list[str] = Field(min_length=3, max_length=3)
    task_context: str = Field(min_length=1)
    human_label: Label
    labelled_at: AwareDatetime
    sample_seed: int


class ValidationSampleItem(BaseModel):
    """One item of the blind-validation sample (the judge label is hidden from the annotator).

    ``position`` is the item's place in the pre-shuffled presentation order.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: Literal[1] = ANNOTATION_SCHEMA_VERSION
    item_id: str = Field(min_length=1)
    sample_seed: int
    position: int = Field(ge=0)
    model: str
    judge: str
    persona_id: str
    stereotype_type: str
    task_id: str
    claim_index: int = Field(ge=0)
    claim: str = Field(min_length=1)
    revealed_facts: list[str] = Field(min_length=3, max_length=3)
    task_context: str = Field(min_length=1)
    judge_label: Label


def make_item_id(model: str, judge: str, persona_id: str, task_id: str, claim_index: int) -> str:
    """Stable id of one judged claim: 16 hex digits of a sha256 over its key columns."""
    key = json.dumps([model, judge, persona_id, task_id, int(claim_index)], ensure_ascii=False)
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]


_M = TypeVar("_M", bound=BaseModel)


def _read_jsonl(path: Path, model: type[_M]) -> list[_M]:
    records: list[_M] = []
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise AnnotationError(f"cannot read {path}: {exc}") from exc
    for number, line in nonblank_lines(lines):
        try:
            records.append(model.model_validate_json(line))
        except ValidationError as exc:
            raise AnnotationError(f"{path}:{number}: {first_error(exc, '')}") from exc
    return records


def load_annotations(paths: Iterable[str | Path]) -> list[AnnotationRecord]:
    """Read annotation files; raises :class:`AnnotationError` naming the file and line of a bad record."""
    records: list[AnnotationRecord] = []
    for path in paths:
        records.extend(_read_jsonl(Path(path), AnnotationRecord))
    return records


def load_validation_sample(paths: Iterable[str | Path]) -> list[ValidationSampleItem]:
    """Read sample files; raises :class:`AnnotationError` on a bad line or a duplicated ``item_id``."""
    items: list[ValidationSampleItem] = []
    seen: set[str] = set()
    for path in paths:
        for item in _read_jsonl(Path(path), ValidationSampleItem):
            if item.item_id in seen:
                raise AnnotationError(f"{path}: item_id {item.item_id} appears twice in the sample")
            seen.add(item.item_id)
            items.append(item)
    return items


def join_annotations(
    annotations: Sequence[AnnotationRecord], sample: Sequence[ValidationSampleItem]
) -> tuple[list[dict[str, object]], list[str]]:
    """Join human labels to their sample items; returns ``(rows, notes)``.

    Each row holds the claim, revealed facts and task context shown to the annotator, the human
    label, the judge label (from the sample), the annotator id, the sample seed, the model, judge,
    persona, group and task. When one annotator labelled an item more than once, the latest
    ``labelled_at`` is kept and a note says how many earlier labels were superseded.
    Raises :class:`AnnotationError` if an annotation names an item that is not in the sample, or
    disagrees with it on the claim, the revealed facts, the task context or the sample seed.
    """
    by_id = {item.item_id: item for item in sample}
    latest: dict[tuple[str, str], AnnotationRecord] = {}
    superseded = 0
    for record in annotations:
        item = by_id.get(record.item_id)
        if item is None:
            raise AnnotationError(
                f"annotation by {record.annotator_id} names item {record.item_id}, "
                "which is not in the sample file"
            )
        for field in ("claim", "revealed_facts", "task_context", "sample_seed"):
            if getattr(record, field) != getattr(item, field):
                raise AnnotationError(
                    f"annotation of item {record.item_id} by {record.annotator_id} shows a different {field} "
                    "than the sample file"
                )
        key = (record.annotator_id, record.item_id)
        if key in latest:
            superseded += 1
            if record.labelled_at < latest[key].labelled_at:
                continue
        latest[key] = record
    rows: list[dict[str, object]] = []
    for (annotator_id, item_id), record in sorted(
        latest.items(), key=lambda kv: (kv[0][0], by_id[kv[0][1]].position)
    ):
        item = by_id[item_id]
        rows.append(
            {
                "item_id": item_id,
                "annotator_id": annotator_id,
                "sample_seed": item.sample_seed,
                "position": item.position,
                "model": item.model,
                "judge": item.judge,
                "persona_id": item.persona_id,
                "stereotype_type": item.stereotype_type,
                "task_id": item.task_id,
                "claim_index": item.claim_index,
                "claim": item.claim,
                "revealed_facts": list(item.revealed_facts),
                "task_context": item.task_context,
                "human_label": Label(record.human_label).value,
                "judge_label": Label(item.judge_label).value,
                "labelled_at": record.labelled_at.isoformat(),
            }
        )
    notes = (
        [f"{superseded} earlier label(s) superseded by a later label of the same annotator"]
        if superseded
        else []
    )
    return rows, notes
