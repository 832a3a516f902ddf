"""Leaderboard and Plots tabs of the Space (UI only; the numbers come from mirage_bench.leaderboard.board)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from mirage_bench.leaderboard import board as lb
from mirage_bench.leaderboard.store import SubmissionStore

ALL_JUDGES = "(all judges: not ranked against each other)"


@dataclass
class Context:
    """What every tab reads: the submission store, extra run directories and the worker's judge.

    ``loaders`` are ``(function, outputs)`` pairs the app runs on every page load, so a page shows
    what was added since the Space started (samples, runs, reward sets, queue) without a restart.
    """

    store: SubmissionStore
    run_dirs: list[Path] = field(default_factory=list)
    judge: str = "local"
    #: Submitting and annotating need a Hugging Face login (on a Space; see space/identity.py).
    require_login: bool = False
    loaders: list[tuple[Callable[[], Any], list[Any]]] = field(default_factory=list)

    def on_load(self, function: Callable[[], Any], outputs: list[Any]) -> None:
        """Refresh ``outputs`` with ``function()`` whenever a browser (re)loads the page."""
        self.loaders.append((function, outputs))

    def board(self) -> pd.DataFrame:
        """The full board, read fresh from the files (cheap: a few CSVs and JSON rows)."""
        return lb.load_board(self.store.root, self.run_dirs)


def _judge_choices(board: pd.DataFrame, show_smoke: bool) -> list[str]:
    return lb.judges(board, include_smoke=show_smoke)


#: CSS for the board table: rank numbers are computed for the chosen sort, so the table's own
#: header sort menu (which would reorder rows under stale ranks) is hidden; sort with "Sort by".
BOARD_CSS = """
<style>
#leaderboard-table .cell-menu-button, #leaderboard-table button.sort-button,
#leaderboard-table .sort-buttons { display: none !important; }
#leaderboard-table th { white-space: nowrap; }
</style>
"""
EMPTY_BOARD = (
    "**No rows match this view.** Clear the search or the filters, or tick *Show smoke-test rows* / "
    "*Show flagged rows*."
)


def column_widths(frame: pd.DataFrame) -> list[int]:
    """Pixel widths for the table's columns: wide enough for the longest word of the header and for
    the cells (up to a cap; longer cells wrap), so that no header breaks one letter per line.

    >>> column_widths(pd.DataFrame({"#": ["1"], "Self-audit OI %": [""], "Flags": ["x " * 200]}))
    [40, 114, 360]
    """
    widths = []
    for col in frame.columns:
        longest_word = max((len(w) for w in str(col).split()), default=1)
        cells = max((len(str(v)) for v in frame[col]), default=0)
        cap = 44 if col == "Flags" else 22
        chars = max(longest_word, min(cells, cap))
        widths.append(max(40, min(360, 9 * chars + 24)))
    return widths


def judge_heading(judge: str | None) -> str:
    """The line above the table naming the one judge the view ranks by."""
    if not judge or judge == ALL_JUDGES:
        return "**All judges** (rows are not ranked against each other across judges)"
    return f"**Judge:** `{judge}` (every row below was judged by it)"


def leaderboard_tab(ctx: Context) -> None:
    """The ranked table: judge selector, smoke-test and flagged toggles, filters, search, columns, sort."""
    import gradio as gr

    board = ctx.board()
    judge_choices = _judge_choices(board, False)
    families = sorted(f for f in board["family"].unique() if f)
    gr.HTML(BOARD_CSS, elem_id="lb-css")
    with gr.Row():
        judge = gr.Dropdown(
            judge_choices,
            value=judge_choices[0] if judge_choices else None,
            label="Judge",
            info="One judge per ranked view",
            elem_id="lb-judge",
            scale=3,
        )
        search = gr.Textbox(label="Search model", placeholder="e.g. qwen", elem_id="lb-search", scale=2)
        sort_by = gr.Dropdown(
            lb.sortable_columns(), value="OI %", label="Sort by", elem_id="lb-sort", scale=2
        )
        descending = gr.Checkbox(value=True, label="Descending", elem_id="lb-desc", scale=1)
    with gr.Row():
        fam = gr.Dropdown(families, multiselect=True, label="Family", elem_id="lb-family", scale=2)
        source = gr.CheckboxGroup(
            ["reported", "measured"],
            value=["reported", "measured"],
            label="Source",
            elem_id="lb-source",
            scale=1,
        )
        groups = gr.CheckboxGroup(
            [g for g in lb.COLUMN_GROUPS if g != "core"],
            value=list(lb.DEFAULT_GROUPS),
            label="Columns",
            elem_id="lb-columns",
            scale=3,
        )
        with gr.Column(scale=1, min_width=160):
            smoke = gr.Checkbox(value=False, label="Show smoke-test rows", elem_id="lb-smoke")
            flagged = gr.Checkbox(value=False, label="Show flagged rows", elem_id="lb-flagged")
    first_judge = judge_choices[0] if judge_choices else None
    first = _view(
        board, first_judge, False, [], ["reported", "measured"], "", list(lb.DEFAULT_GROUPS), "OI %", True
    )
    heading = gr.Markdown(judge_heading(first_judge), elem_id="lb-judge-heading")
    empty = gr.Markdown(EMPTY_BOARD, visible=first.empty, elem_id="lb-empty")
    table = gr.Dataframe(
        value=first,
        interactive=False,
        wrap=True,
        elem_id="leaderboard-table",
        max_height=700,
        show_search="none",
        visible=not first.empty,
        column_widths=column_widths(first),
    )
    refresh = gr.Button("Refresh", size="sm", elem_id="lb-refresh")
    from mirage_bench.judges.overview import validation_note  # how far the shown judge is validated

    def note_for(judge_v: str | None) -> str:
        return validation_note(ctx.store.root, ctx.board(), judge_v)

    judge_note = gr.Markdown(note_for(judge_choices[0] if judge_choices else None), elem_id="lb-judge-note")
    judge.change(note_for, judge, judge_note)
    gr.Markdown(
        "OI % = (Stereotype + Fabricated) / all judged claims (Eq. 2 of the paper). The 95% CI resamples "
        "(persona, task) records; the paper prints no per-model CI, so reported rows have none. "
        "Faithful / resp. = Grounded + Reasonable claims per judged response, Claims / resp. all claims per "
        "response: read them with OI % (a model that says nothing about the user has no OI and no faithful "
        "claims; see About). Δ = Judge OI − self-audit OI; Pattern: Under (Δ > 5 pp), Over (Δ < −5 pp), else "
        "Calib. Rows badged (smoke test) were judged by the embedded 270M model or by the test simulation "
        "and mean nothing; rows badged ⚠ carry integrity flags (degenerate text or injection attempts, "
        "reasons in Flags). Neither is ranked."
    )
    inputs = [judge, smoke, fam, source, search, groups, sort_by, descending, flagged]

    def shown(frame: pd.DataFrame, judge_v: str | None) -> tuple[Any, Any, Any]:
        return (
            gr.Markdown(judge_heading(judge_v)),
            gr.Markdown(visible=frame.empty),
            gr.Dataframe(value=frame, visible=not frame.empty, column_widths=column_widths(frame)),
        )

    def update(judge_v, smoke_v, fam_v, source_v, search_v, groups_v, sort_v, desc_v, flagged_v):
        frame = _view(ctx.board(), judge_v, smoke_v, fam_v, source_v, search_v, groups_v, sort_v, desc_v,
                      flagged_v)
        return shown(frame, judge_v)

    def reload(judge_v, smoke_v, *rest):
        fresh = ctx.board()
        choices = _judge_choices(fresh, smoke_v)
        chosen = judge_v if judge_v in choices else (choices[0] if choices else None)
        fams = sorted(f for f in fresh["family"].unique() if f)
        frame = _view(fresh, chosen, smoke_v, *rest)
        return (gr.Dropdown(choices=choices, value=chosen), gr.Dropdown(choices=fams), *shown(frame, chosen))

    outputs = [heading, empty, table]
    for comp in (judge, fam, source, groups, sort_by, descending, flagged):
        comp.change(update, inputs, outputs)
    search.submit(update, inputs, outputs)
    search.change(update, inputs, outputs)
    smoke.change(reload, inputs, [judge, fam, *outputs])
    refresh.click(reload, inputs, [judge, fam, *outputs])


def _view(board, judge, smoke, families, sources, search, groups, sort_by, descending, flagged=False):
    return lb.board_view(
        board,
        judge=None if judge in (None, "", ALL_JUDGES) else judge,
        show_smoke=bool(smoke),
        show_flagged=bool(flagged),
        families=families or [],
        sources=sources or [],
        search=search or "",
        groups=groups or [],
        sort_by=sort_by or "OI %",
        ascending=not descending,
    )


def plots_tab(ctx: Context) -> None:
    """Trade-off frontier, imagination gradient, Self-Monitoring Inversion, stereotype gap, Accum growth."""
    import gradio as gr

    from mirage_bench import plots

    board = ctx.board()
    choices = _judge_choices(board, False)
    with gr.Row():
        judge = gr.Dropdown(
            choices, value=choices[0] if choices else None, label="Judge", elem_id="plots-judge"
        )
        smoke = gr.Checkbox(value=False, label="Include smoke-test rows", elem_id="plots-smoke")
        refresh = gr.Button("Refresh plots", size="sm")

    def figures(judge_v: str | None, smoke_v: bool) -> tuple[Any, ...]:
        fresh = ctx.board()
        view = fresh if smoke_v else fresh[~fresh["smoke_test"]]
        view = view[~view["flagged"]] if "flagged" in view else view
        if judge_v:
            view = view[view["judge"] == judge_v]
        sources = list(view["source"].unique())
        fig_inv, text = plots.self_monitoring_inversion(view)
        figs = (
            plots.tradeoff_frontier(view),
            plots.imagination_gradient(view),
            fig_inv,
            plots.stereotype_gap(view),
        )
        accum = plots.accum_growth(plots.accum_curves(ctx.store.root, ctx.run_dirs, include_smoke=smoke_v))
        caption = f"**Figures for** {plots.view_caption(judge_v, sources)}" + (
            " (smoke-test rows included: they mean nothing)" if smoke_v else ""
        )
        return (caption, text, *(plots.name_view(f, judge_v, sources) for f in figs), accum)

    def render(judge_v: str | None, smoke_v: bool) -> tuple[Any, ...]:
        fresh_choices = _judge_choices(ctx.board(), bool(smoke_v))
        chosen = judge_v if judge_v in fresh_choices else (fresh_choices[0] if fresh_choices else None)
        return (gr.Dropdown(choices=fresh_choices, value=chosen), *figures(chosen, bool(smoke_v)))

    first = figures(choices[0] if choices else None, False)
    caption = gr.Markdown(first[0], elem_id="plots-caption")
    stats = gr.Markdown(first[1], elem_id="plots-stats")
    with gr.Row():
        tradeoff = gr.Plot(first[2], show_label=False, elem_id="plot-tradeoff")
        gradient = gr.Plot(first[3], show_label=False, elem_id="plot-gradient")
    with gr.Row():
        inversion = gr.Plot(first[4], show_label=False, elem_id="plot-inversion")
        gap = gr.Plot(first[5], show_label=False, elem_id="plot-gap")
    with gr.Row():
        accum = gr.Plot(first[6], show_label=False, elem_id="plot-accum")
    outputs = [judge, caption, stats, tradeoff, gradient, inversion, gap, accum]
    judge.input(render, [judge, smoke], outputs)
    smoke.change(render, [judge, smoke], outputs)
    refresh.click(render, [judge, smoke], outputs)
