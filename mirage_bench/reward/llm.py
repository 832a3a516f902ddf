"""Thin helpers over the engine's :class:`mirage_bench.client.Client` for the reward area.

Every LLM call of this package goes through a ``Client`` (cache, retries, concurrency); these
helpers only render the ``reward_*`` templates with :func:`mirage_bench.prompts.render`, pass the
template sha256s on to the cache key, and parse JSON answers into pydantic models. A failed call
or an unparseable answer is returned as an error string, never replaced by a default value.

>>> extract_json('Sure: {"a": 1} done')
{'a': 1}
>>> extract_json("no json") is None
True
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from mirage_bench.backends.base import GenerateParams
from mirage_bench.types import Message

if TYPE_CHECKING:
    from mirage_bench.client import Client

T = TypeVar("T", bound=BaseModel)


def extract_json(text: str) -> Any | None:
    """Parse ``text`` as JSON, or the outermost ``{...}`` span inside it; ``None`` if neither parses."""
    text = text.strip()
    if text.startswith("```"):
        text = text.strip("`")
        if text.startswith("json"):
            text = text[4:]
    for candidate in (text, text[text.find("{") : text.rfind("}") + 1] if "{" in text else ""):
        if not candidate:
            continue
        try:
            return json.loads(candidate)
        except json.JSONDecodeError:
            continue
    return None


@dataclass(frozen=True)
class LLMResult(Generic[T]):
    """The outcome of one structured call: ``value`` when it parsed, else ``error``."""

    value: T | None
    error: str | None
    raw: str | None
    prompt_sha256: tuple[str, ...]
    cached: bool = False

    @property
    def ok(self) -> bool:
        """Whether the call succeeded and its answer validated."""
        return self.value is not None


def render_messages(
    user_template: str,
    values: dict[str, Any],
    *,
    system_template: str | None = None,
    system_values: dict[str, Any] | None = None,
) -> tuple[list[Message], tuple[str, ...]]:
    """Render ``reward_*`` templates into chat messages; return them with the templates' sha256s."""
    from mirage_bench.prompts import render

    messages: list[Message] = []
    shas: list[str] = []
    if system_template is not None:
        sys_p = render(system_template, **(system_values or {}))
        messages.append(Message(role="system", content=sys_p.text))
        shas.append(sys_p.sha256)
    user = render(user_template, **values)
    messages.append(Message(role="user", content=user.text))
    shas.append(user.sha256)
    return messages, tuple(shas)


async def call_text(
    client: Client, messages: list[Message], params: GenerateParams, prompt_sha256: tuple[str, ...]
) -> tuple[str | None, str | None]:
    """One free-text call: ``(text, None)`` on success, ``(None, reason)`` on failure."""
    result = await client.call(messages, params, prompt_sha256=prompt_sha256)
    if not result.ok or result.text is None:
        return None, f"{result.error_kind or 'error'}: {result.error}"
    return result.text, None


async def call_structured(
    client: Client,
    template: str,
    values: dict[str, Any],
    model: type[T],
    *,
    params: GenerateParams | None = None,
) -> LLMResult[T]:
    """Render ``template``, call the client with ``model``'s JSON schema, validate the answer."""
    messages, shas = render_messages(template, values)
    schema = model.model_json_schema()
    base = params or GenerateParams(max_tokens=1024)
    params = base.model_copy(update={"json_schema": schema})
    result = await client.call(messages, params, prompt_sha256=shas)
    if not result.ok or result.text is None:
        return LLMResult(None, f"{result.error_kind or 'error'}: {result.error}", None, shas)
    data = extract_json(result.text)
    if data is None:
        return LLMResult(None, "parse_failure: answer is not JSON", result.text, shas, result.cached)
    try:
        value = model.model_validate(data)
    except ValidationError as exc:
        return LLMResult(
            None, f"parse_failure: {exc.error_count()} schema errors", result.text, shas, result.cached
        )
    return LLMResult(value, None, result.text, shas, result.cached)


#: Backend spec of the SYNTHETIC scripted responder (a test double answering every reward prompt).
SYNTHETIC_SPEC = "synthetic"


def open_client(spec: str, *, cache_path: str | Path | None = None, concurrency: int = 8) -> Client:
    """Build a :class:`~mirage_bench.client.Client` for backend ``spec`` with an optional sqlite cache.

    ``synthetic`` gives a scripted backend answering with
    :func:`mirage_bench.reward.synthetic.synthetic_responder` (offline demos and tests only); it is
    flagged as a smoke-test model, so its scores are never shown as results even on real pairs.
    """
    from mirage_bench.backends.registry import make_backend
    from mirage_bench.client import Client, ClientConfig, ResponseCache

    if spec == SYNTHETIC_SPEC:
        from mirage_bench.backends.scripted import ScriptedBackend
        from mirage_bench.reward.synthetic import synthetic_responder

        backend = ScriptedBackend(synthetic_responder, name="scripted:synthetic", smoke_test=True)
    else:
        backend = make_backend(spec)
    cache = ResponseCache(Path(cache_path)) if cache_path else None
    return Client(backend, ClientConfig(concurrency=concurrency), cache=cache)


def is_smoke(client: Client) -> bool:
    """Whether the client's backend is a smoke-test model (its outputs must never be trusted)."""
    from mirage_bench.backends.registry import is_smoke_test

    return is_smoke_test(client.backend)


def format_memories(memories: list[str]) -> str:
    """Number memory entries one per line, as shown to generators and judges.

    >>> format_memories(["likes tea", "runs"])
    '1. likes tea\\n2. runs'
    """
    return "\n".join(f"{i}. {m}" for i, m in enumerate(memories, 1)) if memories else "(none)"
