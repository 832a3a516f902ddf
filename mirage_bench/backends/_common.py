"""Helpers shared by the backends: message payloads and hashing, sampling options, HTTP error
mapping (plain statuses and the openai/anthropic SDK exceptions), per-loop SDK clients, transcripts.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import email.utils
import hashlib
import json
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from types import ModuleType
from typing import Any

from mirage_bench.backends.base import (
    BackendConnectionError,
    BackendError,
    BackendTimeoutError,
    GenerateParams,
    MalformedResponseError,
    RateLimitError,
)
from mirage_bench.types import Message

#: Set by :class:`mirage_bench.client.Client` around each backend call: counts an extra request.
REQUEST_COUNTER: contextvars.ContextVar[Callable[[], None] | None] = contextvars.ContextVar(
    "mirage_bench_request_counter", default=None
)


def count_extra_request() -> None:
    """Tell the calling client that this ``generate`` sends one more HTTP request than its first.

    A backend that adapts (a structured-output fallback, dropped sampling parameters) calls this
    before each additional request, so the manifest counts every request the provider saw.
    """
    counter = REQUEST_COUNTER.get()
    if counter is not None:
        counter()


def messages_payload(messages: Sequence[Message]) -> list[dict[str, str]]:
    """Messages as plain ``{"role", "content"}`` dicts (the OpenAI wire shape).

    >>> messages_payload([Message(role="user", content="hi")])
    [{'role': 'user', 'content': 'hi'}]
    """
    return [{"role": m.role, "content": m.content} for m in messages]


def optional_sampling(params: GenerateParams) -> dict[str, Any]:
    """``top_p``, ``seed`` and ``stop`` as request keywords, each only when set (OpenAI/llama.cpp/vLLM names).

    >>> optional_sampling(GenerateParams(seed=3, stop=("\\n",)))
    {'seed': 3, 'stop': ['\\n']}
    >>> optional_sampling(GenerateParams())
    {}
    """
    extra: dict[str, Any] = {}
    if params.top_p is not None:
        extra["top_p"] = params.top_p
    if params.seed is not None:
        extra["seed"] = params.seed
    if params.stop:
        extra["stop"] = list(params.stop)
    return extra


def message_hash(messages: Sequence[Message]) -> str:
    """A stable sha256 of the messages (role and content only), used to key recordings.

    >>> message_hash([Message(role="user", content="hi")])[:12]
    'b03d228fdf33'
    """
    blob = json.dumps(messages_payload(messages), ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def parse_retry_after(headers: Mapping[str, str] | None, *, now: float | None = None) -> float | None:
    """Seconds to wait from ``retry-after-ms`` / ``retry-after`` headers (delta-seconds or HTTP date).

    >>> parse_retry_after({"retry-after": "2"})
    2.0
    >>> parse_retry_after({"retry-after-ms": "250"})
    0.25
    >>> parse_retry_after({}) is None
    True
    """
    if not headers:
        return None
    lowered = {str(k).lower(): str(v) for k, v in headers.items()}
    raw_ms = lowered.get("retry-after-ms")
    if raw_ms is not None:
        try:
            return max(0.0, float(raw_ms) / 1000.0)
        except ValueError:
            pass
    raw = lowered.get("retry-after")
    if raw is None:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def error_from_status(
    status_code: int, message: str, headers: Mapping[str, str] | None = None
) -> BackendError:
    """Map an HTTP status to the package's error types: 429 rate limit, 408/409/5xx retryable, other 4xx not.

    >>> type(error_from_status(429, "slow down", {"retry-after": "1"})).__name__
    'RateLimitError'
    >>> error_from_status(503, "down").retryable, error_from_status(400, "bad").retryable
    (True, False)
    """
    retry_after = parse_retry_after(headers)
    if status_code == 429:
        return RateLimitError(message, retry_after=retry_after)
    retryable = status_code >= 500 or status_code in (408, 409)
    return BackendError(message, retryable=retryable, retry_after=retry_after, status_code=status_code)


def _refused(error: BaseException) -> bool:
    """Whether a ``ConnectionRefusedError`` is in ``error``'s cause chain."""
    seen = 0
    cause: BaseException | None = error
    while cause is not None and seen < 10:
        if isinstance(cause, ConnectionRefusedError):
            return True
        cause, seen = cause.__cause__ or cause.__context__, seen + 1
    return False


@contextlib.contextmanager
def sdk_errors(sdk: ModuleType, provider: str) -> Iterator[None]:
    """Map the exceptions of an ``openai``/``anthropic`` SDK call inside the block to the package's types.

    Both SDKs share one hierarchy: ``RateLimitError`` is caught before its parent ``APIStatusError``
    (-> :class:`RateLimitError` with the server's Retry-After), ``APITimeoutError`` before its parent
    ``APIConnectionError`` (-> :class:`BackendTimeoutError`), connection failures ->
    :class:`BackendConnectionError`, any other status -> :func:`error_from_status`.
    """
    try:
        yield
    except sdk.RateLimitError as exc:
        raise RateLimitError(f"{provider} 429: {exc.message}",
                             retry_after=parse_retry_after(exc.response.headers)) from exc
    except sdk.APITimeoutError as exc:
        if _refused(exc):  # the aiohttp transport reports a refused connection as a connect timeout
            raise BackendConnectionError(f"{provider} connection failed: {exc.__cause__ or exc}") from exc
        raise BackendTimeoutError(f"{provider} request timed out: {exc}") from exc
    except sdk.APIConnectionError as exc:
        raise BackendConnectionError(f"{provider} connection failed: {exc}") from exc
    except sdk.APIStatusError as exc:
        raise error_from_status(exc.status_code, f"{provider} {exc.status_code}: {exc.message}",
                                exc.response.headers) from exc
    except (sdk.APIResponseValidationError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise MalformedResponseError(f"{provider} sent a malformed response body: {exc}") from exc


class LoopBoundClient:
    """An async SDK client made per running event loop, since its HTTP connection pool is bound to one.

    ``get()`` returns the client for the running loop (building a new one with ``factory`` when the
    loop changed); ``aclose()`` closes it, and must run before that loop ends, or the pool's
    transports are left unclosed (``ResourceWarning``, later ``Event loop is closed``).
    """

    def __init__(self, factory: Callable[[], Any]) -> None:
        self._factory = factory
        self.client: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def get(self) -> Any:
        """The client bound to the running loop."""
        loop = asyncio.get_running_loop()
        if self.client is None or self._loop is not loop:
            self.client, self._loop = self._factory(), loop
        return self.client

    async def aclose(self) -> None:
        """Close the current client's connections, if there is one (idempotent)."""
        if self.client is not None:
            client, self.client, self._loop = self.client, None, None
            await client.close()


class FlaggedRetry:
    """Mixin: ``is_retryable`` is the error's own flag, as every backend here decides it.

    The HTTP backends flag rate limits, 5xx, timeouts and dropped connections (see
    :func:`error_from_status`); in-process backends raise deterministic, non-retryable errors unless
    they flag one otherwise.
    """

    def is_retryable(self, error: BaseException) -> bool:
        """Whether ``error`` is a :class:`BackendError` flagged ``retryable``."""
        return isinstance(error, BackendError) and error.retryable


def plain_transcript(messages: Sequence[Message]) -> str:
    """Format chat messages as a plain-text transcript ending in an open assistant turn.

    Used for base models without a chat template (such as the embedded ``local`` model).

    >>> print(plain_transcript([Message(role="system", content="Be brief."),
    ...                         Message(role="user", content="Hi")]))
    System: Be brief.
    <BLANKLINE>
    User: Hi
    <BLANKLINE>
    Assistant:
    """
    names = {"system": "System", "user": "User", "assistant": "Assistant"}
    parts = [f"{names[m.role]}: {m.content}" for m in messages]
    parts.append("Assistant:")
    return "\n\n".join(parts)


def truncate_at_stop(text: str, stop: Sequence[str] | None) -> tuple[str, bool]:
    """Cut ``text`` at the first stop sequence; return (text, whether a stop matched).

    >>> truncate_at_stop("abc\\nUser: x", ["\\nUser:"])
    ('abc', True)
    """
    if not stop:
        return text, False
    cut = min((i for i in (text.find(s) for s in stop if s) if i >= 0), default=-1)
    if cut < 0:
        return text, False
    return text[:cut], True
