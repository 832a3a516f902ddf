"""Judges tab of the Space (UI only): how far each judge on the board has been validated, and the
drift canary's dated history. The numbers come from :mod:`mirage_bench.judges.overview`."""

from __future__ import annotations

from typing import Any

from .tabs_board import Context

EXPLAIN = (
    "Every judge that has rows on the board. **Human kappa**: Cohen's kappa of the judge's labels with "
    "the human labels of the Annotate tab's samples of its claims (95% bootstrap CI, n claims); the "
    "paper's judge shows the paper's own figure (reported, App. H.3). **vs paper judge**: agreement "
    "with the paper's judge config on the drift canary's claims, where both labelled them. "
    "**Canary**: a fixed set of claims with reference labels (human labels when the store has them, "
    "otherwise those of the judge that first ranked the board), re-labelled the first time a judge "
    "config or snapshot is used and on request (`mirage-bench judges canary`). Drift is flagged when "
    "kappa falls below the previous run's CI or the reported snapshot changed. A judge without human "
    "validation is marked NOT VALIDATED."
)


def judges_tab(ctx: Context) -> None:
    """The judges table (validation, agreement, last canary) and the canary history."""
    import gradio as gr

    from mirage_bench.judges.overview import canary_table, judges_overview

    def tables() -> tuple[Any, Any]:
        return judges_overview(ctx.store.root, ctx.board()), canary_table(ctx.store.root)

    gr.Markdown(EXPLAIN, elem_id="judges-explain")
    overview, history = tables()
    judges = gr.Dataframe(
        value=overview, interactive=False, wrap=False, elem_id="judges-table", show_search="none"
    )
    gr.Markdown("### Drift canary history (newest first)")
    canary = gr.Dataframe(
        value=history, interactive=False, wrap=False, elem_id="judges-canary", show_search="none"
    )
    refresh = gr.Button("Refresh", size="sm", elem_id="judges-refresh")
    refresh.click(tables, None, [judges, canary])
    ctx.on_load(tables, [judges, canary])
