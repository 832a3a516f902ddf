"""Judge–human agreement of one annotator's labels on a stored sample (the H.3 numbers).

Every statistic is :func:`mirage_bench.metrics.agreement.agreement`; this module only pairs each
human label with the judge's label of the same item.
"""

from __future__ import annotations

from typing import Any

from mirage_bench.submissions import SubmissionStore
from mirage_bench.validation.sample import load_sample


def agreement(store: SubmissionStore, sample_id: str, annotator_id: str) -> dict[str, Any]:
    """Judge–human agreement on the annotator's labels (``judge_agreement`` metric): judge = predictions."""
    from mirage_bench.metrics.agreement import agreement as agreement_metric

    judge = {i.item_id: i.judge_label.value for i in load_sample(store, sample_id)}
    rows = [r for r in store.read_labels(sample_id, annotator_id) if r["item_id"] in judge]
    predictions = [judge[r["item_id"]] for r in rows]
    references = [r["human_label"] for r in rows]
    return agreement_metric(predictions, references)
