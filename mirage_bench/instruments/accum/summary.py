"""The Accum part of ``summary.json`` and of ``mirage-bench report``: Tables 4 and 8 per condition.

Every number comes from :mod:`mirage_bench.metrics.accumulation` (Eq. 4, the OLS slope and R²,
App. F's removal rate, the retraction rate); this module only selects and names them, with
``None`` where a statistic is undefined (JSON has no NaN).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from mirage_bench.instruments.records import AccumRecord

#: ``summary.json`` key -> column of :func:`mirage_bench.metrics.accumulation.accumulation_report`.
REPORT_COLUMNS: dict[str, str] = {
    "n_personas": "n_personas",
    "n_truncated": "n_truncated",
    "first_round": "first_round",
    "last_round": "last_round",
    "r_first": "r_first",
    "r_last": "r_last",
    "growth": "growth",
    "accumulation_rate": "per_round",
    "slope": "slope",
    "intercept": "intercept",
    "r2": "r2",
    "removal_rate": "removal_rate",
    "removal_transitions": "n_transitions",
    "retraction_rate": "retraction_rate",
}


def _plain(value: Any) -> Any:
    """A JSON-ready scalar: ``None`` for NaN/missing, ``int`` for integer counts, else ``float``."""
    if value is None:
        return None
    if isinstance(value, (int, np.integer)):
        return int(value)
    number = float(value)
    return None if math.isnan(number) else number


def accum_summary(records: Sequence[AccumRecord | Mapping[str, Any]]) -> dict[str, Any]:
    """Table 4 + Table 8 + retractions of one condition's records (one model).

    Keys: ``n_scripts``, ``failed_scripts``, ``mean_inferred_by_round`` ({round: mean}), the
    :data:`REPORT_COLUMNS` (``accumulation_rate`` is Eq. 4's per-round rate, ``removal_rate`` App.
    F's), ``contradictions``, ``contradictions_with_stored_inference`` (the retraction rate's
    denominator) and ``retractions``.
    """
    from mirage_bench.metrics.accumulation import accum_frames, accumulation_report, mean_by_round

    dicts = [r.model_dump(mode="json") if isinstance(r, AccumRecord) else dict(r) for r in records]
    out: dict[str, Any] = {
        "n_scripts": len(dicts),
        "failed_scripts": sum(d.get("status") != "ok" for d in dicts),
    }
    counts, _, _, _ = accum_frames(dicts)
    out["mean_inferred_by_round"] = {str(r): m for r, m in mean_by_round(counts).items()}
    row: Mapping[str, Any] = {}
    if not counts.empty:
        table = accumulation_report(dicts, by=("condition",))
        if len(table) != 1:
            raise ValueError(f"accum_summary takes one condition's records, got {sorted(table.condition)}")
        row = table.iloc[0].to_dict()
    for key, column in REPORT_COLUMNS.items():
        out[key] = _plain(row.get(column))
    out["contradictions"] = _plain(row.get("n_contradictions")) or 0
    out["contradictions_with_stored_inference"] = _plain(row.get("n_stored")) or 0
    out["retractions"] = _plain(row.get("n_retracted")) or 0
    out.update(retraction_details(dicts))
    return out


def retraction_details(dicts: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Who decided the retractions and what they were (from
    :func:`mirage_bench.metrics.retraction.retraction_breakdown`).

    ``retraction_method`` (``judge`` / ``word_overlap_fallback`` / ``mixed``; ``None`` without
    checks), ``retraction_judge_failures`` (judge calls that failed: not scored, counted),
    ``retractions_revised``, ``retractions_late`` (one round after the planted round) and
    ``still_asserted``.
    """
    from mirage_bench.metrics.retraction import retraction_breakdown

    table = retraction_breakdown(dicts, by=("condition",))
    if table.empty:
        return {"retraction_method": None, "retraction_judge_failures": 0, "retractions_revised": 0,
                "retractions_late": 0, "still_asserted": 0}
    row = table.iloc[0]
    return {
        "retraction_method": str(row["method"]),
        "retraction_judge_failures": int(row["n_judge_failed"]),
        "retractions_revised": int(row["n_revised"]),
        "retractions_late": int(row["n_late"]),
        "still_asserted": int(row["n_still_asserted"]),
    }
