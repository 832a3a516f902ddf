"""A real, local, OpenAI-compatible HTTP server for tests and benchmarks (aiohttp, 127.0.0.1, free port).

It serves ``POST /v1/chat/completions`` and ``GET /v1/models`` over real HTTP, so the ``openai``
SDK (and anything else) talks to it exactly as to vLLM ``serve`` or a llama.cpp server. Its
behaviour is programmable while it runs:

* ``latency_s`` - a fixed delay before every answer;
* ``fail_next(status, count=1, retry_after=None)`` - queue HTTP errors (429 with ``Retry-After``,
  500, 400, ...);
* ``json_schema_supported=False`` - answer ``response_format={"type": "json_schema"}`` with HTTP 500
  like llama.cpp's server does, while ``{"type": "json_object", "schema": ...}`` works;
* ``responder(body) -> str`` - the completion text for a request body (default: schema-valid JSON
  for structured requests, an echo otherwise).

* ``api_key="k"`` - answer every API request without ``Authorization: Bearer k`` (or
  ``x-api-key: k``) with HTTP 401, like a provider given a bad key;
* ``malformed_next(count=1)`` - answer the next chat requests with HTTP 200 and a body that is not
  JSON (a truncating proxy, a crashed worker).

Every API request (chat, messages, embeddings, models) is counted in ``request_count``. For a
server in its own process (``python tests/openai_server.py``), the same controls are HTTP
endpoints: ``POST /_control/fail`` (``{"status", "count", "retry_after", "message"}``),
``POST /_control/malformed`` (``{"count"}``), ``POST /_control/reset`` and ``GET /_control/stats``
(``{"request_count", "chat_requests", "errors_sent", "response_formats"}``).

It also serves ``POST /v1/embeddings`` (deterministic vectors of ``embedding_dim`` floats per input
text, a function of the text alone; same faults and latency), for embedding clients.

It also answers the Anthropic Messages API (``POST /v1/messages``; point ``anthropic:`` at
``root_url``), sharing the same faults and latency; ``reject_sampling_params=True`` makes it refuse
``temperature``/``top_p`` with the 400 that Claude Opus 4.7+ returns.

Every request body is kept in ``requests``. Use it as a context manager::

    with FakeOpenAIServer(latency_s=0.05) as server:
        backend = make_backend(f"openai:test-model@{server.base_url}")

The ``openai_server`` pytest fixture lives in ``tests/openai_fixtures.py``.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from aiohttp import web

from mirage_bench.backends.scripted import example_from_schema

Responder = Callable[[dict[str, Any]], str]


def default_responder(body: dict[str, Any]) -> str:
    """Schema-valid JSON for structured requests (deterministic per body), else an echo of the last turn."""
    fmt = body.get("response_format") or {}
    schema = None
    if fmt.get("type") == "json_schema":
        schema = (fmt.get("json_schema") or {}).get("schema")
    elif fmt.get("type") == "json_object":
        schema = fmt.get("schema") or {"type": "object", "properties": {}}
    if schema is not None:
        rng = random.Random(json.dumps(body.get("messages"), sort_keys=True))
        return json.dumps(example_from_schema(schema, rng))
    messages = body.get("messages") or [{"content": ""}]
    return "echo: " + str(messages[-1].get("content", ""))[:200]


class FakeOpenAIServer:
    """An OpenAI-compatible chat-completions server running in a background thread."""

    def __init__(self, *, latency_s: float = 0.0, json_schema_supported: bool = True,
                 responder: Responder | None = None, model: str = "fake-model",
                 reject_sampling_params: bool = False, api_key: str | None = None) -> None:
        self.latency_s = latency_s
        self.api_key = api_key
        #: API requests received (every route but ``/_control``), refused ones included.
        self.request_count = 0
        self.reject_sampling_params = reject_sampling_params
        self.json_schema_supported = json_schema_supported
        self.responder: Responder = responder or default_responder
        self.model = model
        #: Length of the vectors ``/v1/embeddings`` returns.
        self.embedding_dim = 8
        self.requests: list[dict[str, Any]] = []
        self.errors_sent: list[int] = []
        self.in_flight = 0
        self.peak_in_flight = 0
        self._faults: deque[tuple[int, float | None, str]] = deque()
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None
        self.port: int | None = None

    @property
    def root_url(self) -> str:
        """``http://127.0.0.1:<port>`` (the Anthropic SDK's base URL)."""
        return self.base_url.removesuffix("/v1")

    @property
    def base_url(self) -> str:
        """The ``/v1`` base URL to hand to an OpenAI client."""
        if self.port is None:
            raise RuntimeError("server not started")
        return f"http://127.0.0.1:{self.port}/v1"

    def fail_next(self, status: int, *, count: int = 1, retry_after: float | None = None,
                  message: str = "injected failure") -> None:
        """Answer the next ``count`` chat requests with HTTP ``status`` (and ``Retry-After`` when given)."""
        with self._lock:
            for _ in range(count):
                self._faults.append((status, retry_after, message))

    def malformed_next(self, count: int = 1) -> None:
        """Answer the next ``count`` chat requests with HTTP 200 and a body that is not JSON."""
        with self._lock:
            for _ in range(count):
                self._faults.append((200, None, "malformed"))

    def reset(self) -> None:
        """Forget recorded requests, queued faults and counters."""
        with self._lock:
            self.requests.clear()
            self.errors_sent.clear()
            self._faults.clear()
            self.peak_in_flight = 0
            self.request_count = 0

    def _authorized(self, request: web.Request) -> bool:
        if self.api_key is None:
            return True
        bearer = request.headers.get("Authorization", "")
        return bearer == f"Bearer {self.api_key}" or request.headers.get("x-api-key") == self.api_key

    @web.middleware
    async def _count_and_authorize(self, request: web.Request, handler: Any) -> web.StreamResponse:
        if request.path.startswith("/_control"):
            return await handler(request)
        with self._lock:
            self.request_count += 1
        if not self._authorized(request):
            if request.path.endswith("/messages"):
                return self._anthropic_error(401, "invalid x-api-key")
            return self._error(401, "Incorrect API key provided")
        return await handler(request)

    async def _control(self, request: web.Request) -> web.Response:
        action = request.match_info["action"]
        if action == "stats":
            with self._lock:
                formats = [(b.get("response_format") or {}).get("type") for b in self.requests]
                return web.json_response({"request_count": self.request_count,
                                          "chat_requests": len(self.requests),
                                          "errors_sent": list(self.errors_sent),
                                          "response_formats": formats})
        body = await request.json() if request.can_read_body else {}
        if action == "fail":
            self.fail_next(int(body["status"]), count=int(body.get("count", 1)),
                           retry_after=body.get("retry_after"),
                           message=body.get("message", "injected failure"))
        elif action == "malformed":
            self.malformed_next(int(body.get("count", 1)))
        elif action == "reset":
            self.reset()
        else:
            raise web.HTTPNotFound()
        return web.json_response({"ok": True})

    async def _chat(self, request: web.Request) -> web.Response:
        body = await request.json()
        with self._lock:
            self.requests.append(body)
            fault = self._faults.popleft() if self._faults else None
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        try:
            if self.latency_s > 0:
                await asyncio.sleep(self.latency_s)
            if fault is not None:
                status, retry_after, message = fault
                if status == 200:
                    return web.Response(text='{"id": "chatcmpl-x", "choices": [{"message": {"cont',
                                        content_type="application/json")
                headers = {"Retry-After": f"{retry_after:g}"} if retry_after is not None else {}
                return self._error(status, message, headers)
            fmt = body.get("response_format") or {}
            if fmt.get("type") == "json_schema" and not self.json_schema_supported:
                return self._error(500, "response_format type json_schema is not supported")
            text = self.responder(body)
        finally:
            with self._lock:
                self.in_flight -= 1
        return web.json_response(self.chat_completion(body, text, f"chatcmpl-{len(self.requests)}"))

    def chat_completion(self, body: dict[str, Any], text: str, completion_id: str) -> dict[str, Any]:
        """The OpenAI chat completion answering ``body`` with ``text`` (online and in batches)."""
        prompt_tokens = sum(len(str(m.get("content", ""))) for m in body.get("messages", [])) // 4 + 1
        completion_tokens = len(text) // 4 + 1
        return {
            "id": completion_id,
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", self.model),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                         "finish_reason": "stop"}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens},
        }

    def anthropic_message(self, body: dict[str, Any], message_id: str) -> dict[str, Any]:
        """The Anthropic message answering ``body`` (online and in batches): a schema example or an echo."""
        schema = ((body.get("output_config") or {}).get("format") or {}).get("schema")
        if schema is not None:
            rng = random.Random(json.dumps(body.get("messages"), sort_keys=True))
            text = json.dumps(example_from_schema(schema, rng))
        else:
            text = "echo: " + str(body["messages"][-1]["content"])[:200]
        return {
            "id": message_id, "type": "message", "role": "assistant",
            "model": body.get("model", self.model), "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": len(json.dumps(body)) // 4, "output_tokens": len(text) // 4 + 1},
        }

    async def _admit(
        self, request: web.Request, error: Callable[..., web.Response], retry_header: str
    ) -> tuple[dict, web.Response | None]:
        """Record a non-chat request, wait the fixed latency; a queued fault is answered by ``error``."""
        body = await request.json()
        with self._lock:
            self.requests.append(body)
            fault = self._faults.popleft() if self._faults else None
        if self.latency_s > 0:
            await asyncio.sleep(self.latency_s)
        if fault is None:
            return body, None
        status, retry_after, message = fault
        headers = {retry_header: f"{retry_after:g}"} if retry_after is not None else {}
        return body, error(status, message, headers)

    async def _anthropic(self, request: web.Request) -> web.Response:
        body, failure = await self._admit(request, self._anthropic_error, "retry-after")
        if failure is not None:
            return failure
        if self.reject_sampling_params and ("temperature" in body or "top_p" in body):
            return self._anthropic_error(400, "`temperature` is deprecated for this model.")
        return web.json_response(self.anthropic_message(body, f"msg_{len(self.requests)}"))

    def _anthropic_error(self, status: int, message: str,
                         headers: dict[str, str] | None = None) -> web.Response:
        self.errors_sent.append(status)
        kind = "rate_limit_error" if status == 429 else "api_error" if status >= 500 else "invalid_request"
        return web.json_response({"type": "error", "error": {"type": kind, "message": message}},
                                 status=status, headers=headers)

    def _error(self, status: int, message: str, headers: dict[str, str] | None = None) -> web.Response:
        self.errors_sent.append(status)
        kind = "rate_limit_exceeded" if status == 429 else "server_error" if status >= 500 else "invalid"
        return web.json_response({"error": {"message": message, "type": kind, "code": status}},
                                 status=status, headers=headers)

    def embedding_of(self, text: str) -> list[float]:
        """The vector ``/v1/embeddings`` returns for ``text`` (seeded by the text: stable across runs)."""
        rng = random.Random(hashlib.sha256(text.encode("utf-8")).hexdigest())
        return [rng.uniform(-1.0, 1.0) for _ in range(self.embedding_dim)]

    async def _embeddings(self, request: web.Request) -> web.Response:
        body, failure = await self._admit(request, self._error, "Retry-After")
        if failure is not None:
            return failure
        texts = body.get("input")
        texts = [texts] if isinstance(texts, str) else list(texts or [])
        tokens = sum(len(str(t)) // 4 + 1 for t in texts)
        return web.json_response({
            "object": "list",
            "model": body.get("model", self.model),
            "data": [{"object": "embedding", "index": i, "embedding": self.embedding_of(str(t))}
                     for i, t in enumerate(texts)],
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        })

    async def _models(self, request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": self.model, "object": "model"}]})

    async def _model(self, request: web.Request) -> web.Response:
        """``GET /v1/models/<id>``: any id exists (both the OpenAI and the Anthropic shape)."""
        model = request.match_info["model"]
        return web.json_response({"id": model, "object": "model", "type": "model", "created": 0,
                                  "owned_by": "fake", "display_name": model,
                                  "created_at": "2026-01-01T00:00:00Z"})

    def add_routes(self, app: web.Application) -> None:
        """Hook for subclasses that serve more endpoints (e.g. ``tests/batch_server.py``)."""

    def start(self) -> FakeOpenAIServer:
        """Start serving on a free port of 127.0.0.1 (returns once the socket is bound)."""
        ready = threading.Event()
        failure: list[BaseException] = []

        async def serve() -> None:
            app = web.Application(middlewares=[self._count_and_authorize])
            app.router.add_post("/v1/chat/completions", self._chat)
            app.router.add_get("/v1/models", self._models)
            app.router.add_get("/v1/models/{model}", self._model)
            app.router.add_route("*", "/_control/{action}", self._control)
            app.router.add_post("/v1/messages", self._anthropic)
            app.router.add_post("/v1/embeddings", self._embeddings)
            self.add_routes(app)
            self._runner = web.AppRunner(app, access_log=None)
            await self._runner.setup()
            site = web.TCPSite(self._runner, "127.0.0.1", 0)
            await site.start()
            self.port = self._runner.addresses[0][1]

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            try:
                loop.run_until_complete(serve())
            except BaseException as exc:  # noqa: BLE001 - reported to the starting thread
                failure.append(exc)
                ready.set()
                return
            ready.set()
            loop.run_forever()
            loop.run_until_complete(self._runner.cleanup() if self._runner else asyncio.sleep(0))
            loop.close()

        self._thread = threading.Thread(target=run, name="fake-openai-server", daemon=True)
        self._thread.start()
        if not ready.wait(10):
            raise RuntimeError("fake OpenAI server did not start within 10 s")
        if failure:
            raise RuntimeError(f"fake OpenAI server failed to start: {failure[0]}") from failure[0]
        return self

    def stop(self) -> None:
        """Stop the server and join its thread."""
        if self._loop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)
        self._loop = self._thread = None
        self.port = None

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> None:
    """Serve until killed: ``python tests/openai_server.py --latency-s 0.05`` prints ``PORT <n>``."""
    import argparse

    parser = argparse.ArgumentParser(description="A local OpenAI-compatible test server.")
    parser.add_argument("--latency-s", type=float, default=0.0, help="fixed delay before every answer")
    parser.add_argument("--no-json-schema", action="store_true", help="answer json_schema requests with 500")
    parser.add_argument("--api-key", default=None, help="refuse requests without this key (HTTP 401)")
    args = parser.parse_args(argv)
    server = FakeOpenAIServer(latency_s=args.latency_s, json_schema_supported=not args.no_json_schema,
                              api_key=args.api_key).start()
    print(f"PORT {server.port}", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()


if __name__ == "__main__":
    main()
