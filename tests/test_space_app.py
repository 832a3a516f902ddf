"""The Space served for real: API flows through gradio_client, UI flows in headless Chromium.

One app (in-process, free port, a fresh store, the engine's simulated ``scripted`` judge) serves
every test of this module. Browser tests skip, with the reason, only when Chromium or Playwright
is missing (``make test`` installs Chromium).
"""

from __future__ import annotations

import importlib.util
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

_spec = importlib.util.spec_from_file_location(
    "space_helpers", Path(__file__).parent / "browser" / "helpers.py"
)
helpers = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(helpers)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]


class Served:
    def __init__(self, url: str, store_root: Path, demo: Any, worker: Any) -> None:
        self.url, self.store_root, self.demo, self.worker = url, store_root, demo, worker

    def store(self) -> Any:
        from mirage_bench.leaderboard.store import SubmissionStore

        return SubmissionStore(self.store_root)


#: The labels the annotation keys a, b, c, d give, in that order.
KEY_LABELS = ["GROUNDED", "INFERRED_REASONABLE", "INFERRED_STEREOTYPE", "FABRICATED"]

@pytest.fixture(scope="module")
def served() -> Iterator[Served]:
    from space.app import SpaceConfig, launch

    root = helpers.new_store()
    port = helpers.free_port()
    config = SpaceConfig(store_root=root, judge="scripted", worker_poll_s=0.3, endpoint_concurrency=16)
    demo, worker = launch(config, host="127.0.0.1", port=port, block=False)
    try:
        yield Served(f"http://127.0.0.1:{port}/", root, demo, worker)
    finally:
        worker.stop()
        demo.close()
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def client(served: Served) -> Any:
    from gradio_client import Client

    return Client(served.url, verbose=False)


def _submit_args(upload: Any, name: str, contact: str) -> dict[str, Any]:
    return dict(
        mode="file",
        upload=upload,
        base_url="",
        endpoint_model="",
        model_name=name,
        revision="main",
        family="Fixture",
        link="",
        license_="",
        contact=contact,
    )


def _finished(store: Any, name: str) -> Any:
    reqs = [r for r in store.list_requests() if r.model_name == name]
    if reqs and reqs[0].status.value == "FAILED":
        raise AssertionError(f"submission failed: {reqs[0].reason}")
    return reqs and reqs[0].status.value == "FINISHED" and reqs[0]


# -- first run: a fresh store and the default judge, as a newcomer sees it after `make run` ----------
def _by_id(demo: Any) -> dict[str, Any]:
    return {b.elem_id: b for b in demo.blocks.values() if getattr(b, "elem_id", None)}


def test_first_run_empty_states_say_what_to_do(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import pandas as pd

    from mirage_bench import browse
    from mirage_bench.leaderboard.store import Metadata, Status
    from space import tabs_submit
    from space.app import SpaceConfig, build_app, build_context

    monkeypatch.delenv("MIRAGE_JUDGE", raising=False)
    ctx = build_context(SpaceConfig(store_root=tmp_path / "store"))
    assert ctx.judge == "local"  # the default judge: the embedded smoke-test model
    ui = _by_id(build_app(context=ctx))
    note = ui["submit-judge-note"].value
    assert "`local` is a smoke test, not a real judge" in note and "MIRAGE_JUDGE=" in note
    assert ui["queue-note"].value == tabs_submit.EMPTY_QUEUE
    assert "mirage-bench annotate-sample --runs RUN_DIR" in ui["annotate-status"].value
    assert f"--store {ctx.store.root}" in ui["annotate-status"].value
    assert "mirage-bench reward evaluate --pairs" in ui["reward-summary"].value
    assert not ui["reward-curve"].visible  # no empty plot frame
    loaded = {tuple(b.elem_id for b in outputs): fn for fn, outputs in ctx.loaders}
    judged_html, _models = loaded[("browse-judged", "browse-models")]()
    assert judged_html == browse.NO_RUNS_HTML and "mirage-bench space --runs" in judged_html

    # what appears while the Space runs is shown on the next page load, without a restart
    (ctx.store.root / "annotation" / "samples" / "fresh.jsonl").write_bytes(
        (helpers.FIXTURES / "annotation_sample.jsonl").read_bytes()
    )
    pd.DataFrame(
        {"pair_id": ["a", "b"], "generator": ["g", "g"], "p_memory": [0.9, 0.2],
         "human_prefers_memory": [1, 0], "strength": ["much", "much"], "method": ["m", "m"]}
    ).to_json(ctx.store.root / "reward" / "set.jsonl", orient="records", lines=True)
    samples, status = loaded[("annotate-sample", "annotate-status")]()
    assert samples.value == "fresh" and status == ""
    picked, summary, curve = loaded[("reward-set", "reward-summary", "reward-curve")]()
    assert picked.value == "set.jsonl" and "accuracy" in summary and curve.visible

    # the queue of a submission under the smoke-test judge: progress and the smoke-test note
    sid = ctx.store.submit_file(
        helpers.responses_file(tmp_path / "r.jsonl").read_bytes(),
        Metadata(model_name="new/model", family="Fixture", contact="n@x.org"),
    ).submission_id
    frame, empty = tabs_submit.queue_view(ctx)
    assert empty == "" and frame.iloc[0]["judge"] == "local (smoke test)"
    ctx.store.update(sid, status=Status.RUNNING, judge="local", smoke_test=True, progress_total=900,
                     progress_done=3, reason="smoke-test judge: slow on a CPU")
    row = tabs_submit.queue_frame(ctx).iloc[0]
    assert row["progress"] == "judged 3 of 900" and row["judge"] == "local (smoke test)"


# -- API (gradio_client) -------------------------------------------------------------------------
def test_api_malformed_file_lists_errors_and_queues_nothing(served: Served, client: Any) -> None:
    from gradio_client import handle_file

    before = served.store().list_requests()
    message, _queue = client.predict(
        **_submit_args(
            handle_file(str(helpers.FIXTURES / "malformed_responses.jsonl")), "api/bad", "bad@x.org"
        ),
        api_name="/submit",
    )
    assert "Not queued" in message
    assert "line 2: duplicate (persona_id, task_id) pair ('seed_001', 'apartment')" in message
    assert "line 5: not valid JSON" in message
    assert served.store().list_requests() == before


def test_api_hostile_file_gets_a_problem_list_not_a_traceback(
    served: Served, client: Any, tmp_path: Path
) -> None:
    import json

    from gradio_client import handle_file

    good = json.dumps({"persona_id": "seed_001", "task_id": "apartment", "response": "Hi"})
    nul = json.dumps({"persona_id": "seed_001", "task_id": "rec_letter", "response": "Hi\u0000"})
    path = tmp_path / "hostile.jsonl"
    path.write_text("\n".join([good, nul, "[" * 100_000 + "]" * 100_000]) + "\n")
    before = served.store().list_requests()
    message, _queue = client.predict(
        **_submit_args(handle_file(str(path)), "x/../../../../evil" + "n" * 10_000, "evil@x.org"),
        api_name="/submit",
    )
    assert "Not queued" in message and "problems (showing the first 50)" not in message
    assert "line 2: field 'response' holds control character(s) U+0000" in message
    assert "line 3: JSON nested too deeply" in message
    assert "(10,018 characters)" in message and len(message) < 3000
    assert served.store().list_requests() == before


def test_api_submission_is_judged_and_ranked(served: Served, client: Any, tmp_path: Path) -> None:
    from gradio_client import handle_file

    from mirage_bench.leaderboard.board import load_board

    path = helpers.responses_file(tmp_path / "responses.jsonl")
    message, queue = client.predict(
        **_submit_args(handle_file(str(path)), "api/model-one", "api@x.org"), api_name="/submit"
    )
    assert "Queued" in message, message
    request = helpers.wait_for(lambda: _finished(served.store(), "api/model-one"), timeout=90)
    assert request.progress_done == request.progress_total == request.n_responses
    board = load_board(served.store_root)
    row = board[board["model"] == "api/model-one"].iloc[0]
    assert row["source"] == "measured" and row["judge"] == "scripted"
    assert 0 <= row["oi_ci_low"] <= row["oi_pct"] <= row["oi_ci_high"] <= 100
    # the same model and revision again is refused
    message, _ = client.predict(
        **_submit_args(handle_file(str(path)), "api/model-one", "api2@x.org"), api_name="/submit"
    )
    assert "already on the board or in the queue" in message


def test_api_endpoint_submission_goes_pending_running_finished(
    served: Served, client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Path (b): the real local OpenAI-compatible server is the submitted endpoint."""
    from mirage_bench.leaderboard.board import load_board

    secret = "sk-space-own-secret-0123456789"
    monkeypatch.setenv("OPENAI_API_KEY", secret)  # the Space's own key: must never reach the endpoint
    server = helpers.fake_endpoint()
    seen: list[str] = []

    def settled() -> Any:
        reqs = [r for r in served.store().list_requests() if r.model_name == "api/endpoint-model"]
        if reqs and (not seen or seen[-1] != reqs[0].status.value):
            seen.append(reqs[0].status.value)
        return reqs and reqs[0].status.value in ("FINISHED", "FAILED") and reqs[0]

    try:
        args = _submit_args(None, "api/endpoint-model", "endpoint@x.org")
        args.update(mode="endpoint", base_url=server.base_url, endpoint_model="fx-endpoint-model")
        message, _queue = client.predict(**args, api_name="/submit")
        assert "Queued" in message, message
        request = helpers.wait_for(settled, timeout=150, interval=0.1)
    finally:
        server.stop()
    assert request.status.value == "FINISHED", request.reason
    assert seen[0] in ("PENDING", "RUNNING") and seen[-2:] == ["RUNNING", "FINISHED"], seen
    assert request.kind == "endpoint" and request.progress == "judged 900 of 900"
    assert len(server.requests) == 2 * 900 + 1  # task + self-audit per pair, plus the endpoint check
    assert all(secret not in h for h in server.auth_headers) and server.auth_headers
    queue = client.predict(api_name="/queue")
    rows = [dict(zip(queue["headers"], r, strict=True)) for r in queue["data"]]
    row = next(r for r in rows if r["model"] == "api/endpoint-model")
    assert row["status"] == "FINISHED" and row["progress"] == "judged 900 of 900"
    assert row["kind"] == "endpoint" and row["judge"] == "scripted (smoke test)"  # the simulated judge
    board = load_board(served.store_root)
    measured = board[board["model"] == "api/endpoint-model"].iloc[0]
    assert measured["source"] == "measured" and measured["judge"] == "scripted"
    assert measured["self_oi_pct"] == pytest.approx(50.0)  # the endpoint's self-audits: 1 of 2 claims OI
    run = served.store().result_dir(request.submission_id)
    for path in [*run.rglob("*.json*"), *run.rglob("*.log"), *served.store_root.glob("requests/*")]:
        assert secret not in path.read_text(errors="replace"), path


def test_api_annotation_flow_never_returns_hidden_fields(served: Served, client: Any) -> None:
    outputs = client.predict("fixture", "api-annotator", api_name="/annotate_start")
    seen = [repr(outputs)]
    assert "Your apartment has a modern and functional design" in repr(outputs)
    for key in "abcd":
        outputs = client.predict(api_name=f"/annotate_{key}")
        seen.append(repr(outputs))
    assert "Batch complete" in seen[-1]
    for payload in seen:
        for hidden in helpers.HIDDEN:
            assert hidden not in payload, (hidden, payload)
    labels = served.store().read_labels("fixture", "api-annotator")
    assert [r["human_label"] for r in labels] == KEY_LABELS


# -- Browser (Playwright + Debian chromium) --------------------------------------------------------
#: The Model cell of the first body row of gradio 6's (virtualised) Dataframe.
FIRST_MODEL = "#leaderboard-table [data-testid='cell-0-1']"


@pytest.fixture(scope="module")
def page(served: Served) -> Iterator[Any]:
    with helpers.chromium() as browser:
        pg = browser.new_page(viewport={"width": 1400, "height": 1000})
        pg.bodies = []  # every text response body the page received

        def keep(response: Any) -> None:
            kind = response.headers.get("content-type") or ""
            try:
                if ("text" in kind or "json" in kind) and "event-stream" not in kind:
                    pg.bodies.append(response.text())
            except Exception:  # streaming bodies may be unavailable
                pass

        pg.on("response", keep)
        pg.add_init_script(helpers.STREAM_CAPTURE_JS)  # streamed SSE bodies, which "response" cannot read
        pg.goto(served.url, wait_until="load")
        pg.wait_for_selector(FIRST_MODEL, timeout=30_000)
        yield pg


def _tab(page: Any, name: str) -> None:
    page.get_by_role("tab", name=name).click()
    page.wait_for_timeout(300)


def _clear_upload(page: Any) -> None:
    """Remove a file left in the upload box by an earlier test, so its file input is back."""
    clear = page.locator("#submit-file button[aria-label='Clear']")
    if clear.count():
        clear.first.click()
        page.wait_for_selector("#submit-file input[type=file]", state="attached", timeout=10_000)


def _first_model(page: Any) -> str:
    return page.locator(FIRST_MODEL).inner_text().strip()


def test_browser_leaderboard_renders_and_sorts(page: Any) -> None:
    _tab(page, "Leaderboard")
    grid = page.locator("#leaderboard-table [role=grid]")
    helpers.wait_for(lambda: grid.get_attribute("aria-rowcount") == "13", timeout=20)  # header + 12 rows
    assert _first_model(page) == "Qwen3-8B"  # highest OI of Table 1
    page.screenshot(path=str(helpers.ARTIFACTS / "space_leaderboard.png"), full_page=True)
    page.locator("#lb-desc input").uncheck()
    helpers.wait_for(lambda: _first_model(page) == "Gemini-3.1-pro", timeout=20)  # lowest OI
    page.locator("#lb-desc input").check()
    helpers.wait_for(lambda: _first_model(page) == "Qwen3-8B", timeout=20)


def test_browser_malformed_file_shows_errors_and_changes_nothing(page: Any, served: Served) -> None:
    _tab(page, "Submit")
    before = served.store().list_requests()
    _clear_upload(page)
    page.locator("#submit-file input[type=file]").set_input_files(
        str(helpers.FIXTURES / "malformed_responses.jsonl")
    )
    page.locator("#submit-model textarea, #submit-model input").first.fill("ui/bad-model")
    page.locator("#submit-family textarea, #submit-family input").first.fill("Fixture")
    page.locator("#submit-contact textarea, #submit-contact input").first.fill("ui-bad@x.org")
    page.locator("#submit-button").click()
    page.wait_for_selector("#submit-message :text('Not queued')", timeout=20_000)
    text = page.locator("#submit-message").inner_text()
    assert "line 3: unknown (persona_id, task_id) pair" in text
    assert served.store().list_requests() == before
    page.screenshot(path=str(helpers.ARTIFACTS / "space_submit_errors.png"), full_page=True)


def test_browser_submission_goes_pending_to_finished_and_row_appears(
    page: Any, served: Served, tmp_path: Path
) -> None:
    _tab(page, "Submit")
    path = helpers.responses_file(tmp_path / "ui.jsonl")
    _clear_upload(page)
    page.locator("#submit-file input[type=file]").set_input_files(str(path))
    page.locator("#submit-model textarea, #submit-model input").first.fill("ui/model-two")
    page.locator("#submit-family textarea, #submit-family input").first.fill("Fixture")
    page.locator("#submit-contact textarea, #submit-contact input").first.fill("ui@x.org")
    page.locator("#submit-button").click()
    page.wait_for_selector("#submit-message :text('Queued')", timeout=20_000)
    # one template for every persona: queued, and said to be flagged
    helpers.wait_for(lambda: "Flagged" in page.locator("#submit-message").inner_text(), timeout=20)
    queue = page.locator("#queue-table")
    helpers.wait_for(lambda: "ui/model-two" in queue.inner_text(), timeout=20)
    assert "near_duplicate" in queue.inner_text() and "(threshold 30%)" in queue.inner_text()
    helpers.wait_for(lambda: _finished(served.store(), "ui/model-two"), timeout=90)
    helpers.wait_for(lambda: "FINISHED" in queue.inner_text() and "judged" in queue.inner_text(), timeout=20)
    page.screenshot(path=str(helpers.ARTIFACTS / "space_submit_finished.png"), full_page=True)
    _tab(page, "Leaderboard")
    page.locator("#lb-refresh").click()
    # the simulated judge's rows are smoke-test rows: hidden from the default view until asked for
    from mirage_bench.leaderboard.board import board_view, load_board

    board = load_board(served.store_root)
    # the fixture's responses are one template with a fact pasted in: flagged near_duplicate as well
    def models(**kw: Any) -> set[str]:
        return {m.split(" ")[0] for m in board_view(board, judge="scripted", **kw)["Model"]}

    assert "ui/model-two" not in models() | models(show_smoke=True)
    assert "ui/model-two" in models(show_smoke=True, show_flagged=True)
    page.locator("#lb-smoke input").check()
    page.locator("#lb-flagged input").check()
    judge = page.locator("#lb-judge input")
    judge.click()
    page.get_by_role("option", name="scripted", exact=True).click()
    helpers.wait_for(lambda: "ui/model-two" in page.locator("#leaderboard-table").inner_text(), timeout=20)
    assert "Qwen3-8B" not in page.locator("#leaderboard-table").inner_text()  # judges are never mixed
    page.screenshot(path=str(helpers.ARTIFACTS / "space_leaderboard_measured.png"), full_page=True)


def test_browser_annotation_keys_advance_and_hide_the_judge(page: Any, served: Served) -> None:
    _tab(page, "Annotate")
    page.locator("#annotate-annotator textarea, #annotate-annotator input").first.fill("ui-annotator")
    offsets = helpers.stream_offsets(page)
    page.locator("#annotate-start").click()
    page.wait_for_selector("#annotate-claim :text('Your apartment has a modern')", timeout=20_000)
    page.screenshot(path=str(helpers.ARTIFACTS / "space_annotate.png"), full_page=True)
    claims = []
    for key, count in zip("ABCD", range(1, 5), strict=True):
        page.locator("body").click(position={"x": 5, "y": 5})  # focus outside any text field
        page.keyboard.press(key.lower())
        helpers.wait_for(
            lambda c=count: f"{c} of 4 labelled" in page.locator("#annotate-progress").inner_text(),
            timeout=20,
        )
        claims.append(page.locator("#annotate-claim").inner_text())
        html = page.content()
        for hidden in helpers.HIDDEN:
            assert hidden not in html, hidden
    assert "Batch complete" in page.locator("#annotate-status").inner_text()
    labels = served.store().read_labels("fixture", "ui-annotator")
    assert [r["human_label"] for r in labels] == KEY_LABELS
    for body in page.bodies:
        for hidden in helpers.HIDDEN:
            assert hidden not in body, hidden
    # the streamed event payloads of the annotation session (gradio's SSE /gradio_api/queue/data)
    # carried the items ...
    text = helpers.streamed_since(page, offsets)
    assert "Your apartment has a modern" in text and "Your job with young children" in text
    assert "Batch complete" in text
    # ... and never a judge label, the model id, the judge id or the persona's hidden ground truth
    truth = helpers.hidden_ground_truth(helpers.FIXTURES / "annotation_sample.jsonl")
    assert "Alex Chen" in truth and "kindergarten teacher" in truth
    for hidden in (*helpers.HIDDEN, *truth):
        assert hidden not in text, hidden


@pytest.mark.parametrize("tab", ["Plots", "Judges", "Browse", "Reward models", "About"])
def test_browser_screenshot_other_tabs(page: Any, tab: str) -> None:
    _tab(page, tab)
    page.wait_for_timeout(500)
    page.screenshot(path=str(helpers.ARTIFACTS / f"space_{tab.split()[0].lower()}.png"), full_page=True)
    assert page.locator("body").inner_text()
    if tab == "Browse":  # filled by the page-load event: the judged responses of the default persona
        helpers.wait_for(lambda: "judge scripted" in page.locator("#browse-judged").inner_text(), timeout=20)
    if tab == "Judges":  # every judge on the board with its validation; the paper's judge is reported
        table = page.locator("#judges-table")
        helpers.wait_for(lambda: "validated in the paper" in table.inner_text(), timeout=20)


def test_browser_paper_tables_tab(page: Any) -> None:
    """The Paper tables tab shows the reported Table 4 rows, then Table 6 with its AUROC convention."""
    _tab(page, "Paper tables")
    grid = page.locator("#tables-grid")
    helpers.wait_for(lambda: "GPT-5.5" in grid.inner_text() and "reported" in grid.inner_text(), timeout=20)
    assert "accum_update" in grid.inner_text()
    page.locator("#tables-table").get_by_text("Table 6: within-model self-audit signal").click()
    helpers.wait_for(lambda: "Qwen3.6-plus" in grid.inner_text(), timeout=20)
    helpers.wait_for(lambda: "at the median" in page.locator("#tables-note").inner_text(), timeout=20)
    page.screenshot(path=str(helpers.ARTIFACTS / "space_tables.png"), full_page=True)
