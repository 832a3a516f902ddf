"""The MirageBench leaderboard Space (Gradio 6, plain components).

UI only: every number, file and judgment comes from :mod:`mirage_bench` (leaderboard, browse,
submissions, annotation, plots); this module never calls a model. The judging worker runs in a
background thread of the same process unless disabled (``mirage-bench space --no-worker``).

Run it with ``mirage-bench space --host 127.0.0.1 --port 7860`` (``make run``), or on a Hugging
Face Space through ``app_file: space/app.py``.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # executed as a script by the Hugging Face Spaces runtime
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from space import tabs_board, tabs_data, tabs_judges, tabs_submit  # noqa: E402

TITLE = "MirageBench leaderboard: over-inference in personalized LLMs"

CSS = """
.mb-chip {border-radius: 6px; padding: 1px 6px; font-size: 0.85em; white-space: nowrap}
.mb-card {border: 1px solid #ddd; border-radius: 8px; padding: 8px 12px; margin: 8px 0}
#annotate-claim {font-size: 1.15em; border-left: 4px solid #888; padding-left: 8px}
.mb-progress {background: #eee; border-radius: 6px; height: 14px; width: 100%}
.mb-progress > div {background: #4a7bd0; height: 14px; border-radius: 6px}
"""

#: Keyboard shortcuts A-D on the Annotate tab: clicks the matching label button when the tab is
#: visible and the focus is not in a text field (gradio 6: passed to ``launch(head=...)``).
HEAD = """
<script>
document.addEventListener('keydown', function (event) {
  if (event.ctrlKey || event.metaKey || event.altKey) { return; }
  const key = (event.key || '').toUpperCase();
  if (!['A', 'B', 'C', 'D'].includes(key)) { return; }
  const target = event.target;
  const tag = target && target.tagName ? target.tagName.toLowerCase() : '';
  if (tag === 'input' || tag === 'textarea' || (target && target.isContentEditable)) { return; }
  const root = document.querySelector('gradio-app') || document;
  const id = 'annotate-' + key;
  const el = (root.shadowRoot || root).querySelector('#' + id) || document.getElementById(id);
  if (!el) { return; }
  const button = el.tagName === 'BUTTON' ? el : el.querySelector('button');
  if (!button || button.offsetParent === null || button.disabled) { return; }
  event.preventDefault();
  button.click();
});
</script>
"""


@dataclass
class SpaceConfig:
    """Where the Space reads and writes, and how it judges."""

    store_root: Path | None = None
    run_dirs: list[Path] = field(default_factory=list)
    judge: str | None = None
    start_worker: bool = True
    worker_poll_s: float = 2.0
    #: Calls in flight to a submitted endpoint while generating its responses.
    endpoint_concurrency: int = 8


#: The tabs in display order: title, id, builder(context).
TABS = (
    ("Leaderboard", "leaderboard", tabs_board.leaderboard_tab),
    ("Plots", "plots", tabs_board.plots_tab),
    ("Judges", "judges", tabs_judges.judges_tab),
    ("Submit", "submit", tabs_submit.submit_tab),
    ("Browse", "browse", tabs_data.browse_tab),
    ("Annotate", "annotate", tabs_data.annotate_tab),
    ("Reward models", "reward", tabs_data.reward_tab),
    ("About", "about", tabs_data.about_tab),
)


def build_context(config: SpaceConfig | None = None) -> tabs_board.Context:
    """What the tabs read: the store, extra run directories and the judge (resolved as the worker does)."""
    from mirage_bench.leaderboard.store import SubmissionStore
    from mirage_bench.leaderboard.worker import resolve_judge

    config = config or SpaceConfig()
    return tabs_board.Context(
        store=SubmissionStore(config.store_root),
        run_dirs=list(config.run_dirs),
        judge=resolve_judge(config.judge),
    )


def build_app(config: SpaceConfig | None = None, context: tabs_board.Context | None = None) -> Any:
    """Build the Gradio Blocks app (does not launch it and starts no worker).

    ``context`` defaults to :func:`build_context` of ``config``; after the build it holds the
    page-load refreshers (``context.loaders``).
    """
    import gradio as gr

    context = context or build_context(config)
    with gr.Blocks(title=TITLE) as demo:
        gr.Markdown(
            f"# {TITLE}\n"
            "How often do personalized LLMs assert user attributes that the evidence never licensed? "
            "Rows marked **reported** are copied from the MirageBench paper (judge Claude-Opus-4-7); "
            "rows marked **measured** were judged by this package. Rows by different judges are never "
            "ranked together."
        )
        with gr.Tabs():
            for title, tab_id, build in TABS:
                with gr.Tab(title, id=tab_id):
                    build(context)
        for function, outputs in context.loaders:
            demo.load(function, None, outputs, show_progress="hidden")
    return demo


def launch(
    config: SpaceConfig | None = None,
    *,
    host: str = "127.0.0.1",
    port: int = 7860,
    block: bool = True,
) -> tuple[Any, Any]:
    """Build the app, start the in-process worker (unless disabled) and serve it.

    Returns ``(demo, worker)``; with ``block=False`` the server runs in a background thread and the
    caller stops it with ``demo.close()`` and ``worker.stop()``.
    """
    from mirage_bench.leaderboard.worker import Worker

    config = config or SpaceConfig()
    demo = build_app(config)
    worker = None
    if config.start_worker:
        worker = Worker(
            config.store_root,
            judge=config.judge,
            poll_s=config.worker_poll_s,
            endpoint_concurrency=config.endpoint_concurrency,
        )
        worker.start_background()
    demo.queue(default_concurrency_limit=4)
    demo.launch(
        server_name=host,
        server_port=port,
        prevent_thread_lock=not block,
        show_error=True,
        css=CSS,
        head=HEAD,
        footer_links=["api", "gradio"],
    )
    return demo, worker


if __name__ == "__main__":
    launch(host=os.environ.get("GRADIO_SERVER_NAME", "0.0.0.0"), port=int(os.environ.get("PORT", "7860")))
