"""The judge as a measured instrument: judge configs as data, fixed-claim judging, agreement glue,
the drift canary and the cost estimate of a run before it is spent."""

from __future__ import annotations

from types import ModuleType


def annotation_records() -> ModuleType:
    """The module of the human-validation file formats (``load_validation_sample``, ``make_item_id``).

    It lives in :mod:`mirage_bench.validation.records`.
    """
    from mirage_bench.validation import records

    return records
