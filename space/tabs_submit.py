"""Submit tab: upload a responses file or name an OpenAI-compatible endpoint; the queue table."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from mirage_bench.leaderboard.store import Metadata, SubmissionError, format_duration, format_rate
from space import identity
from space.tabs_board import Context

#: Queue table columns, the ones a submitter looks for first.
QUEUE_COLUMNS = [
    "model",
    "status",
    "state",
    "progress",
    "judge",
    "reason",
    "kind",
    "revision",
    "family",
    "submitted",
    "submission",
]
#: Widths of the queue columns (an empty column would otherwise shrink to one letter per line).
QUEUE_WIDTHS = ["160px", "90px", "300px", "140px", "170px", "220px", "70px", "95px", "90px", "190px", "230px"]
HOW_TO = """
**Two ways to submit.**
(a) Generate the 900 responses on your own hardware with
`mirage-bench run --model SPEC --stages task --out RUN_DIR`, then upload `RUN_DIR/responses.jsonl`
(JSONL, one object per line: `persona_id`, `task_id`, `response`, optional `self_audit`
`{"claims": [{"claim", "category", "reasoning"}]}`; every one of the 150 personas × 6 tasks exactly once,
UTF-8, at most 20 MB).
(b) Name an OpenAI-compatible endpoint (vLLM, llama.cpp server, TGI, Ollama) and a model id; the
Space generates the responses itself (no key is stored: only keyless endpoints work here).
Every submission is judged by this Space's configured judge and ranked only against rows of the same judge.
"""


#: Judge specs whose verdicts are a smoke test (the embedded 270M base model).
SMOKE_JUDGES = ("local",)
EMPTY_QUEUE = "The queue is empty: nothing has been submitted yet."


def _local_model_id() -> str:
    try:
        from mirage_bench.backends.local import LOCAL_MODEL_ID
    except ImportError:  # pragma: no cover - the backends are part of the package
        return "embedded"
    return str(LOCAL_MODEL_ID)


def judge_note(judge: str) -> str:
    """What the Submit tab says about the judge this Space's worker uses."""
    if judge in SMOKE_JUDGES:
        return (
            f"**Judge: `{judge}` is a smoke test, not a real judge.** This Space judges with the embedded "
            f"`{_local_model_id()}` model (no key, no network): its labels mean nothing, the rows it "
            "produces are flagged *smoke test* and hidden from the ranked board (tick *Show smoke-test "
            "rows* on the Leaderboard tab), and on a CPU a full 900-response submission takes hours "
            "(the queue shows \"judged k of n\", the rate and the time left). For real judging, "
            "restart with a real judge, e.g. "
            "`MIRAGE_JUDGE=anthropic:claude-opus-4-7-20260610 ANTHROPIC_API_KEY=… make run` or "
            "`OPENAI_API_KEY=… mirage-bench space --judge openai:gpt-4o-mini`."
        )
    if judge == "scripted" or judge.startswith("scripted:"):
        return (
            f"**Judge: `{judge}`, the engine's simulated judge** (tests and demos): its labels are "
            "simulated, not a model's verdicts."
        )
    return f"**Judge: `{judge}`.** Submissions are ranked only against rows judged by `{judge}`."


def queue_frame(ctx: Context) -> pd.DataFrame:
    """The queue table (newest first); the judge column marks smoke-test judges."""
    rows = ctx.store.queue_rows()
    for row in rows:
        judge = row["judge"] or ctx.judge
        smoke = row.pop("smoke_test") or judge in SMOKE_JUDGES
        row["judge"] = f"{judge} (smoke test)" if smoke else judge
    return pd.DataFrame(rows, columns=QUEUE_COLUMNS)


def expected_time_note(ctx: Context, n_responses: int = 900) -> str:
    """Before submitting: how long a submission will take with this Space's judge, from the rate the
    worker last measured here, and how many submissions are ahead."""
    from mirage_bench.leaderboard.store import Status

    requests = ctx.store.list_requests()
    ahead = sum(r.status in (Status.PENDING, Status.RUNNING) for r in requests)
    queue = f"{ahead} submission(s) are queued or being judged ahead of a new one. " if ahead else ""
    rate = ctx.store.measured_rate(ctx.judge)
    if rate:
        eta = format_duration(n_responses / rate * 60)
        return (
            f"{queue}**Expected judging time:** about {eta} for {n_responses} responses with `{ctx.judge}` "
            f"(measured on this Space: {format_rate(rate).replace('per min', 'responses per minute')})."
        )
    return (
        f"{queue}**Expected judging time:** not measured yet for `{ctx.judge}` on this Space; the first "
        "submission measures it, and the queue then shows its rate and the time left."
    )


def queue_view(ctx: Context) -> tuple[pd.DataFrame, str]:
    """The queue table and the note under it (says so when the queue is empty)."""
    frame = queue_frame(ctx)
    return frame, "" if len(frame) else EMPTY_QUEUE


def _read_upload(upload: Any) -> bytes | None:
    if upload is None:
        return None
    path = upload if isinstance(upload, str | Path) else getattr(upload, "name", None)
    if path is None:
        return None
    return Path(path).read_bytes()


def submit(
    ctx: Context,
    mode: str,
    upload: Any,
    base_url: str,
    endpoint_model: str,
    model_name: str,
    revision: str,
    family: str,
    link: str,
    license_: str,
    contact: str,
    hf_user: str = "",
) -> tuple[str, pd.DataFrame]:
    """Validate and queue one submission; returns the message (errors listed) and the queue table.

    ``hf_user`` is the logged-in HF username (required when the Space requires login).
    """
    meta = Metadata(
        model_name=model_name or "",
        family=family or "",
        contact=contact or "",
        revision=(revision or "main"),
        link=link or "",
        license=license_ or "",
        hf_user=hf_user or "",
    )
    try:
        if ctx.require_login and not hf_user:
            raise SubmissionError([identity.LOGIN_TO_SUBMIT])
        if mode == "endpoint":
            request = ctx.store.submit_endpoint(base_url or "", endpoint_model or "", meta)
        else:
            data = _read_upload(upload)
            if data is None:
                raise SubmissionError(["no file uploaded: choose a responses .jsonl file"] + meta.problems())
            request = ctx.store.submit_file(data, meta)
    except SubmissionError as exc:
        listed = "\n".join(f"- {p}" for p in exc.problems)
        message = f"### ❌ Not queued: {len(exc.problems)} problem(s)\n\n{listed}\n\nNothing was saved."
        return message, queue_frame(ctx)
    message = (
        f"### ✅ Queued as `{request.submission_id}` ({request.status.value})\n\n"
        f"{request.n_responses or 'Endpoint'} responses for **{request.model_name}**; "
        "the queue below shows its progress."
    )
    return message, queue_frame(ctx)


def submit_tab(ctx: Context) -> None:
    """Build the Submit tab."""
    import gradio as gr

    gr.Markdown(HOW_TO)
    gr.Markdown(judge_note(ctx.judge), elem_id="submit-judge-note")
    expected = gr.Markdown(expected_time_note(ctx), elem_id="submit-expected")
    if ctx.require_login:
        gr.Markdown(
            "Submitting needs a Hugging Face login (the button at the top of the page): your HF username "
            "is recorded with the submission and keys the rate limit.",
            elem_id="submit-login-note",
        )
    mode = gr.Radio(
        [("Upload a responses file", "file"), ("OpenAI-compatible endpoint", "endpoint")],
        value="file",
        label="How",
        elem_id="submit-mode",
    )
    with gr.Group(visible=True) as file_group:
        upload = gr.File(
            label="responses.jsonl",
            file_types=[".jsonl", ".json", ".txt"],
            type="filepath",
            elem_id="submit-file",
        )
    with gr.Group(visible=False) as endpoint_group:
        with gr.Row():
            base_url = gr.Textbox(
                label="Base URL", placeholder="http://my-server:8000/v1", elem_id="submit-url"
            )
            endpoint_model = gr.Textbox(label="Model id at the endpoint", elem_id="submit-endpoint-model")
    with gr.Row():
        model_name = gr.Textbox(label="Model name *", placeholder="org/model-name", elem_id="submit-model")
        revision = gr.Textbox(label="Revision", value="main", elem_id="submit-revision")
        family = gr.Textbox(label="Family *", placeholder="e.g. Qwen", elem_id="submit-family")
    with gr.Row():
        link = gr.Textbox(label="Link", placeholder="https://…", elem_id="submit-link")
        license_ = gr.Textbox(label="License", elem_id="submit-license")
        contact = gr.Textbox(
            label="Contact (optional; your HF username is recorded)" if ctx.require_login
            else "Contact (e-mail or Hub user) *",
            elem_id="submit-contact",
        )
    button = gr.Button("Submit for judging", variant="primary", elem_id="submit-button")
    message = gr.Markdown(elem_id="submit-message")
    gr.Markdown("### Queue")
    first_frame, first_note = queue_view(ctx)
    queue = gr.Dataframe(
        value=first_frame, interactive=False, wrap=True, elem_id="queue-table",
        column_widths=QUEUE_WIDTHS,
    )
    queue_note = gr.Markdown(first_note, elem_id="queue-note")
    refresh = gr.Button("Refresh queue", size="sm", elem_id="queue-refresh")
    timer = gr.Timer(2.0)

    mode.change(
        lambda m: (gr.Group(visible=m == "file"), gr.Group(visible=m == "endpoint")),
        mode,
        [file_group, endpoint_group],
    )
    inputs = [mode, upload, base_url, endpoint_model, model_name, revision, family, link, license_, contact]

    def do_submit(mode, upload, base_url, endpoint_model, model_name, revision, family, link, license_,
                  contact, profile=None):  # gradio injects the OAuth profile (None when not logged in)
        return submit(ctx, mode, upload, base_url, endpoint_model, model_name, revision, family, link,
                      license_, contact, hf_user=identity.username(profile))

    identity.with_profile(do_submit)
    button.click(do_submit, inputs, [message, queue], api_name="submit").then(
        lambda: (queue_view(ctx)[1], expected_time_note(ctx)), None, [queue_note, expected],
        show_progress="hidden",
    )
    refresh.click(lambda: queue_frame(ctx), None, queue, api_name="queue")
    timer.tick(
        lambda: (*queue_view(ctx), expected_time_note(ctx)), None, [queue, queue_note, expected],
        show_progress="hidden",
    )
