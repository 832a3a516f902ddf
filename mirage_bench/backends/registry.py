"""Build a backend from a model spec string.

Spec grammar (one backend module each, imported only when chosen):

============================== =====================================================================
``openai:<model>``              OpenAI API (key from ``OPENAI_API_KEY``)
``openai:<model>@<base_url>``   any OpenAI-compatible server (vLLM serve, llama.cpp server, TGI, Ollama)
``anthropic:<model>``           Anthropic Messages API (key from ``ANTHROPIC_API_KEY``)
``vllm:<model>``                vLLM's offline ``LLM`` engine, batched, guided JSON (extra ``vllm``, GPU)
``transformers:<path>``         a local transformers causal LM on CPU
``llamacpp:<file.gguf>``        in-process llama-cpp-python (optional, compiled)
``local``                       the embedded SmolLM2-135M-Instruct GGUF: smoke test only, no key, no network
``local:gemma``                 the embedded Gemma 3 270M base GGUF (slower; smoke test only)
``scripted[:<recording.jsonl>]`` programmed / recorded outputs with injected faults (tests)
============================== =====================================================================

>>> parse_spec("openai:qwen2.5@http://127.0.0.1:8000/v1")
('openai', 'qwen2.5', 'http://127.0.0.1:8000/v1')
>>> parse_spec("local")
('local', '', None)
>>> is_smoke_test(make_backend("scripted"))
False
"""

from __future__ import annotations

import re
from typing import Any

from mirage_bench.backends.base import Backend

#: Spec kinds accepted by :func:`make_backend`.
SPEC_KINDS: tuple[str, ...] = ("openai", "anthropic", "vllm", "transformers", "llamacpp", "local", "scripted")

_URL_SUFFIX = re.compile(r"^(?P<model>.+?)@(?P<url>https?://\S+)$")


def parse_spec(spec: str) -> tuple[str, str, str | None]:
    """Split a model spec into ``(kind, target, base_url)``; raise ``ValueError`` on a bad spec.

    >>> parse_spec("anthropic:claude-opus-4-7-20260610")
    ('anthropic', 'claude-opus-4-7-20260610', None)
    >>> parse_spec("gpt-4o")
    Traceback (most recent call last):
    ...
    ValueError: unknown model spec 'gpt-4o': expected one of openai:, anthropic:, vllm:, transformers:, \
llamacpp:, local, scripted (e.g. 'openai:gpt-4o-mini')
    """
    spec = spec.strip()
    kind, _, target = spec.partition(":")
    if kind not in SPEC_KINDS:
        expected = ", ".join(k if k in ("local", "scripted") else f"{k}:" for k in SPEC_KINDS)
        raise ValueError(
            f"unknown model spec {spec!r}: expected one of {expected} (e.g. 'openai:gpt-4o-mini')"
        )
    base_url: str | None = None
    if kind == "local":
        if target not in ("", "smollm2", "gemma"):
            raise ValueError(f"unknown local model {spec!r}: choose 'local' (SmolLM2) or 'local:gemma'")
        return kind, target, None
    if kind == "scripted":
        return kind, target, None
    if not target:
        raise ValueError(f"model spec {spec!r} needs a model after '{kind}:'")
    if kind == "openai":
        match = _URL_SUFFIX.match(target)
        if match:
            target, base_url = match.group("model"), match.group("url")
    elif "@" in target and kind != "transformers":
        raise ValueError(f"a base URL ('@...') is only supported for openai: specs, got {spec!r}")
    return kind, target, base_url


def make_backend(spec: str, **options: Any) -> Backend:
    """Build the backend named by ``spec``; ``options`` go to the backend's constructor.

    Heavy libraries (openai, anthropic, torch, transformers, vllm, llama_cpp) are imported here, on
    demand, never at module import. A missing optional library raises ``ImportError`` naming the
    extra to install.
    """
    kind, target, base_url = parse_spec(spec)
    if kind == "scripted":
        from mirage_bench.backends.scripted import ScriptedBackend

        if target:
            options.setdefault("name", spec)
            return ScriptedBackend.from_recording(target, **options)
        return ScriptedBackend(**options)
    if kind == "openai":
        from mirage_bench.backends.openai_api import OpenAIBackend

        return OpenAIBackend(target, base_url=base_url, **options)
    if kind == "anthropic":
        from mirage_bench.backends.anthropic_api import AnthropicBackend

        return AnthropicBackend(target, **options)
    if kind == "vllm":
        from mirage_bench.backends.vllm_offline import VLLMBackend

        return VLLMBackend(target, **options)
    if kind == "transformers":
        from mirage_bench.backends.hf_transformers import TransformersBackend

        return TransformersBackend(target, **options)
    if kind == "llamacpp":
        from mirage_bench.backends.llamacpp import LlamaCppBackend

        return LlamaCppBackend(target, **options)
    from mirage_bench.backends.local import make_local_backend

    return make_local_backend(variant=target or "smollm2", **options)


def is_smoke_test(backend: object) -> bool:
    """Whether ``backend`` is a smoke-test model whose outputs must never be ranked or trusted.

    >>> from mirage_bench.backends.scripted import ScriptedBackend
    >>> is_smoke_test(ScriptedBackend(smoke_test=True))
    True
    """
    return bool(getattr(backend, "smoke_test", False))
