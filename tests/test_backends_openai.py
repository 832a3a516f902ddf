"""Integration tests: the ``openai`` backend and the Client against a real local HTTP server."""

from __future__ import annotations

import asyncio
import json
import socket

import pytest

from mirage_bench.backends.base import (
    BackendConnectionError,
    BackendError,
    BackendTimeoutError,
    GenerateParams,
    RateLimitError,
)
from mirage_bench.backends.registry import make_backend
from mirage_bench.client import Client, ClientConfig
from mirage_bench.types import Message
from tests.openai_fixtures import openai_server  # noqa: F401 - pytest fixture
from tests.openai_server import FakeOpenAIServer

MSGS = [Message(role="system", content="You are terse."), Message(role="user", content="Say hi")]
SCHEMA = {
    "type": "object",
    "properties": {"claims": {"type": "array", "items": {"type": "object", "properties": {
        "claim": {"type": "string"}, "label": {"enum": ["GROUNDED", "FABRICATED"]}}}}},
    "required": ["claims"],
}


class FakeClock:
    def __init__(self) -> None:
        self.waits: list[float] = []

    async def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)


def backend_for(server: FakeOpenAIServer, **options):
    return make_backend(f"openai:test-model@{server.base_url}", **options)


async def test_plain_completion_over_http(openai_server: FakeOpenAIServer, monkeypatch) -> None:  # noqa: F811
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    backend = backend_for(openai_server)
    completion = await backend.generate(MSGS, GenerateParams(temperature=0.7, max_tokens=20, stop=("\n\n",)))
    assert completion.text == "echo: Say hi"
    assert completion.model == "test-model" and completion.response_id == "chatcmpl-1"
    assert completion.usage.input_tokens > 0 and completion.finish_reason == "stop"
    body = openai_server.requests[0]
    assert body["temperature"] == 0.7 and body["max_tokens"] == 20 and body["stop"] == ["\n\n"]
    assert body["messages"][0] == {"role": "system", "content": "You are terse."}
    assert "response_format" not in body


async def test_json_schema_structured_output(openai_server: FakeOpenAIServer) -> None:  # noqa: F811
    backend = backend_for(openai_server)
    completion = await backend.generate(MSGS, GenerateParams(json_schema=SCHEMA))
    assert "claims" in json.loads(completion.text)
    fmt = openai_server.requests[0]["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["schema"] == SCHEMA


async def test_falls_back_to_json_object_when_server_500s_on_json_schema() -> None:
    with FakeOpenAIServer(json_schema_supported=False) as server:
        backend = backend_for(server)
        first = await backend.generate(MSGS, GenerateParams(json_schema=SCHEMA))
        second = await backend.generate(MSGS, GenerateParams(json_schema=SCHEMA))
        assert "claims" in json.loads(first.text) and "claims" in json.loads(second.text)
        kinds = [r["response_format"]["type"] for r in server.requests]
        assert kinds == ["json_schema", "json_object", "json_object"]
        assert server.requests[1]["response_format"]["schema"] == SCHEMA


async def test_429_maps_to_rate_limit_with_retry_after_and_client_honours_it(
        openai_server: FakeOpenAIServer) -> None:  # noqa: F811
    backend = backend_for(openai_server)
    openai_server.fail_next(429, retry_after=2)
    with pytest.raises(RateLimitError) as info:
        await backend.generate(MSGS, GenerateParams())
    assert info.value.retry_after == 2.0 and backend.is_retryable(info.value)

    clock = FakeClock()
    client = Client(backend, ClientConfig(backoff_base_s=0.001, backoff_max_s=0.001), sleep=clock.sleep)
    openai_server.fail_next(429, retry_after=3.5)
    result = await client.call(MSGS, GenerateParams())
    assert result.ok and result.attempts == 2 and clock.waits == [pytest.approx(3.5)]


async def test_500_is_retried_and_400_is_not(openai_server: FakeOpenAIServer) -> None:  # noqa: F811
    backend = backend_for(openai_server)
    client = Client(backend, ClientConfig(backoff_base_s=0.0), sleep=FakeClock().sleep)
    openai_server.fail_next(500, count=2)
    result = await client.call(MSGS, GenerateParams())
    assert result.ok and result.attempts == 3

    openai_server.fail_next(400, message="bad request: no such parameter")
    with pytest.raises(BackendError) as info:
        await backend.generate(MSGS, GenerateParams())
    assert info.value.status_code == 400 and not backend.is_retryable(info.value)

    openai_server.fail_next(400, message="This model's maximum context length is 8192 tokens")
    failed = await client.call([Message(role="user", content="other")], GenerateParams())
    assert not failed.ok and failed.error_kind == "client" and failed.attempts == 1
    assert openai_server.errors_sent == [500, 500, 400, 400]


async def test_timeouts_map_to_timeout_errors() -> None:
    with FakeOpenAIServer(latency_s=1.0) as server:
        sdk_timeout = backend_for(server, request_timeout_s=0.1)
        with pytest.raises(BackendTimeoutError):
            await sdk_timeout.generate(MSGS, GenerateParams())
        config = ClientConfig(timeout_s=0.1, max_attempts=2)
        client = Client(backend_for(server), config, sleep=FakeClock().sleep)
        result = await client.call(MSGS, GenerateParams())
        assert not result.ok and result.error_kind == "timeout" and result.attempts == 2


async def test_connection_refused_is_retryable_connection_error() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    backend = make_backend(f"openai:m@http://127.0.0.1:{port}/v1")
    with pytest.raises(BackendConnectionError) as info:
        await backend.generate(MSGS, GenerateParams())
    assert backend.is_retryable(info.value)


async def test_client_concurrency_seen_by_the_server() -> None:
    with FakeOpenAIServer(latency_s=0.05) as server:
        client = Client(backend_for(server), ClientConfig(concurrency=4))
        calls = [client.call([Message(role="user", content=str(i))], GenerateParams()) for i in range(16)]
        results = await asyncio.gather(*calls)
        assert all(r.ok for r in results)
        assert server.peak_in_flight == 4


async def test_anthropic_backend_over_http(monkeypatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    with FakeOpenAIServer(reject_sampling_params=True) as server:
        backend = make_backend("anthropic:claude-opus-4-7-20260610", base_url=server.root_url)
        completion = await backend.generate(MSGS, GenerateParams(temperature=0.0, json_schema=SCHEMA))
        assert "claims" in json.loads(completion.text) and completion.model == "claude-opus-4-7-20260610"
        first, second = server.requests
        assert first["temperature"] == 0.0 and "temperature" not in second
        assert second["system"] == "You are terse." and second["messages"] == [
            {"role": "user", "content": "Say hi"}]
        assert second["output_config"]["format"]["schema"] == SCHEMA
        assert not backend.sends_sampling_params

        server.fail_next(429, retry_after=4)
        with pytest.raises(RateLimitError) as info:
            await backend.generate(MSGS, GenerateParams())
        assert info.value.retry_after == 4.0
        server.fail_next(529, message="overloaded")
        with pytest.raises(BackendError) as overloaded:
            await backend.generate(MSGS, GenerateParams())
        assert backend.is_retryable(overloaded.value)
        server.fail_next(401, message="invalid x-api-key")
        with pytest.raises(BackendError) as auth:
            await backend.generate(MSGS, GenerateParams())
        assert auth.value.status_code == 401 and not backend.is_retryable(auth.value)
        await backend.aclose()


def test_run_closing_closes_the_sdk_pool_inside_the_loop_even_on_failure(
        openai_server: FakeOpenAIServer) -> None:  # noqa: F811
    from mirage_bench.client import run_closing

    client = Client(backend_for(openai_server))
    assert run_closing(client.call(MSGS, GenerateParams()), client, None).ok
    assert client.backend.sdk.client is None  # closed before asyncio.run returned

    async def boom() -> None:
        await client.call(MSGS, GenerateParams(seed=1))
        raise RuntimeError("run failed")

    with pytest.raises(RuntimeError, match="run failed"):
        run_closing(boom(), client)
    assert client.backend.sdk.client is None and len(openai_server.requests) == 2


async def test_body_sent_as_encoded_is_the_request(openai_server: FakeOpenAIServer) -> None:  # noqa: F811
    """The body the backend encodes itself reaches the server intact (non-ASCII, control characters)."""
    backend = backend_for(openai_server)
    text = 'Caf\u00e9 \u4e2d\U0001F600 "q" \\ \n\t\x01 \u2028'
    msgs = [Message(role="user", content=text)]
    await backend.generate(msgs, GenerateParams(temperature=0.3, top_p=0.9, seed=7, json_schema=SCHEMA))
    body = openai_server.requests[-1]
    assert body["messages"] == [{"role": "user", "content": text}]
    assert body["temperature"] == 0.3 and body["top_p"] == 0.9 and body["seed"] == 7
    assert body["response_format"]["json_schema"]["schema"] == SCHEMA
    await backend.aclose()


async def test_a_nan_temperature_is_never_sent_as_null(openai_server: FakeOpenAIServer) -> None:  # noqa: F811
    backend = backend_for(openai_server)
    with pytest.raises(ValueError):  # the SDK's own encoder refuses it, as it always did
        await backend.generate(MSGS, GenerateParams(temperature=float("nan")))
    assert openai_server.requests == []
    await backend.aclose()


@pytest.mark.parametrize("base_url", [None, "http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1/",
                                      "http://h.example/", "https://h.example/a/b"])
def test_chat_options_url_is_the_sdks_own(base_url: str | None) -> None:
    """The template's absolute URL is what the SDK itself makes of ``/chat/completions``."""
    from mirage_bench.backends.openai_api import OpenAIBackend

    backend = OpenAIBackend("m", base_url=base_url, api_key="k")
    sdk = backend._new_sdk_client()
    options, _ = backend._chat_options(sdk)
    assert options.url == str(sdk._prepare_url("/chat/completions"))
    assert backend._chat_options(sdk)[0] is options  # one template per SDK client
    assert backend._chat_options(backend._new_sdk_client())[0] is not options


@pytest.mark.parametrize("transport", ["auto", "httpx"])
async def test_raw_response_class_is_what_the_sdk_returns_raw(
        openai_server: FakeOpenAIServer, transport: str) -> None:  # noqa: F811
    backend = make_backend(f"openai:test-model@{openai_server.base_url}", transport=transport)
    sdk = backend.sdk.get()
    raw = await sdk.get("/models", cast_to=backend._chat_options(sdk)[1])
    assert isinstance(raw, backend._chat_options(sdk)[1]) and raw.status_code == 200
    assert json.loads(raw.content)["data"]
    await backend.aclose()


async def test_chat_request_is_the_one_post_builds(openai_server: FakeOpenAIServer) -> None:  # noqa: F811
    """``request`` with the template sends what ``post("/chat/completions", content=...)`` sends:
    the same method, URL, headers (the key's ``Authorization`` included) and body."""
    backend = make_backend(f"openai:test-model@{openai_server.base_url}", api_key="secret-key")
    sdk = backend.sdk.get()
    built = []
    build = sdk._build_request

    def spy(options, **kwargs):
        request = build(options, **kwargs)
        built.append(request)
        return request

    sdk._build_request = spy
    await backend.generate(MSGS, GenerateParams(temperature=0.0, seed=1))
    await sdk.post("/chat/completions", cast_to=object, content=built[0].content)
    ours, theirs = built
    assert (ours.method, ours.url, ours.content) == (theirs.method, theirs.url, theirs.content)
    assert list(ours.headers.multi_items()) == list(theirs.headers.multi_items())
    assert ours.headers["authorization"] == "Bearer secret-key"
    assert openai_server.requests[0] == openai_server.requests[1]
    await backend.aclose()
