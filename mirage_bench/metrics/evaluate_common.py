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

__all__ = ["CITATIONS", "METRIC_NAMES", "ExampleColumns", "bibtex", "metric_info"]

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


def metric_info(
    name: str,
    description: str,
    inputs_description: str,
    *alternatives: dict[str, str],
    **features: str,
) -> Any:
    """The ``evaluate.MetricInfo`` of metric ``name``; ``features`` maps input column → value dtype.

    ``alternatives``: further accepted input formats (same columns, other dtypes), e.g. the int64
    ids of a ``ClassLabel`` column next to its strings; ``evaluate`` picks the first that fits.
    Raises ``KeyError`` for a name not in :data:`METRIC_NAMES`.
    """
    import datasets
    import evaluate

    formats = [features, *alternatives]
    if any(set(f) != set(features) for f in alternatives):
        raise ValueError("every alternative input format must name the same columns")
    options = [datasets.Features({c: datasets.Value(d) for c, d in f.items()}) for f in formats]
    return evaluate.MetricInfo(
        description=description,
        citation=CITATIONS[name],
        inputs_description=inputs_description,
        features=options[0] if len(options) == 1 else options,
        reference_urls=[],
    )


class ExampleColumns:
    """Mixin for an ``evaluate.Metric``: per-example keyword columns also through ``add`` / ``add_batch``.

    ``evaluate`` stores only the declared features (predictions, references) between ``add_batch``
    calls; the breakdown columns (``models``, ``tasks``, … listed in :attr:`example_columns`) are
    kept here, aligned with the predictions, and handed to ``compute``. Every batch must give the
    same columns; giving them both to ``add_batch`` and to ``compute`` is refused, and so is
    ``num_process > 1`` (each process would hold only its own columns). ``add`` takes the singular
    names (``model=``, ``task=``, …).
    """

    #: Per-example keyword columns of ``_compute`` (plural names).
    example_columns: tuple[str, ...] = ()

    def _pending(self) -> dict[str, Any]:
        return self.__dict__.setdefault("_pending_columns", {"n": 0, "columns": {}})

    def add_batch(self, *, predictions=None, references=None, **kwargs):  # noqa: ANN001, ANN201
        """``evaluate.Metric.add_batch`` that also accepts the per-example columns."""
        extra = {k: kwargs.pop(k) for k in list(kwargs) if k in self.example_columns}
        extra = {k: list(v) for k, v in extra.items() if v is not None}
        pending = self._pending()
        if extra:
            if getattr(self, "num_process", 1) > 1:
                raise ValueError(
                    f"per-example columns {sorted(extra)} through add_batch need num_process=1; "
                    "pass them to compute() instead"
                )
            n = len(predictions) if predictions is not None else 0
            bad = {k: len(v) for k, v in extra.items() if len(v) != n}
            if bad:
                raise ValueError(f"per-example column length(s) {bad} differ from the {n} predictions")
        if set(extra) != set(pending["columns"]) and (pending["n"] or pending["columns"]):
            raise ValueError(
                f"every add_batch call must give the same per-example columns: this one gives "
                f"{sorted(extra)}, earlier ones gave {sorted(pending['columns'])}"
            )
        super().add_batch(predictions=predictions, references=references, **kwargs)  # type: ignore[misc]
        for key, values in extra.items():
            pending["columns"].setdefault(key, []).extend(values)
        pending["n"] += len(predictions) if predictions is not None else 0

    def add(self, *, prediction=None, reference=None, **kwargs):  # noqa: ANN001, ANN201
        """``evaluate.Metric.add`` that also accepts the singular per-example columns (``model=`` …)."""
        singular = {column[:-1]: column for column in self.example_columns}
        batch = {singular[k]: [kwargs.pop(k)] for k in list(kwargs) if k in singular}
        if not batch:
            return super().add(prediction=prediction, reference=reference, **kwargs)  # type: ignore[misc]
        references = None if reference is None else [reference]
        return self.add_batch(predictions=[prediction], references=references, **batch, **kwargs)

    def compute(self, *, predictions=None, references=None, **kwargs):  # noqa: ANN001, ANN201
        """``evaluate.Metric.compute``, with the per-example columns stored by ``add_batch``."""
        pending = self.__dict__.pop("_pending_columns", None)
        if pending and pending["columns"]:
            twice = sorted(k for k in pending["columns"] if kwargs.get(k) is not None)
            if predictions is not None or twice:
                raise ValueError(
                    "per-example columns were given to add_batch: call compute() without predictions "
                    f"and without {sorted(pending['columns'])}"
                )
            kwargs.update(pending["columns"])
        try:
            return super().compute(predictions=predictions, references=references, **kwargs)  # type: ignore[misc]
        finally:
            self.__dict__.pop("_pending_columns", None)  # compute() adds its own batch: start afresh
