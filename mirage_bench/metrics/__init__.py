"""Over-inference, self-monitoring, accumulation, judge-agreement and reward-accuracy statistics.

Pure functions live in :mod:`~mirage_bench.metrics.oi`, :mod:`~mirage_bench.metrics.selfmon`,
:mod:`~mirage_bench.metrics.accumulation`, :mod:`~mirage_bench.metrics.agreement`,
:mod:`~mirage_bench.metrics.reward` and :mod:`~mirage_bench.metrics.bootstrap`. The folders
``over_inference/``, ``judge_agreement/`` and ``reward_accuracy/`` are ``evaluate`` modules:
``mirage_bench.metrics.load("over_inference")`` returns one, from a checkout or an installed
wheel alike (``evaluate`` is imported only then). See ``docs/metrics.md``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["load", "module_path"]

_NAMES = ("over_inference", "judge_agreement", "reward_accuracy")


def module_path(name: str) -> Path:
    """The folder of ``evaluate`` module ``name`` inside the installed package.

    >>> module_path("over_inference").name
    'over_inference'
    """
    if name not in _NAMES:
        raise ValueError(f"unknown MirageBench metric {name!r}; choose one of {', '.join(_NAMES)}")
    return Path(__file__).resolve().parent / name


def load(name: str, **kwargs: Any) -> Any:
    """``evaluate.load`` of the package's metric ``name`` (``over_inference``, ``judge_agreement``,
    ``reward_accuracy``); ``kwargs`` go to ``evaluate.load`` (e.g. ``experiment_id``)."""
    import evaluate

    return evaluate.load(str(module_path(name)), **kwargs)
