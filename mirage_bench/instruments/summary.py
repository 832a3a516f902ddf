"""Summaries of a run (``summary.json``) and the ``mirage-bench report`` tables.

Rates follow Appendix B of the MirageBench paper: OI = (#INFERRED_STEREOTYPE + #FABRICATED) /
#claims, pooled over a model's records (a claim-weighted micro-average); the self-audit OI uses
the model's own labels; Gap = judge OI - self-audit OI. Judgments with status ``parse_failure``
or ``call_failure`` are excluded from every rate and counted separately. Every number is computed
by :mod:`mirage_bench.metrics` (:func:`~mirage_bench.metrics.oi.composition` for OI and the shares,
:mod:`mirage_bench.metrics.accumulation` for Accum, through
:func:`mirage_bench.instruments.accum.summary.accum_summary`); this module selects and renders.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mirage_bench.instruments.accum.summary import accum_summary
from mirage_bench.instruments.records import AccumRecord, JudgmentRecord, ProbeRecord, ResponseRecord
from mirage_bench.metrics.oi import composition

__all__ = ["accum_summary", "composition", "render_report", "summarize"]


def _sub(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a - b


def summarize(
    responses: Sequence[ResponseRecord],
    judgments: Sequence[JudgmentRecord],
    probes: Sequence[ProbeRecord] = (),
    accums: Sequence[AccumRecord] = (),
    *,
    model: str,
    judge: str | None,
    smoke_test: bool,
) -> dict[str, Any]:
    """The ``summary.json`` content of a run."""
    ok = [j for j in judgments if j.status == "ok"]
    judge_labels = [c.label for j in ok for c in j.claims]
    audits = [r.self_audit for r in responses if r.self_audit.status == "ok"]
    self_labels = [c.category for a in audits for c in a.claims]
    overall = composition(judge_labels)
    self_oi = composition(self_labels)["oi_rate"]
    per_task = {}
    for task_id in sorted({j.task_id for j in judgments} | {r.task_id for r in responses}):
        row = composition(c.label for j in ok if j.task_id == task_id for c in j.claims)
        row["self_audit_oi_rate"] = composition(
            c.category
            for r in responses
            if r.task_id == task_id and r.self_audit.status == "ok"
            for c in r.self_audit.claims
        )["oi_rate"]
        per_task[task_id] = row
    per_group = {
        g: composition(c.label for j in ok if j.stereotype_type == g for c in j.claims)
        for g in sorted({j.stereotype_type for j in ok})
    }
    summary: dict[str, Any] = {
        "model": model,
        "judge": judge,
        "smoke_test": smoke_test,
        "n_responses": len(responses),
        "n_judged": len(ok),
        **overall,
        "self_audit_oi_rate": self_oi,
        "self_audit_n_claims": len(self_labels),
        "gap": _sub(overall["oi_rate"], self_oi),
        "per_task": per_task,
        "per_stereotype_type": per_group,
        "failures": {
            "response_call_failures": sum(r.status == "failed" for r in responses),
            "self_audit_parse_failures": sum(r.self_audit.status == "parse_failure" for r in responses),
            "self_audit_call_failures": sum(r.self_audit.status == "call_failure" for r in responses),
            "judge_parse_failures": sum(j.status == "parse_failure" for j in judgments),
            "judge_call_failures": sum(j.status == "call_failure" for j in judgments),
            "injection_flags": sum(j.injection_flag for j in judgments),
            "repaired_judgments": sum(bool(j.repairs) for j in ok),
        },
    }
    if probes:
        judged = [p.judgment for p in probes if p.judgment is not None and p.judgment.status == "ok"]
        claims = [c for jd in judged for c in jd.claims]
        summary["probe"] = {
            "n_personas": len(probes),
            "parse_failures": sum(p.status == "parse_failure" for p in probes),
            "call_failures": sum(p.status == "call_failure" for p in probes),
            # probes whose inferences the judge could not label: left out of the rates, counted here
            "judge_parse_failures": sum(p.judgment is not None and p.judgment.status == "parse_failure"
                                        for p in probes),
            "judge_call_failures": sum(p.judgment is not None and p.judgment.status == "call_failure"
                                       for p in probes),
            "n_inferences": sum(len(p.inferences) for p in probes),
            "n_judged_claims": len(claims),
            "incorrect_rate": (sum(str(c.accuracy) == "INCORRECT" for c in claims) / len(claims))
            if claims
            else None,
            **{k: v for k, v in composition(c.label for c in claims).items() if k != "n_claims"},
        }
    if accums:
        summary["accum"] = {
            cond: accum_summary([a for a in accums if a.condition == cond])
            for cond in sorted({a.condition for a in accums})
        }
    return summary



def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}"


def _composition_cells(rates: dict[str, Any]) -> list[str]:
    """Claims, G/R/S/F %, OI % and self-audit OI % of a summary (or one of its per-task rows)."""
    keys = ("grounded_rate", "reasonable_rate", "stereotype_rate", "fabricated_rate", "oi_rate",
            "self_audit_oi_rate")
    return [str(rates["n_claims"]), *(_pct(rates[k]) for k in keys)]


def render_report(summary: dict[str, Any], console: Any = None) -> None:
    """Print the leaderboard row, the per-task table and the failure counts with rich."""
    from rich.console import Console
    from rich.table import Table

    console = console or Console()
    if summary.get("smoke_test"):
        console.print(
            "[bold yellow]SMOKE TEST[/]: produced with the embedded local model or the simulation; "
            "these numbers mean nothing and are never ranked."
        )
    console.print(f"model: [bold]{summary['model']}[/]   judge: [bold]{summary['judge']}[/]")
    row = Table(title="Leaderboard row")
    for col in ("claims", "G%", "R%", "S%", "F%", "OI%", "Self OI%", "Gap (pp)"):
        row.add_column(col, justify="right")
    gap = summary.get("gap")
    row.add_row(*_composition_cells(summary), "-" if gap is None else f"{100 * gap:+.1f}")
    console.print(row)
    tasks = Table(title="Per task (judge labels)")
    for col in ("task", "claims", "G%", "R%", "S%", "F%", "OI%", "Self OI%"):
        tasks.add_column(col, justify="left" if col == "task" else "right")
    for task_id, r in summary["per_task"].items():
        tasks.add_row(task_id, *_composition_cells(r))
    console.print(tasks)
    failures = Table(title="Failures (excluded from rates)")
    failures.add_column("kind")
    failures.add_column("count", justify="right")
    for kind, count in summary["failures"].items():
        failures.add_row(kind, str(count))
    console.print(failures)
    if "probe" in summary:
        p = summary["probe"]
        console.print(
            f"Probe: {p['n_personas']} personas, {p['n_judged_claims']} judged claims, "
            f"incorrect rate {_pct(p['incorrect_rate'])}% (excluded: {p['parse_failures']} probe parse, "
            f"{p['call_failures']} probe call, {p.get('judge_parse_failures', 0)} judge parse, "
            f"{p.get('judge_call_failures', 0)} judge call failures)"
        )
    if summary.get("accum"):
        console.print(accum_table(summary["model"], summary["accum"]))


def _num(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def accum_table(model: str, accum: dict[str, dict[str, Any]]) -> Any:
    """Tables 4 and 8 of one run: one row per condition (the G.7 prompt, the prune-permitting control)."""
    from rich.table import Table

    table = Table(title=f"Accum of {model} (Tables 4 and 8)")
    for col in ("condition", "scripts", "R1", "R8", "growth", "/round", "slope", "R²", "removal %",
                "retracted"):
        table.add_column(col, justify="left" if col == "condition" else "right")
    for cond, a in accum.items():
        table.add_row(
            CONDITION_LABELS.get(cond, cond), str(a["n_scripts"]), _num(a["r_first"]), _num(a["r_last"]),
            _num(a["growth"]), _num(a["accumulation_rate"]), _num(a["slope"]), _num(a["r2"]),
            _pct(a["removal_rate"]), f"{a['retractions']}/{a['contradictions_with_stored_inference']}",
        )
    notes = [f"{cond}: {a['failed_scripts']} failed script(s), {a['n_truncated'] or 0} stopped early"
             for cond, a in accum.items() if a["failed_scripts"] or a["n_truncated"]]
    notes += [f"{cond}: retraction decided by {a['retraction_method']}"
              + (f", {a['retraction_judge_failures']} judge call(s) failed (not scored)"
                 if a.get("retraction_judge_failures") else "")
              for cond, a in accum.items() if a.get("retraction_method")]
    table.caption = "retracted = retractions / contradictions that met a stored inference" + (
        "; " + "; ".join(notes) if notes else "")
    return table


#: Short display names of the Accum conditions (the record's ``condition`` stays the full name).
CONDITION_LABELS: dict[str, str] = {"accum_update": "G.7 prompt",
                                    "accum_update_prune_control": "prune control"}


def _cell(column: str, value: Any) -> str:
    if value is None or (isinstance(value, float) and value != value):
        return "-"
    if isinstance(value, float):
        digits = 1 if column.endswith("_pct") or column.endswith("_pp") else 2
        return f"{value:.{digits}f}"
    if column == "condition":
        return CONDITION_LABELS.get(str(value), str(value))
    return str(value)


def render_tables(tables: dict[str, Any], console: Any = None, *, smoke_test: bool = False) -> None:
    """Print the per-model tables of :func:`mirage_bench.metrics.tables.run_tables` with rich."""
    from rich.console import Console
    from rich.table import Table

    from mirage_bench.metrics.tables import TABLE_TITLES

    console = console or Console()
    if smoke_test:
        console.print("[bold yellow]SMOKE TEST[/]: these tables are from a simulation or the embedded "
                      "local model; they measure nothing.")
    if not tables:
        console.print("no per-model tables: the run has neither judged claims nor Accum rounds")
    for name, frame in tables.items():
        table = Table(title=f"{TABLE_TITLES[name]} (measured)")
        for col in frame.columns:
            table.add_column(col, justify="left" if col in ("model", "condition", "positives") else "right")
        for row in frame.itertuples(index=False):
            table.add_row(*(_cell(c, v) for c, v in zip(frame.columns, row, strict=True)))
        console.print(table)
        if name == "table6" and len(frame):
            at_median = ", ".join(f"{m} {n}" for m, n in zip(frame.model, frame.n_at_median, strict=True))
            console.print(f"AUROC positives: records {frame['positives'].iloc[0].replace('_', ' ')} "
                          f"judge OI of their model (App. D); records at the median: {at_median}")
