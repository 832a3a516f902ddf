"""The paper's per-model tables computed from measured records, in the reported tables' columns.

One function per table, each a thin composition of the metric that defines its numbers, so that the
CLI (``mirage-bench report --tables``) and the Space show the same values:

* Table 4 (Accum growth: ``r1_attributes``, ``r8_attributes``, ``growth``, ``per_round``) and Table 8
  (``slope``, ``r2``, ``r8_attributes``, ``removal_pct``), per model and memory condition, from
  :func:`mirage_bench.metrics.accumulation.accumulation_report`;
* Table 6 (within-model ``spearman_rho``, ``auroc``, ``n_records``) from
  :func:`mirage_bench.metrics.selfmon.within_model_signal` on record-level OI %;
* Table 7 (``stereotypical_oi_pct``, ``counter_stereotypical_oi_pct``, ``neutral_oi_pct``,
  ``delta_pp``) from :func:`mirage_bench.metrics.oi.stereotype_group_table`;
* Table 10 (``<task>_oi_pct`` and ``all_oi_pct``) from :func:`mirage_bench.metrics.oi.model_task_table`.

Column names match :func:`mirage_bench.reported.load_reported` so measured and reported rows can be
shown side by side; measured rows carry ``source="measured"``.

>>> claims = pd.DataFrame({"model": "m", "persona_id": ["a", "a", "b"], "task_id": "apartment",
...                        "stereotype_type": ["stereotypical", "stereotypical", "neutral"],
...                        "label": ["GROUNDED", "FABRICATED", "FABRICATED"]})
>>> table10(claims)[["model", "apartment_oi_pct", "all_oi_pct"]].values.tolist()[0]
['m', 66.66666666666666, 66.66666666666666]
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from mirage_bench.metrics.accumulation import accumulation_report
from mirage_bench.metrics.labels import encode_labels
from mirage_bench.metrics.oi import _oi_table, model_task_table, stereotype_group_table
from mirage_bench.metrics.selfmon import within_model_signal

#: Table name -> title, in the paper's numbering.
TABLE_TITLES: dict[str, str] = {
    "table4": "Table 4: Accum growth (R1, R8, growth, per round)",
    "table6": "Table 6: within-model self-audit signal (Spearman ρ, AUROC)",
    "table7": "Table 7: OI % by persona stereotype group",
    "table8": "Table 8: Accum slope, R², R8 and removal %",
    "table10": "Table 10: OI % by model × task",
}


TABLE6_COLUMNS = ["model", "spearman_rho", "auroc", "n_records", "n_at_median", "positives"]


def record_oi(claims: pd.DataFrame, *, label_column: str = "label") -> pd.DataFrame:
    """Judge OI % of each (model, persona, task) record: ``model, persona_id, task_id, judge_oi_pct,
    n_claims`` (records without claims have no OI and do not appear)."""
    keys = ["model", "persona_id", "task_id"]
    table = _oi_table(claims, keys, encode_labels(claims[label_column]))
    return table[["oi_pct", "n_claims"]].rename(columns={"oi_pct": "judge_oi_pct"}).reset_index()


def self_audit_frame(responses: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """``model, persona_id, task_id, self_oi_pct`` of the responses whose self-audit is valid (status
    ok, at least one claim), from ``responses.jsonl`` records as dicts."""
    rows = []
    for r in responses:
        audit = r.get("self_audit") if isinstance(r.get("self_audit"), Mapping) else None
        if audit is None or audit.get("status", "ok") != "ok" or audit.get("oi_rate") is None:
            continue
        rows.append({"model": r.get("model"), "persona_id": r["persona_id"], "task_id": r["task_id"],
                     "self_oi_pct": 100 * float(audit["oi_rate"])})
    return pd.DataFrame(rows, columns=["model", "persona_id", "task_id", "self_oi_pct"])


def table6(claims: pd.DataFrame, self_audit: pd.DataFrame, *, median_ties: str = "negative") -> pd.DataFrame:
    """Table 6 over the records with both a valid self-audit and judged claims.

    Adds ``positives`` and ``n_at_median`` (see :func:`~mirage_bench.metrics.selfmon.within_model_signal`).
    """
    joined = record_oi(claims).merge(self_audit, on=["model", "persona_id", "task_id"], how="inner")
    if joined.empty:
        return pd.DataFrame(columns=TABLE6_COLUMNS)
    out = within_model_signal(joined.self_oi_pct, joined.judge_oi_pct, joined.model, median_ties=median_ties)
    return out[TABLE6_COLUMNS]


def table7(claims: pd.DataFrame) -> pd.DataFrame:
    """Table 7: one row per model plus ``pooled``; group columns as ``<group>_oi_pct``."""
    wide = stereotype_group_table(claims)
    wide = wide.rename(columns={c: f"{c}_oi_pct" for c in wide.columns if c != "delta_pp"})
    return wide.rename_axis("model").reset_index()


def table10(claims: pd.DataFrame) -> pd.DataFrame:
    """Table 10: one row per model plus ``pooled`` and ``macro``; ``<task>_oi_pct`` and ``all_oi_pct``."""
    wide = model_task_table(claims)
    wide = wide.rename(columns={c: f"{c}_oi_pct" for c in wide.columns})
    return wide.rename_axis("model").reset_index()


def accum_tables(records: Iterable[Mapping[str, Any]]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(table4, table8)`` per model and condition from ``accum.jsonl`` records (as dicts).

    Both carry ``model``, ``condition``, ``n_personas`` and ``n_truncated`` (personas that stopped
    before the last round); Table 8 adds the retraction counts (``n_stored``, ``n_retracted``) where
    contradictions were planted.
    """
    report = accumulation_report(list(records), by=("model", "condition"))
    report = report.rename(columns={"r_first": "r1_attributes", "r_last": "r8_attributes"})
    report["removal_pct"] = 100 * report["removal_rate"]
    common = ["model", "condition", "n_personas", "n_truncated"]
    t4 = report[[*common, "first_round", "last_round", "r1_attributes", "r8_attributes", "growth",
                 "per_round"]]
    extra = [c for c in ("n_stored", "n_retracted") if c in report.columns]
    t8 = report[[*common, "slope", "r2", "r8_attributes", "removal_pct", *extra]]
    return t4.reset_index(drop=True), t8.reset_index(drop=True)


def run_tables(
    claims: pd.DataFrame | None = None,
    responses: Iterable[Mapping[str, Any]] = (),
    accum_records: Iterable[Mapping[str, Any]] = (),
    *,
    median_ties: str = "negative",
) -> dict[str, pd.DataFrame]:
    """The tables a set of records supports, keyed ``table4`` … ``table10`` (absent without data)."""
    out: dict[str, pd.DataFrame] = {}
    accum_records = list(accum_records)
    if accum_records and any(r.get("rounds") for r in accum_records):
        try:
            out["table4"], out["table8"] = accum_tables(accum_records)
        except ValueError:  # no successful round
            pass
    if claims is not None and not claims.empty:
        out["table6"] = table6(claims, self_audit_frame(responses), median_ties=median_ties)
        out["table7"] = table7(claims)
        out["table10"] = table10(claims)
    return {name: out[name] for name in TABLE_TITLES if name in out}
