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


def leaderboard_tab(ctx: Context) -> None:
    """The ranked table with judge selector, smoke-test toggle, filters, search, columns and sort."""
    import gradio as gr

    board = ctx.board()
    judge_choices = _judge_choices(board, False)
    families = sorted(f for f in board["family"].unique() if f)
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
        smoke = gr.Checkbox(value=False, label="Show smoke-test rows", elem_id="lb-smoke", scale=1)
    table = gr.Dataframe(
        value=_view(
            board,
            judge_choices[0] if judge_choices else None,
            False,
            [],
            ["reported", "measured"],
            "",
            list(lb.DEFAULT_GROUPS),
            "OI %",
            True,
        ),
        interactive=False,
        wrap=True,
        elem_id="leaderboard-table",
        max_height=700,
        show_search="none",
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
        "Δ = Judge OI − self-audit OI; Pattern: Under (Δ > 5 pp), Over (Δ < −5 pp), else Calib. "
        "Smoke-test rows were judged by the embedded 270M model or by the test simulation and mean nothing."
    )
    inputs = [judge, smoke, fam, source, search, groups, sort_by, descending]

    def update(judge_v, smoke_v, fam_v, source_v, search_v, groups_v, sort_v, desc_v):
        return _view(ctx.board(), judge_v, smoke_v, fam_v, source_v, search_v, groups_v, sort_v, desc_v)

    def reload(judge_v, smoke_v, *rest):
        fresh = ctx.board()
        choices = _judge_choices(fresh, smoke_v)
        chosen = judge_v if judge_v in choices else (choices[0] if choices else None)
        fams = sorted(f for f in fresh["family"].unique() if f)
        return (
            gr.Dropdown(choices=choices, value=chosen),
            gr.Dropdown(choices=fams),
            _view(fresh, chosen, smoke_v, *rest),
        )

    for comp in (judge, fam, source, groups, sort_by, descending):
        comp.change(update, inputs, table)
    search.submit(update, inputs, table)
    search.change(update, inputs, table)
    smoke.change(reload, inputs, [judge, fam, table])
    refresh.click(reload, inputs, [judge, fam, table])


def _view(board, judge, smoke, families, sources, search, groups, sort_by, descending) -> pd.DataFrame:
    return lb.board_view(
        board,
        judge=None if judge in (None, "", ALL_JUDGES) else judge,
        show_smoke=bool(smoke),
        families=families or [],
        sources=sources or [],
        search=search or "",
        groups=groups or [],
        sort_by=sort_by or "OI %",
        ascending=not descending,
    )


def plots_tab(ctx: Context) -> None:
    """Imagination gradient, Self-Monitoring Inversion, stereotype gap, Accum growth (matplotlib)."""
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

    def render(judge_v: str | None, smoke_v: bool) -> tuple[Any, ...]:
        fresh = ctx.board()
        view = fresh if smoke_v else fresh[~fresh["smoke_test"]]
        if judge_v:
            view = view[view["judge"] == judge_v]
        fig_inv, text = plots.self_monitoring_inversion(view)
        return (
            text,
            plots.imagination_gradient(view),
            fig_inv,
            plots.stereotype_gap(view),
            plots.accum_growth(plots.accum_curves(ctx.store.root, ctx.run_dirs, include_smoke=smoke_v)),
        )

    first = render(choices[0] if choices else None, False)
    stats = gr.Markdown(first[0], elem_id="plots-stats")
    with gr.Row():
        gradient = gr.Plot(first[1], show_label=False, elem_id="plot-gradient")
        inversion = gr.Plot(first[2], show_label=False, elem_id="plot-inversion")
    with gr.Row():
        gap = gr.Plot(first[3], show_label=False, elem_id="plot-gap")
        accum = gr.Plot(first[4], show_label=False, elem_id="plot-accum")
    outputs = [stats, gradient, inversion, gap, accum]
    judge.change(render, [judge, smoke], outputs)
    smoke.change(render, [judge, smoke], outputs)
    refresh.click(render, [judge, smoke], outputs)
