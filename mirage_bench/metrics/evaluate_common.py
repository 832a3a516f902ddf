"""What the three ``evaluate`` metric scripts share: their citations and their ``MetricInfo``.

The scripts (``over_inference/over_inference.py``, ``judge_agreement/judge_agreement.py``,
``reward_accuracy/reward_accuracy.py``) import this module by *absolute* import.
``evaluate.load(folder)`` copies only the script (and files it imports by relative import) into its
module cache and requires absolute imports to be importable; every script needs the installed
``mirage_bench`` for its statistics anyway, so the shared pieces live here. Tested from a
non-editable install (a wheel installed into a separate folder) as well as from a checkout.

The metric cards (``cards/metrics/<name>.md``, rendered by ``mirage-bench render-cards``) print
the same :data:`CITATIONS`, so a script and its card cannot cite differently.

This module does not import ``evaluate`` or ``datasets`` at import time (``evaluate`` costs ~7 s).
"""

from __future__ import annotations

from typing import Any

__all__ = ["CITATIONS", "METRIC_NAMES", "bibtex", "metric_info"]

#: The metric folders under ``mirage_bench/metrics/``, in documentation order.
METRIC_NAMES: tuple[str, ...] = ("over_inference", "judge_agreement", "reward_accuracy")

_MIRAGE_TITLE = (
    "The Personalization Mirage: How LLMs Fabricate User Profiles, and Why Self-Monitoring Misleads"
)
_REWARD_TITLE = "Memory-Aware Reward Modeling: Learning Human Preferences for LLM Memory Use"


def bibtex(key: str, title: str, note: str, *, year: int = 2026) -> str:
    """A BibTeX ``@article`` entry with ``title``, ``note`` and ``year`` (ends with a newline).

    >>> print(bibtex("k", "A title", "a note"), end="")
    @article{k,
      title  = {A title},
      note   = {a note},
      year   = {2026}
    }
    """
    return f"@article{{{key},\n  title  = {{{title}}},\n  note   = {{{note}}},\n  year   = {{{year}}}\n}}\n"


#: BibTeX of each metric (the scripts' ``citation`` and the cards' Citation section).
CITATIONS: dict[str, str] = {
    "over_inference": bibtex(
        "mirage2026personalization", _MIRAGE_TITLE, "MirageBench; metric definitions in Appendix B"
    ),
    "judge_agreement": bibtex(
        "mirage2026personalization", _MIRAGE_TITLE, "MirageBench; judge validation in Appendix H"
    ),
    "reward_accuracy": bibtex("memoryaware2026reward", _REWARD_TITLE, "evaluation in Sections 5-6"),
}


def metric_info(name: str, description: str, inputs_description: str, **features: str) -> Any:
    """The ``evaluate.MetricInfo`` of metric ``name``; ``features`` maps input column → value dtype.

    Raises ``KeyError`` for a name not in :data:`METRIC_NAMES`.
    """
    import datasets
    import evaluate

    return evaluate.MetricInfo(
        description=description,
        citation=CITATIONS[name],
        inputs_description=inputs_description,
        features=datasets.Features({column: datasets.Value(dtype) for column, dtype in features.items()}),
        reference_urls=[],
    )
