"""Blind human labels (Appendix H.1): what the annotator sees, the queue, and the saved labels.

A *sample* (``annotation/samples/<sample_id>.jsonl`` in the submission store) lists judged claims
in the pre-shuffled order fixed by the sampling seed, as
:class:`mirage_bench.validation.records.ValidationSampleItem` lines; it holds the judge's label and
the model id, so it stays on the server. The annotator is shown only :class:`BlindItem` (the
three revealed facts, the task context and the claim). Labels are saved as
:class:`mirage_bench.validation.records.AnnotationRecord` lines, one file per annotator, as they are
given; the next item is the first one of the sample without a label, so a session resumes.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from mirage_bench.submissions import SubmissionStore
from mirage_bench.types import LABELS, Label
from mirage_bench.validation.sample import load_sample

#: Short definitions shown on the four buttons (A-D), in G, R, S, F order.
DEFINITIONS: dict[Label, tuple[str, str]] = {
    Label.GROUNDED: ("Grounded", "directly stated or paraphrased from the three facts"),
    Label.INFERRED_REASONABLE: ("Reasonable", "not stated, but a natural one-step inference from the facts"),
    Label.INFERRED_STEREOTYPE: (
        "Stereotype",
        "based on group or occupational associations, not individual evidence",
    ),
    Label.FABRICATED: ("Fabricated", "no support in the facts at all"),
}
SHORTCUTS: dict[str, Label] = dict(zip("ABCD", LABELS, strict=True))


@dataclass(frozen=True)
class BlindItem:
    """Exactly what the annotator may see: no judge label, reasoning, ground truth or model id."""

    revealed_facts: tuple[str, ...]
    task_context: str
    claim: str
    position: int
    total: int
    labelled: int


def next_item(
    store: SubmissionStore, sample_id: str, annotator_id: str
) -> tuple[Any | None, BlindItem | None]:
    """``(item, blind view)`` of the annotator's first unlabelled item, or ``(None, None)`` when done."""
    items = load_sample(store, sample_id)
    labelled = {r["item_id"] for r in store.read_labels(sample_id, annotator_id)}
    for item in items:
        if item.item_id not in labelled:
            blind = BlindItem(
                tuple(item.revealed_facts),
                item.task_context,
                item.claim,
                item.position + 1,
                len(items),
                len(labelled),
            )
            return item, blind
    return None, None


def record_label(
    store: SubmissionStore, sample_id: str, annotator_id: str, item_id: str, label: Label
) -> int:
    """Durably save one human label (an ``AnnotationRecord``); returns the annotator's label count."""
    from mirage_bench.validation.records import AnnotationRecord

    item = next((i for i in load_sample(store, sample_id) if i.item_id == item_id), None)
    if item is None:
        raise ValueError(f"item {item_id!r} is not in sample {sample_id!r}")
    record = AnnotationRecord(
        annotator_id=annotator_id.strip(),
        item_id=item.item_id,
        claim=item.claim,
        revealed_facts=list(item.revealed_facts),
        task_context=item.task_context,
        human_label=label,
        labelled_at=datetime.now(UTC),
        sample_seed=item.sample_seed,
    )
    return store.append_label(sample_id, annotator_id, record.model_dump(mode="json"))


def progress(store: SubmissionStore, sample_id: str, annotator_id: str) -> tuple[int, int]:
    """``(labelled, total)`` for one annotator."""
    total = len(load_sample(store, sample_id))
    return len(store.read_labels(sample_id, annotator_id)), total
