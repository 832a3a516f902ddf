"""Helpers shared by the instruments: fact formatting and "call, parse, retry on a parse error".

A parse retry is a fresh call whose last user turn notes the parse error; the attempt number
also enters the cache key (through ``prompt_sha256``), so the response cache can never hand
back the same bad output again.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal

from mirage_bench.backends.base import GenerateParams
from mirage_bench.instruments.parsing import Parsed, ParseError
from mirage_bench.types import Message

if TYPE_CHECKING:  # pragma: no cover
    from mirage_bench.client import Client

#: Sampling temperature of the generation instruments (Probe, Task, Accum), G.9.
GENERATION_TEMPERATURE = 0.7
#: Temperature of the judge, G.9.
JUDGE_TEMPERATURE = 0.0


@lru_cache(maxsize=64)
def template(name: str) -> Any:
    """:func:`mirage_bench.prompts.load_template`, memoised for the life of the process.

    A run's templates are pinned by their sha256 in the manifest, so re-reading them on every call
    (thousands per run) buys nothing.
    """
    from mirage_bench.prompts import load_template

    return load_template(name)


def render(name: str, /, **values: str | int) -> Any:
    """Render template ``name`` (strict, like :func:`mirage_bench.prompts.render`) from the memo."""
    return template(name).render(**values)


def generation_params(
    max_tokens: int, seed: int, json_schema: dict[str, Any] | None = None
) -> GenerateParams:
    """Sampling parameters of a generation call (Probe, Task and its self-audit, Accum, persona
    generation): :data:`GENERATION_TEMPERATURE` (G.9), the call's token budget and seed.

    >>> generation_params(256, 7).temperature
    0.7
    """
    return GenerateParams(
        temperature=GENERATION_TEMPERATURE, max_tokens=max_tokens, seed=seed, json_schema=json_schema
    )


def format_facts(facts: Sequence[str]) -> str:
    """Render revealed facts as a numbered list (the form used by G.5/G.6).

    >>> print(format_facts(["I code.", "I climb."]))
    1. I code.
    2. I climb.
    """
    return "\n".join(f"{i}. {fact}" for i, fact in enumerate(facts, start=1))


def parse_retry_note(error: str, attempt: int) -> str:
    """The note appended to the last user turn of parse retry number ``attempt`` (2, 3, ...).

    >>> parse_retry_note("not valid JSON", 2).strip()[:30]
    '(Attempt 2. A previous answer '
    """
    return (
        f"\n\n(Attempt {attempt}. A previous answer to this request could not be parsed: "
        f"{error}. Reply with the JSON only, exactly in the requested format.)"
    )


@dataclass
class CallOutcome:
    """Result of :func:`call_and_parse`."""

    status: Literal["ok", "parse_failure", "call_failure"]
    parsed: Parsed[Any] | None = None
    text: str | None = None
    error: str | None = None
    attempts: int = 0
    errors: list[str] = field(default_factory=list)
    #: The model snapshot the provider reported for the last completion (``Completion.model``).
    model: str | None = None


async def call_and_parse(
    client: Client,
    messages: list[Message],
    params: GenerateParams,
    prompt_sha256: tuple[str, ...],
    parser: Callable[[str], Parsed[Any]],
    *,
    max_attempts: int = 3,
) -> CallOutcome:
    """Call ``client`` and parse its text; on a :class:`ParseError` retry with a fresh call.

    Returns ``call_failure`` as soon as the client reports a failed call (the client has already
    retried retryable errors), ``parse_failure`` after ``max_attempts`` unparseable outputs.
    """
    if max_attempts < 1:
        raise ValueError("max_attempts must be >= 1")
    errors: list[str] = []
    text: str | None = None
    model: str | None = None
    for attempt in range(1, max_attempts + 1):
        msgs = list(messages)
        sha = tuple(prompt_sha256)
        if attempt > 1:
            last = msgs[-1]
            msgs[-1] = Message(role=last.role, content=last.content + parse_retry_note(errors[-1], attempt))
            sha = sha + (f"parse-retry-attempt:{attempt}",)
        result = await client.call(msgs, params, prompt_sha256=sha)
        if not result.ok:
            reason = f"{result.error_kind or 'error'}: {result.error}"
            return CallOutcome("call_failure", error=reason, attempts=attempt, errors=errors + [reason])
        text = result.text or ""
        model = result.completion.model if result.completion is not None else None
        try:
            parsed = parser(text)
        except ParseError as exc:
            errors.append(str(exc))
            continue
        return CallOutcome("ok", parsed=parsed, text=text, attempts=attempt, errors=errors, model=model)
    return CallOutcome(
        "parse_failure",
        text=text,
        error=f"unparseable after {max_attempts} attempt(s): {errors[-1]}",
        attempts=max_attempts,
        errors=errors,
        model=model,
    )

