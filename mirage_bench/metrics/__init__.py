"""Over-inference, self-monitoring, accumulation, judge-agreement and reward-accuracy statistics.

Pure functions live in :mod:`~mirage_bench.metrics.oi`, :mod:`~mirage_bench.metrics.selfmon`,
:mod:`~mirage_bench.metrics.accumulation`, :mod:`~mirage_bench.metrics.agreement`,
:mod:`~mirage_bench.metrics.reward` and :mod:`~mirage_bench.metrics.bootstrap`. The folders
``over_inference/``, ``judge_agreement/`` and ``reward_accuracy/`` are ``evaluate`` modules
(``evaluate.load("mirage_bench/metrics/over_inference")``); nothing here imports ``evaluate``.
See ``docs/metrics.md``.
"""
