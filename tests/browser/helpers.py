"""Helpers for the Space's browser and API tests: a served app on a free port, Chromium, polling.

Loaded by path from some test modules, imported as ``tests.browser.helpers`` by others.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "tests" / "artifacts"
FIXTURES = ROOT / "tests" / "fixtures" / "space"

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-quic",
    "--no-first-run",
    "--disable-component-update",
    "--disable-sync",
]

#: Strings that must never reach the annotator: the four label tokens and the fixture's hidden ids.
HIDDEN = (
    "GROUNDED",
    "INFERRED_REASONABLE",
    "INFERRED_STEREOTYPE",
    "FABRICATED",
    "fixture-hidden-model-q7z",
    "fixture-hidden-judge-k3w",
    "judge_label",
)


def free_port() -> int:
    """An unused TCP port on 127.0.0.1."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for(predicate: Callable[[], Any], timeout: float = 60.0, interval: float = 0.25) -> Any:
    """Poll ``predicate`` until it returns a truthy value; raise ``TimeoutError`` otherwise."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise TimeoutError(f"condition not met within {timeout} s")


def responses_file(path: Path, *, with_self_audit: bool = True) -> Path:
    """Write a complete responses file (every persona x task) for a fixture model."""
    from mirage_bench.personas import load_personas
    from mirage_bench.tasks import TASK_IDS

    lines = []
    for persona in load_personas():
        for task in TASK_IDS:
            rec: dict[str, Any] = {
                "persona_id": persona.persona_id,
                "task_id": task,
                "response": f"Since you said '{persona.revealed_facts[0]}', you surely love quiet evenings. "
                f"Your home is full of plants.",
            }
            if with_self_audit:
                rec["self_audit"] = {
                    "claims": [
                        {
                            "claim": "you love quiet evenings",
                            "category": "INFERRED_REASONABLE",
                            "reasoning": "r",
                        },
                        {"claim": "your home is full of plants", "category": "FABRICATED", "reasoning": "r"},
                    ]
                }
            lines.append(json.dumps(rec))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def new_store() -> Path:
    """A fresh submission store holding the fixture annotation sample."""
    root = Path(tempfile.mkdtemp(prefix="mirage-space-"))
    (root / "annotation" / "samples").mkdir(parents=True)
    shutil.copy(FIXTURES / "annotation_sample.jsonl", root / "annotation" / "samples" / "fixture.jsonl")
    return root


def chromium_path() -> str | None:
    """Debian's chromium binary, if installed."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


@contextlib.contextmanager
def chromium() -> Iterator[Any]:
    """Debian's chromium launched headless through Playwright; skips the test where either is missing."""
    executable = chromium_path()
    if executable is None:
        pytest.skip("chromium is not installed (make test installs it: apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright (extra dev) is not installed")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def hub_env(hub_url: str, hf_home: Path, requests: str, results: str, **extra: str) -> dict[str, str]:
    """The environment of a Space process online against the local Hub test server at ``hub_url``.

    The offline switches of the test session are dropped (the Hub is local), the Hub-backed store is
    on (``requests``/``results`` repos, committing every 0.5 s), ``extra`` is added last.
    """
    offline = {"HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE"}
    env = {k: v for k, v in os.environ.items() if k not in offline}
    env.update(
        HF_ENDPOINT=hub_url,
        HF_HOME=str(hf_home),
        HF_HUB_DISABLE_XET="1",
        HF_HUB_DISABLE_TELEMETRY="1",
        HF_HUB_DISABLE_PROGRESS_BARS="1",
        MIRAGE_REQUESTS_REPO=requests,
        MIRAGE_RESULTS_REPO=results,
        MIRAGE_HUB_COMMIT_INTERVAL_S="0.5",
        PYTHONPATH=str(ROOT),
    )
    env.update(extra)
    return env


#: The self-audit prompt's closing line (prompts/task_self_audit.txt): how the fake endpoint tells
#: a self-audit request from a task request.
SELF_AUDIT_MARK = "Return a JSON array of {claim, category, reasoning}"


def endpoint_responder(body: dict[str, Any]) -> str:
    """A submitted model's answers: a personalized reply to a task, a JSON claim list to a self-audit."""
    last = str((body.get("messages") or [{}])[-1].get("content", ""))
    if SELF_AUDIT_MARK in last:
        return json.dumps(
            [
                {"claim": "you love quiet evenings", "category": "INFERRED_REASONABLE", "reasoning": "r"},
                {"claim": "your home is full of plants", "category": "FABRICATED", "reasoning": "r"},
            ]
        )
    return "You surely love quiet evenings, and your home is full of plants."


def fake_endpoint(**options: Any) -> Any:
    """A started :class:`tests.openai_server.FakeOpenAIServer` answering like a submitted model.

    It also records the ``Authorization`` header of every chat request in ``.auth_headers``.
    """
    from aiohttp import web

    from tests.openai_server import FakeOpenAIServer

    class RecordingServer(FakeOpenAIServer):
        auth_headers: list[str] = []

        async def _chat(self, request: web.Request) -> web.Response:
            self.auth_headers.append(request.headers.get("Authorization", ""))
            return await super()._chat(request)

    server = RecordingServer(responder=endpoint_responder, **options)
    server.auth_headers = []
    return server.start()


#: Installed before the page loads: keeps a copy of every streamed (``text/event-stream``) body the
#: page reads — gradio's SSE channel ``/gradio_api/queue/data`` carries every event's outputs — in
#: ``window.__mbStreams`` (``[{url, text}]``). The page gets an untouched twin of each stream.
STREAM_CAPTURE_JS = """
(() => {
  window.__mbStreams = [];
  const keep = (url) => {
    const entry = {url: String(url), text: ''};
    window.__mbStreams.push(entry);
    return entry;
  };
  const originalFetch = window.fetch.bind(window);
  window.fetch = async (...args) => {
    const response = await originalFetch(...args);
    const type = response.headers.get('content-type') || '';
    if (!type.includes('event-stream') || !response.body) { return response; }
    const [mine, theirs] = response.body.tee();
    const entry = keep(response.url);
    (async () => {
      const reader = mine.getReader();
      const decoder = new TextDecoder();
      for (;;) {
        const {done, value} = await reader.read();
        if (done) { break; }
        entry.text += decoder.decode(value, {stream: true});
      }
    })();
    const twin = new Response(theirs, {status: response.status, statusText: response.statusText,
                                       headers: response.headers});
    Object.defineProperty(twin, 'url', {value: response.url});
    return twin;
  };
  const OriginalEventSource = window.EventSource;
  if (OriginalEventSource) {
    window.EventSource = function (url, config) {
      const source = new OriginalEventSource(url, config);
      const entry = keep(url);
      source.addEventListener('message', (event) => { entry.text += event.data + '\\n'; });
      return source;
    };
    window.EventSource.prototype = OriginalEventSource.prototype;
  }
})();
"""


def streamed(page: Any) -> list[dict[str, str]]:
    """The streamed bodies the page has read so far (``[{url, text}]``), see :data:`STREAM_CAPTURE_JS`."""
    return list(page.evaluate("window.__mbStreams || []"))


def hidden_ground_truth(sample: Path, min_len: int = 6) -> list[str]:
    """Ground-truth values of a sample's personas that the annotator must never see.

    Values that the annotator legitimately sees (inside a revealed fact, the claim or the task
    context, e.g. the occupation stated in a fact) and very short values are left out.
    """
    from mirage_bench.personas import get_persona

    items = [json.loads(line) for line in sample.read_text(encoding="utf-8").splitlines() if line.strip()]
    visible = " ".join(
        " ".join([*i["revealed_facts"], i["claim"], i["task_context"]]) for i in items
    ).lower()
    out: set[str] = set()
    for pid in {i["persona_id"] for i in items}:
        for value in get_persona(pid).ground_truth.values():
            for text in value if isinstance(value, list) else [value]:
                text = str(text)
                if len(text) >= min_len and text.lower() not in visible:
                    out.add(text)
    return sorted(out)


def stream_offsets(page: Any) -> list[int]:
    """How much of each captured stream has been read so far (pass to :func:`streamed_since`)."""
    return [len(s["text"]) for s in streamed(page)]


def streamed_since(page: Any, offsets: list[int], url_part: str = "/queue/data") -> str:
    """Text the page read after ``offsets`` were taken, from the streams whose URL holds ``url_part``."""
    out = []
    for index, entry in enumerate(streamed(page)):
        if url_part in entry["url"]:
            out.append(entry["text"][offsets[index] if index < len(offsets) else 0 :])
    return "".join(out)
