"""Tests of the scripted backend, the spec registry and the shared helpers."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel

from mirage_bench.backends._common import error_from_status, message_hash, parse_retry_after
from mirage_bench.backends.base import (
    Backend,
    BackendError,
    BackendTimeoutError,
    GenerateParams,
    RateLimitError,
)
from mirage_bench.backends.registry import is_smoke_test, make_backend, parse_spec
from mirage_bench.backends.scripted import RecordingBackend, ScriptedBackend, example_from_schema
from mirage_bench.client import Client, ClientConfig
from mirage_bench.types import Label, Message

MSGS = [Message(role="user", content="judge this")]


class Claim(BaseModel):
    claim: str
    label: Label


class Judgment(BaseModel):
    claims: list[Claim]
    injection_attempt: bool


async def test_default_responder_returns_schema_valid_json() -> None:
    backend = make_backend("scripted")
    params = GenerateParams(json_schema=Judgment.model_json_schema())
    completion = await backend.generate(MSGS, params)
    parsed = Judgment.model_validate_json(completion.text)
    assert parsed.claims and all(isinstance(c.label, Label) for c in parsed.claims)
    again = await backend.generate(MSGS, params)
    assert again.text == completion.text
    plain = await backend.generate(MSGS, GenerateParams())
    assert plain.text.startswith("Scripted response")
    assert completion.usage.input_tokens > 0 and completion.model == "scripted-v1"


def test_example_from_schema_rejects_remote_ref() -> None:
    import random

    with pytest.raises(ValueError, match="local"):
        example_from_schema({"$ref": "http://x/schema"}, random.Random(0))


async def test_faults_use_real_error_types_and_are_seeded() -> None:
    seen: dict[str, type] = {}
    backend = ScriptedBackend(lambda m, p: '{"a": 1}', fault_rate=1.0, seed=3)
    for i in range(40):
        try:
            completion = await backend.generate([Message(role="user", content=str(i))], GenerateParams())
        except BackendError as exc:
            seen[type(exc).__name__] = type(exc)
            assert exc.retryable
            if isinstance(exc, RateLimitError):
                assert exc.retry_after == pytest.approx(0.01) and exc.status_code == 429
        else:
            with pytest.raises(json.JSONDecodeError):
                json.loads(completion.text)
            seen["malformed"] = type(None)
    assert set(seen) == {"RateLimitError", "BackendError", "BackendTimeoutError", "malformed"}
    assert issubclass(seen["BackendTimeoutError"], BackendTimeoutError)
    assert sum(backend.faults.values()) == 40

    async def faults_of(seed: int) -> list[bool]:
        b = ScriptedBackend(lambda m, p: "x", fault_rate=0.3, fault_kinds=("server_error",), seed=seed)
        out = []
        for i in range(30):
            try:
                await b.generate([Message(role="user", content=str(i))], GenerateParams())
                out.append(False)
            except BackendError:
                out.append(True)
        return out

    assert await faults_of(1) == await faults_of(1)
    assert await faults_of(1) != await faults_of(2)


async def test_client_recovers_from_injected_faults() -> None:
    backend = ScriptedBackend(lambda m, p: "fine", fault_rate=0.3,
                              fault_kinds=("rate_limit", "server_error", "timeout"), seed=7)
    client = Client(backend, ClientConfig(backoff_base_s=0.0, max_attempts=10))
    results = [await client.call([Message(role="user", content=str(i))], GenerateParams()) for i in range(60)]
    assert all(r.ok and r.text == "fine" for r in results)
    assert client.stats.retries == sum(backend.faults.values()) > 0


def test_scripted_rejects_bad_options() -> None:
    with pytest.raises(ValueError, match="unknown fault kinds"):
        ScriptedBackend(fault_kinds=("gremlins",))
    with pytest.raises(ValueError, match="fault_rate"):
        ScriptedBackend(fault_rate=1.5)


async def test_recording_roundtrip(tmp_path) -> None:
    path = tmp_path / "rec.jsonl"
    recorder = RecordingBackend(ScriptedBackend(lambda m, p: "recorded answer"), path)
    await recorder.generate(MSGS, GenerateParams())
    replay = make_backend(f"scripted:{path}")
    assert (await replay.generate(MSGS, GenerateParams())).text == "recorded answer"
    with pytest.raises(BackendError) as info:
        await replay.generate([Message(role="user", content="never recorded")], GenerateParams())
    assert info.value.status_code == 404 and not replay.is_retryable(info.value)
    path.write_text(json.dumps({"messages": [{"role": "user", "content": "judge this"}], "text": "t"}) + "\n"
                    + json.dumps({"text": "no key"}) + "\n")
    with pytest.raises(ValueError, match=r"rec.jsonl:2"):
        make_backend(f"scripted:{path}")


def test_parse_spec() -> None:
    assert parse_spec("openai:gpt-4o-mini") == ("openai", "gpt-4o-mini", None)
    assert parse_spec("openai:Qwen/Qwen2.5-7B@http://127.0.0.1:8000/v1") == (
        "openai", "Qwen/Qwen2.5-7B", "http://127.0.0.1:8000/v1")
    assert parse_spec("vllm:meta-llama/Llama-3.1-8B-Instruct") == (
        "vllm", "meta-llama/Llama-3.1-8B-Instruct", None)
    assert parse_spec("llamacpp:/m/x.gguf") == ("llamacpp", "/m/x.gguf", None)
    assert parse_spec("scripted") == ("scripted", "", None)
    for bad in ("", "gpt-4o", "openai:", "local:x", "anthropic:claude@http://x"):
        with pytest.raises(ValueError):
            parse_spec(bad)


def test_make_backend_openai_key_handling(monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ValueError, match="OPENAI_API_KEY"):
        make_backend("openai:gpt-4o-mini")
    local_server = make_backend("openai:m@http://127.0.0.1:9/v1")
    assert isinstance(local_server, Backend) and local_server.name == "openai:m@http://127.0.0.1:9/v1"
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    assert make_backend("openai:gpt-4o-mini").snapshot == "gpt-4o-mini"


def test_make_backend_anthropic_needs_key(monkeypatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(ValueError, match="ANTHROPIC_API_KEY"):
        make_backend("anthropic:claude-opus-4-7-20260610")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    backend = make_backend("anthropic:claude-opus-4-7-20260610")
    assert backend.name == "anthropic:claude-opus-4-7-20260610" and not is_smoke_test(backend)


def test_http_error_mapping() -> None:
    assert isinstance(error_from_status(429, "x", {"Retry-After": "3"}), RateLimitError)
    assert error_from_status(429, "x", {"Retry-After": "3"}).retry_after == 3.0
    assert error_from_status(500, "x").retryable and error_from_status(408, "x").retryable
    assert not error_from_status(401, "x").retryable and not error_from_status(422, "x").retryable
    assert parse_retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, now=1445412470.0) == 10.0
    assert parse_retry_after({"retry-after": "soon"}) is None


def test_message_hash_is_content_sensitive() -> None:
    assert message_hash(MSGS) != message_hash([Message(role="system", content="judge this")])
