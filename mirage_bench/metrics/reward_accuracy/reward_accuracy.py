"""``evaluate`` metric: pairwise preference accuracy of a reward model or judge against humans.

Load it with ``mirage_bench.metrics.load("reward_accuracy")`` (checkout or installed wheel).
Each prediction is
the evaluator's probability (or, with ``scale="margin"``, score margin) that the memory-conditioned
response is preferred; each reference is 1 if the human preferred it, else 0. Statistics come from
:func:`mirage_bench.metrics.reward.reward_accuracy`, whose docstring states the tie policy.

>>> metric = RewardAccuracy()
>>> out = metric.compute(predictions=[0.9, 0.2, 0.7, 0.4], references=[1, 0, 0, 0])
>>> out["accuracy"], out["majority_baseline"], out["memory_selection_rate"], out["human_memory_rate"]
(0.75, 0.75, 0.5, 0.25)
>>> out["selective_accuracy"][0.5]
1.0
"""

import evaluate

from mirage_bench.metrics.evaluate_common import ExampleColumns, metric_info
from mirage_bench.metrics.reward import reward_accuracy

_DESCRIPTION = """\
Pairwise preference accuracy of an evaluator (reward model or LLM judge) against human choices
between a memory-conditioned and a no-memory response, with an explicit tie policy, the majority
baseline, the evaluator's memory-selection rate beside the humans', selective accuracy at given
coverages ranked by confidence |p - 0.5|, optional per-generator breakdown and bootstrap CI.
"""

_KWARGS_DESCRIPTION = """\
Args:
    predictions (list of float): P(memory-conditioned response preferred), or a score margin
        (memory minus no-memory) with scale="margin".
    references (list of int): 1 if the human preferred the memory-conditioned response, else 0.
    scale (str, optional, default "probability"): "probability" (threshold 0.5) or "margin" (threshold 0).
    tie_policy (str, optional, default "half"): "half", "no_memory", "memory" or "exclude".
    generators (list of str, optional): the response generator of each pair; adds per_generator (also
        accepted by add_batch with each batch, or add(generator=...)).
    coverages (list of float, optional, default [0.25, 0.5, 0.75, 1.0]): selective-prediction coverages.
    n_resamples (int, optional, default 0): bootstrap resamples for accuracy_ci (0 = none).
    confidence (float, optional, default 0.95), seed (int, optional, default 0).
Returns:
    n, n_ties, tie_policy, accuracy, majority_baseline, no_memory_baseline, memory_selection_rate,
    human_memory_rate, selective_accuracy ({coverage: accuracy}), and the optional outputs above.
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class RewardAccuracy(ExampleColumns, evaluate.Metric):
    """Pairwise preference accuracy against human choices."""

    example_columns = ("generators",)

    def _info(self) -> evaluate.MetricInfo:
        return metric_info("reward_accuracy", _DESCRIPTION, _KWARGS_DESCRIPTION,
                           predictions="float64", references="int64")

    def _compute(self, predictions, references, scale="probability", tie_policy="half", generators=None,
                 coverages=(0.25, 0.5, 0.75, 1.0), n_resamples=0, confidence=0.95, seed=0):
        return reward_accuracy(predictions, references, scale=scale, tie_policy=tie_policy,
                               generators=generators, coverages=tuple(coverages), n_resamples=n_resamples,
                               confidence=confidence, seed=seed)
