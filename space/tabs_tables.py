"""Paper tables tab of the Space: Tables 4, 6, 7, 8 and 10, measured rows beside the reported ones.

UI only: the rows come from :mod:`mirage_bench.paper_tables` (which computes them with
:mod:`mirage_bench.metrics`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pandas as pd

from .tabs_board import Context

if TYPE_CHECKING:
    from mirage_bench.paper_tables import MeasuredRecords

#: Radio choices: (label, table name).
TABLE_CHOICES: list[tuple[str, str]] = [
    ("Table 4: Accum growth", "table4"),
    ("Table 6: within-model self-audit signal", "table6"),
    ("Table 7: OI by stereotype group", "table7"),
    ("Table 8: Accum slope, R², removal", "table8"),
    ("Table 10: OI by model × task", "table10"),
]

NOTES: dict[str, str] = {
    "table4": "R1 / R8: mean inferred attributes stored after rounds 1 / 8; growth and per-round rate "
    "(Eq. 4) per persona, averaged. Accum has no judge: measured rows of every judge are shown. "
    "`accum_update` is the paper's G.7 prompt; `accum_update_prune_control` this package's "
    "prune-permitting control (not in the paper).",
    "table6": "Per record (persona × task): Spearman ρ and AUROC of self-audit OI % for above-median "
    "judge OI % records; `positives` says how records at the median were counted.",
    "table7": "OI % per persona stereotype group; Δ = stereotypical − counter-stereotypical (pp).",
    "table8": "OLS slope and R² of inferred attributes on round; removal % = share of the unique "
    "inferred entries at round T absent at T+1, per persona, averaged (App. F).",
    "table10": "OI % per model and task; `pooled` pools all claims, `macro` averages the model rows.",
}


def _records(ctx: Context, smoke: bool) -> MeasuredRecords:
    from mirage_bench import paper_tables

    return paper_tables.load_records(ctx.store.root, ctx.run_dirs, include_smoke=smoke)


def _judges(records: MeasuredRecords) -> list[str]:
    from mirage_bench.reported import PAPER_JUDGE

    return [PAPER_JUDGE] + [j for j in records.judges() if j != PAPER_JUDGE]


def tables_view(ctx: Context, table: str, judge: str | None, smoke: bool = False,
                show_reported: bool = True, median_ties: str = "negative",
                records: MeasuredRecords | None = None) -> tuple[pd.DataFrame, str]:
    """The rows shown for ``table`` and the note under them (rounded for display only).

    ``records`` are the run folders' records read with the same ``smoke`` (read here when None).
    """
    from mirage_bench import paper_tables

    if records is None:
        records = _records(ctx, smoke)
    measured = paper_tables.measured_tables(records, judge, median_ties=median_ties)
    frame = paper_tables.side_by_side(table, measured, show_reported=show_reported)
    shown = frame.round(2) if not frame.empty else pd.DataFrame({"": ["no rows"]})
    note = NOTES[table]
    if table not in measured:
        note += "\n\nNo measured rows" + (f" for judge `{judge}`" if table in paper_tables.JUDGED_TABLES
                                          else "") + " yet."
    if smoke:
        note += (f"\n\nRows marked {paper_tables.SMOKE_MARK} come from the embedded model or the "
                 "simulation: they measure nothing and are never ranked.")
    if records.problems:
        note += "\n\nUnreadable run folders (not shown): " + "; ".join(records.problems)
    return shown, note


def tables_tab(ctx: Context) -> None:
    """Table selector, judge selector, smoke-test and reported-rows toggles, the table and its note."""
    import gradio as gr

    records = _records(ctx, False)
    judges = _judges(records)
    with gr.Row():
        table = gr.Radio(TABLE_CHOICES, value="table4", label="Table", elem_id="tables-table")
        judge = gr.Dropdown(judges, value=judges[0], label="Judge (Tables 6, 7, 10)", elem_id="tables-judge")
    with gr.Row():
        reported = gr.Checkbox(value=True, label="Show the paper's reported rows", elem_id="tables-reported")
        smoke = gr.Checkbox(value=False, label="Include smoke-test rows", elem_id="tables-smoke")
        ties = gr.Radio([("above the median", "negative"), ("at or above the median", "positive")],
                        value="negative", label="Table 6 AUROC positives", elem_id="tables-ties")
        refresh = gr.Button("Refresh", elem_id="tables-refresh")
    first, first_note = tables_view(ctx, "table4", judges[0], records=records)
    grid = gr.Dataframe(value=first, interactive=False, wrap=True, elem_id="tables-grid")
    note = gr.Markdown(first_note, elem_id="tables-note")

    def render(table_v: str, judge_v: str | None, reported_v: bool, smoke_v: bool, ties_v: str) -> Any:
        return tables_view(ctx, table_v, judge_v, bool(smoke_v), bool(reported_v), ties_v or "negative")

    def rejudge(table_v, judge_v, reported_v, smoke_v, ties_v):
        fresh = _records(ctx, bool(smoke_v))  # read once for the judge list and the table
        choices = _judges(fresh)
        chosen = judge_v if judge_v in choices else choices[0]
        return (gr.Dropdown(choices=choices, value=chosen),
                *tables_view(ctx, table_v, chosen, bool(smoke_v), bool(reported_v), ties_v or "negative",
                             records=fresh))

    inputs = [table, judge, reported, smoke, ties]
    for comp in (table, judge, reported, ties):
        comp.change(render, inputs, [grid, note])
    smoke.change(rejudge, inputs, [judge, grid, note])
    refresh.click(rejudge, inputs, [judge, grid, note])
    ctx.on_load(lambda: tables_view(ctx, "table4", judges[0]), [grid, note])
