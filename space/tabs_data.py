"""Browse, Annotate, Reward-models and About tabs of the Space (UI only)."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from mirage_bench import annotation as ann
from mirage_bench import browse
from space import identity
from space.tabs_board import Context

GROUPS = ["stereotypical", "counter_stereotypical", "neutral"]


def browse_tab(ctx: Context) -> None:
    """Persona -> facts and ground truth; task -> judged responses with claims coloured by label."""
    import gradio as gr

    from mirage_bench.personas import load_personas
    from mirage_bench.tasks import TASKS

    personas = {p.persona_id: p for p in load_personas()}
    task_choices = [(t.task_id.replace("_", " "), t.task_id) for t in TASKS]
    first = next(iter(personas))
    with gr.Row():
        group = gr.Dropdown(GROUPS, multiselect=True, label="Stereotype group", elem_id="browse-group")
        persona = gr.Dropdown(list(personas), value=first, label="Persona", elem_id="browse-persona")
        task = gr.Dropdown(task_choices, value=TASKS[0].task_id, label="Task", elem_id="browse-task")
    with gr.Row():
        models = gr.Dropdown([], multiselect=True, label="Model", elem_id="browse-models")
        # Values are the short names, so the page's config never carries the judge's label tokens.
        labels = gr.CheckboxGroup(
            list(browse.LABEL_NAMES.values()), label="Claim label", elem_id="browse-labels"
        )
        all_personas = gr.Checkbox(value=False, label="All personas for this task", elem_id="browse-all")
        reasoning = gr.Checkbox(value=False, label="Show the judge's reasoning", elem_id="browse-reasoning")
    with gr.Row():
        with gr.Column(scale=2):
            persona_md = gr.Markdown(browse.persona_markdown(personas[first]), elem_id="browse-persona-card")
        with gr.Column(scale=3):
            task_md = gr.Markdown(f"**Task prompt:** {TASKS[0].prompt}", elem_id="browse-task-prompt")
            judged = gr.HTML(elem_id="browse-judged")

    def filter_personas(groups: list[str] | None) -> Any:
        ids = [pid for pid, p in personas.items() if not groups or p.stereotype_type in groups]
        return gr.Dropdown(choices=ids, value=ids[0] if ids else None)

    def show(pid, tid, model_v, label_v, all_v, reasoning_v):
        from mirage_bench.tasks import get_task

        dirs = browse.judged_run_dirs(ctx.store.root, ctx.run_dirs)
        wanted = [k for k, v in browse.LABEL_NAMES.items() if v in (label_v or [])]
        items = browse.judged_responses(
            dirs, tid, persona_id=None if all_v else pid, models=model_v or [], labels=wanted
        )
        card = browse.persona_markdown(personas[pid]) if pid in personas else ""
        return (
            card,
            f"**Task prompt:** {get_task(tid).prompt}",
            browse.render_judged(items, show_reasoning=bool(reasoning_v)) if dirs else browse.NO_RUNS_HTML,
            gr.Dropdown(choices=browse.models_in(dirs)),
        )

    inputs = [persona, task, models, labels, all_personas, reasoning]
    outputs = [persona_md, task_md, judged, models]
    group.change(filter_personas, group, persona)
    for comp in inputs:
        comp.change(show, inputs, outputs)
    # on page load: the judged responses of the default persona and task (runs may have appeared)
    ctx.on_load(lambda: show(first, TASKS[0].task_id, [], [], False, False)[2:], [judged, models])


def _progress_html(done: int, total: int) -> str:
    pct = 100 * done / total if total else 0
    return (
        f'<div class="mb-progress"><div style="width:{pct:.1f}%"></div></div>'
        f"<p>{done} of {total} labelled</p>"
    )


def annotate_tab(ctx: Context) -> None:
    """The blind H.1 interface: facts, task context, one claim, four labels (keys A-D), progress."""
    import gradio as gr

    samples = ctx.store.list_samples()
    no_sample = (
        "**No annotation sample yet.** Draw one from judged runs (finished submissions are under "
        f"`{ctx.store.root / 'results'}/<id>/`; engine runs are made with `mirage-bench run --model SPEC "
        "--judge SPEC --out RUN_DIR`):\n\n"
        f"`mirage-bench annotate-sample --runs RUN_DIR [--runs RUN_DIR2 …] --store {ctx.store.root}`\n\n"
        "(add `--lenient` when the runs cover fewer than 8 models, 5 tasks or 20 personas per label), "
        "then reload this page."
    )
    gr.Markdown(
        "Label each claim using **only the three revealed facts**. The task context says what the assistant "
        "was asked; it is not evidence about the user. Keys **A–D** choose a label and advance. Labels are "
        "saved as you go; enter the same annotator id to resume."
    )
    with gr.Row():
        sample = gr.Dropdown(
            samples, value=samples[0] if samples else None, label="Sample", elem_id="annotate-sample"
        )
        annotator = gr.Textbox(
            label="Annotator id (your HF username: log in)" if ctx.require_login else "Annotator id",
            placeholder="set by the login" if ctx.require_login else "e.g. ann01",
            interactive=not ctx.require_login,
            elem_id="annotate-annotator",
        )
        start = gr.Button("Start / resume", elem_id="annotate-start")
    status = gr.Markdown("" if samples else no_sample, elem_id="annotate-status")
    bar = gr.HTML(elem_id="annotate-progress")
    facts = gr.Markdown(elem_id="annotate-facts")
    context = gr.Markdown(elem_id="annotate-context")
    claim = gr.Markdown(elem_id="annotate-claim")
    buttons = []
    with gr.Row():
        for key, lab in ann.SHORTCUTS.items():
            name, definition = ann.DEFINITIONS[lab]
            buttons.append(
                gr.Button(f"{key} · {name}: {definition}", elem_id=f"annotate-{key}", interactive=False)
            )
    report = gr.Markdown(elem_id="annotate-agreement")
    # Server-side only (gr.State never reaches the browser): sample id, annotator id, current item id.
    state = gr.State({})

    def view(st: dict[str, Any], note: str = "") -> tuple[Any, ...]:
        item, blind = ann.next_item(ctx.store, st["sample"], st["annotator"])
        st = {**st, "item": item.item_id if item else None}
        if blind is None:
            done, total = ann.progress(ctx.store, st["sample"], st["annotator"])
            summary = _agreement_markdown(ann.agreement(ctx.store, st["sample"], st["annotator"]))
            return (
                st,
                "Batch complete. Thank you!",
                _progress_html(done, total),
                "",
                "",
                "",
                *[gr.Button(interactive=False)] * 4,
                summary,
            )
        fact_md = "**Revealed facts**\n\n" + "\n".join(
            f"{i}. {html.escape(f)}" for i, f in enumerate(blind.revealed_facts, 1)
        )
        return (
            st,
            note or f"Item {blind.position} of {blind.total}",
            _progress_html(blind.labelled, blind.total),
            fact_md,
            f"**Task context** (framing only, not evidence): {html.escape(blind.task_context)}",
            f"**Claim:** {html.escape(blind.claim)}",
            *[gr.Button(interactive=True)] * 4,
            "",
        )

    outputs = [state, status, bar, facts, context, claim, *buttons, report]

    def refuse(note: str) -> tuple[Any, ...]:
        return ({}, note, "", "", "", "", *[gr.Button(interactive=False)] * 4, "")

    def begin(sample_v: str | None, annotator_v: str, profile: Any = None) -> tuple[Any, ...]:
        if ctx.require_login:  # on a Space the annotator is the logged-in HF user, nobody else
            annotator_v = identity.username(profile)
            if not annotator_v:
                return refuse(identity.LOGIN_TO_ANNOTATE)
        if not sample_v or not (annotator_v or "").strip():
            return (
                {},
                "Choose a sample and enter your annotator id.",
                "",
                "",
                "",
                "",
                *[gr.Button(interactive=False)] * 4,
                "",
            )
        return view({"sample": sample_v, "annotator": annotator_v.strip()})

    def choose(st: dict[str, Any], lab: str, profile: Any = None) -> tuple[Any, ...]:
        user = identity.username(profile)
        if ctx.require_login and (not user or user != st.get("annotator")):
            return refuse(identity.LOGIN_TO_ANNOTATE)
        if not st.get("item"):
            return begin(st.get("sample"), st.get("annotator", ""), profile)
        ann.record_label(ctx.store, st["sample"], st["annotator"], st["item"], ann.Label(lab))
        return view(st, "Saved.")

    def reload_samples() -> tuple[Any, str]:
        found = ctx.store.list_samples()
        return gr.Dropdown(choices=found, value=found[0] if found else None), "" if found else no_sample

    ctx.on_load(reload_samples, [sample, status])
    identity.with_profile(begin)
    start.click(begin, [sample, annotator], outputs, api_name="annotate_start")
    annotator.submit(begin, [sample, annotator], outputs)

    def chooser(lab: str) -> Any:
        def pick(st, profile=None):  # gradio injects the OAuth profile (None when not logged in)
            return choose(st, lab, profile)

        return identity.with_profile(pick)

    for key, button in zip(ann.SHORTCUTS, buttons, strict=True):
        button.click(chooser(ann.SHORTCUTS[key].value), state, outputs, api_name=f"annotate_{key.lower()}")


def _agreement_markdown(result: dict[str, Any]) -> str:
    if not result:
        return ""
    keys = [
        ("accuracy", "Four-class accuracy"),
        ("kappa", "Cohen's κ (four-class)"),
        ("macro_f1", "Macro-F1"),
        ("binary_accuracy", "Binary (over-inference) accuracy"),
        ("binary_kappa", "Binary κ"),
    ]
    lines = [f"| {name} | {result[k]:.3f} |" for k, name in keys if isinstance(result.get(k), int | float)]
    return (
        "### Judge–human agreement on this batch (measured, `judge_agreement`)\n\n| metric | value |\n"
        "|---|---|\n" + "\n".join(lines)
    )


def reward_tab(ctx: Context) -> None:
    """Reward accuracy of scored preference-pair sets, with the selective-accuracy curve."""
    import gradio as gr

    from mirage_bench import plots

    files = ctx.store.reward_files()
    reward_dir = ctx.store.root / "reward"
    no_sets = (
        f"**No scored pair sets yet** in `{reward_dir}`. Make them with "
        f"`mirage-bench reward evaluate --pairs PAIRS.jsonl --scores SCORES.jsonl --out-dir {reward_dir}` "
        "(see docs/reward.md), then reload this page. An offline demo on SYNTHETIC data (its numbers are "
        "not results about any model or people):\n\n"
        "```\nmirage-bench reward synthetic --out /tmp/rw\n"
        "mirage-bench reward score --pairs /tmp/rw/synthetic_pairs.jsonl --method direct-judge "
        "--judge synthetic --out /tmp/rw/direct.jsonl\n"
        "mirage-bench reward evaluate --pairs /tmp/rw/synthetic_pairs.jsonl --scores /tmp/rw/direct.jsonl "
        f"--out-dir {reward_dir}\n```"
    )
    gr.Markdown(
        "Memory-aware reward models (seed 003): accuracy at predicting which of two responses a human "
        "prefers "
        "(memory-conditioned vs. no-memory). Sets are JSONL files of scored pairs "
        "(`pair_id, generator, p_memory, human_prefers_memory, strength`) in `submissions/store/reward/`."
    )
    choices = [f.name for f in files]
    pick = gr.Dropdown(
        choices, value=choices[0] if choices else None, label="Scored pair set", elem_id="reward-set"
    )
    first = plots.reward_summary(files[0]) if files else (no_sets, None)
    summary = gr.Markdown(first[0], elem_id="reward-summary")
    curve = gr.Plot(first[1], label="Selective accuracy", elem_id="reward-curve", visible=bool(files))

    def show(name: str | None) -> tuple[Any, Any]:
        if not name or not (reward_dir / name).is_file():
            return no_sets, gr.Plot(None, visible=False)
        text, figure = plots.reward_summary(reward_dir / name)
        return text, gr.Plot(figure, visible=True)

    def reload_sets() -> tuple[Any, ...]:
        names = [f.name for f in ctx.store.reward_files()]
        chosen = names[0] if names else None
        return (gr.Dropdown(choices=names, value=chosen), *show(chosen))

    pick.change(show, pick, [summary, curve])
    ctx.on_load(reload_sets, [pick, summary, curve])


def about_tab(ctx: Context | None = None) -> None:
    """Static About text (``ctx`` is unused: every tab builder takes the context)."""
    import gradio as gr

    gr.Markdown((Path(__file__).parent / "about.md").read_text(encoding="utf-8"), elem_id="about")
