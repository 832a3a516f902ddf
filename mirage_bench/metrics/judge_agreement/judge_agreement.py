"""``evaluate`` metric: agreement of judge labels with human labels on the four-way taxonomy.

Load it with ``mirage_bench.metrics.load("judge_agreement")`` (checkout or installed wheel).
Predictions are the
judge's labels, references the human annotator's; statistics come from
:func:`mirage_bench.metrics.agreement.agreement` (scikit-learn underneath).

>>> metric = JudgeAgreement()
>>> out = metric.compute(predictions=["GROUNDED", "FABRICATED", "S", "GROUNDED"],
...                      references=["GROUNDED", "INFERRED_STEREOTYPE", "S", "INFERRED_REASONABLE"])
>>> out["accuracy"], out["binary_accuracy"], out["disagreements_by_distance"]
(0.5, 1.0, {1: 2, 2: 0, 3: 0})
"""

import evaluate

from mirage_bench.metrics.agreement import agreement
from mirage_bench.metrics.evaluate_common import metric_info

_DESCRIPTION = """\
Judge-human agreement on the MirageBench four-way taxonomy (Appendix H): four-class accuracy, Cohen's
kappa, macro-F1 and per-class F1 / recall / precision with the human labels as reference; the binary
over-inference collapse (Stereotype + Fabricated vs Grounded + Reasonable) accuracy and kappa; the
confusion matrix; and the disagreements by ordinal distance on G -> R -> S -> F.
"""

_KWARGS_DESCRIPTION = """\
Args:
    predictions (list of str or int): the judge's label per item (GROUNDED, INFERRED_REASONABLE,
        INFERRED_STEREOTYPE, FABRICATED; G/R/S/F and short names also accepted; or ClassLabel ids 0..3
        with the names in that order).
    references (list of str or int): the human label per item, same vocabulary (same type as predictions).
    n_resamples (int, optional, default 0): bootstrap resamples for kappa_ci / binary_kappa_ci (0 = none).
    confidence (float, optional, default 0.95): CI level.
    seed (int, optional, default 0): bootstrap seed.
Returns:
    n, accuracy, kappa, macro_f1, per_class_f1, per_class_recall, per_class_precision (dicts by label),
    binary_accuracy, binary_kappa, confusion_matrix (rows = references, columns = predictions, in
    G, R, S, F order), disagreements, disagreements_by_distance ({1: n, 2: n, 3: n}).
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class JudgeAgreement(evaluate.Metric):
    """Four-class and binary judge-human agreement."""

    def _info(self) -> evaluate.MetricInfo:
        return metric_info("judge_agreement", _DESCRIPTION, _KWARGS_DESCRIPTION,
                           {"predictions": "int64", "references": "int64"},
                           predictions="string", references="string")

    def _compute(self, predictions, references, n_resamples=0, confidence=0.95, seed=0):
        return agreement(predictions, references, n_resamples=n_resamples, confidence=confidence, seed=seed)
