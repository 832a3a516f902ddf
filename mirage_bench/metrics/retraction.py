"""Accum retraction, broken down: who decided, how many judge calls failed, revised vs removed, late.

The retraction rate itself (retracted / contradictions that met a stored inference) is
:func:`mirage_bench.metrics.accumulation.retraction_rate`; this module calls it and adds the
columns a reader needs to trust it:

* ``method`` — ``judge`` (the independent retraction judge decided), ``word_overlap_fallback``
  (the offline heuristic), or ``mixed``;
* ``n_judge_failed`` — judge calls that failed (parse or call): not scored, so outside
  ``n_stored``, and counted here, never dropped;
* ``n_revised`` / ``n_removed`` — retractions that corrected the entry vs removed it;
* ``n_late`` — retractions that came one round after the planted round;
* ``n_still_asserted`` — stored inferences still asserted after the last checked round.

>>> rec = {"model": "m", "condition": "accum_update", "persona_id": "p", "rounds": [{"round": 6,
...        "status": "ok", "contradictions": [{"attribute": "a", "contradicts": "b", "method": "judge",
...        "previously_stored": True, "retracted": True, "outcome": "revised", "retracted_round": 7,
...        "judge": {"judge": "j", "status": "ok"}}]}]}
>>> row = retraction_breakdown([rec]).iloc[0]
>>> (row.method, int(row.n_stored), int(row.n_retracted), int(row.n_revised), int(row.n_late))
('judge', 1, 1, 1, 1)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd

from mirage_bench.metrics.accumulation import retraction_rate

CHECK_COLUMNS: tuple[str, ...] = (
    "model", "condition", "persona_id", "round", "attribute", "contradicts", "method", "judge_status",
    "previously_stored", "retracted", "outcome", "retracted_round",
)


def retraction_checks(records: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """One row per planted-contradiction check of ``accum.jsonl`` records (:data:`CHECK_COLUMNS`)."""
    rows = []
    for record in records:
        for rnd in record.get("rounds") or []:
            if rnd.get("status") != "ok":
                continue
            legacy = [rnd["contradiction"]] if rnd.get("contradiction") else []
            for check in rnd.get("contradictions") or legacy:
                judge = check.get("judge") or {}
                rows.append({
                    "model": record["model"], "condition": record.get("condition", ""),
                    "persona_id": record["persona_id"], "round": int(rnd["round"]),
                    "attribute": check.get("attribute"), "contradicts": check.get("contradicts"),
                    "method": check.get("method") or "word_overlap_fallback",
                    "judge_status": judge.get("status"),
                    "previously_stored": bool(check.get("previously_stored")),
                    "retracted": check.get("retracted"), "outcome": check.get("outcome"),
                    "retracted_round": check.get("retracted_round"),
                })
    return pd.DataFrame(rows, columns=list(CHECK_COLUMNS))


def retraction_breakdown(
    records: Iterable[Mapping[str, Any]], *, by: Sequence[str] = ("model", "condition")
) -> pd.DataFrame:
    """Per ``by`` group: :func:`~mirage_bench.metrics.accumulation.retraction_rate`'s columns plus
    ``method``, ``n_judged``, ``n_judge_failed``, ``n_revised``, ``n_removed``, ``n_late`` and
    ``n_still_asserted`` (see the module docstring). Empty when no contradiction was checked."""
    checks = retraction_checks(records)
    if checks.empty:
        return pd.DataFrame(columns=[*by, "n_contradictions", "n_stored", "n_retracted", "retraction_rate"])
    base = retraction_rate(checks, by=by)
    stored = checks.previously_stored
    retracted = checks.retracted.astype("boolean").fillna(False).astype(bool) & stored
    late = retracted & checks.retracted_round.notna() & (
        pd.to_numeric(checks.retracted_round, errors="coerce") > checks["round"]
    )
    work = checks[list(by)].assign(
        n_judged=(checks.method == "judge").astype(int),
        n_judge_failed=((checks.method == "judge") & (checks.judge_status != "ok")).astype(int),
        n_revised=(retracted & (checks.outcome == "revised")).astype(int),
        n_removed=(retracted & (checks.outcome == "retracted")).astype(int),
        n_late=late.astype(int),
        n_still_asserted=(stored & (checks.outcome == "asserted")).astype(int),
    )
    extra = work.groupby(list(by), sort=True).sum().reset_index()
    methods = checks.groupby(list(by), sort=True).method.agg(
        lambda m: m.iloc[0] if m.nunique() == 1 else "mixed"
    ).reset_index()
    return base.merge(methods, on=list(by)).merge(extra, on=list(by))
