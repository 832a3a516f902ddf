"""Human validation of the judge (Appendix H): the sample, the blind labels, the agreement.

* :mod:`~mirage_bench.validation.annotation` — the H.1 sample drawn from judged claims and stored
  (``annotation/samples/<id>.jsonl``; the draw is
  :func:`mirage_bench.metrics.agreement.stratified_validation_sample`), what an annotator sees
  (:class:`BlindItem`), the queue (:func:`next_item`), durable labels (:func:`record_label`) and the
  judge–human agreement of an annotator's labels (numbers from
  :func:`mirage_bench.metrics.agreement.agreement`);
* :mod:`~mirage_bench.validation.records` — the file formats (sample items, annotation records) and
  their join, read by the dataset builder's ``human_validation`` config.

Nothing here is labelled human-annotated unless a person gave the label through :func:`record_label`.
"""

from __future__ import annotations

from mirage_bench.metrics.agreement import stratified_validation_sample
from mirage_bench.types import Label
from mirage_bench.validation.annotation import (
    DEFINITIONS,
    SHORTCUTS,
    BlindItem,
    SampleSpec,
    agreement,
    claims_from_runs,
    create_sample,
    load_sample,
    next_item,
    progress,
    record_label,
    save_sample,
)

__all__ = [
    "DEFINITIONS",
    "SHORTCUTS",
    "BlindItem",
    "Label",
    "SampleSpec",
    "agreement",
    "claims_from_runs",
    "create_sample",
    "load_sample",
    "next_item",
    "progress",
    "record_label",
    "save_sample",
    "stratified_validation_sample",
]
