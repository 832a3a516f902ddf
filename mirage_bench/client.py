"""One client owns the hard parts of calling a model: concurrency, rate limits, retries, timeouts, cache.

* concurrency: an ``asyncio.Semaphore`` per client bounds the backend calls in flight;
* rate limits: ``aiolimiter`` leaky buckets for requests/min and tokens/min (tokens estimated as
  ~4 characters per input token plus ``max_tokens``);
* retries: tenacity's ``AsyncRetrying`` on retryable errors only (429, 5xx, timeouts, dropped
  connections), waiting ``max(exponential backoff with full jitter, Retry-After)``;
* timeouts: ``asyncio.timeout(timeout_s)`` around each attempt;
* cache: :class:`~mirage_bench.cache.ResponseCache` (sqlite, successful completions only).

:meth:`Client.call` never raises for a backend failure: it returns a :class:`CallResult` with
``ok=False``, the reason and an ``error_kind``.

>>> import asyncio
>>> from mirage_bench.backends.scripted import ScriptedBackend
>>> client = Client(ScriptedBackend(lambda m, p: "hi"))
>>> result = asyncio.run(client.call([Message(role="user", content="x")], GenerateParams()))
>>> result.ok, result.text, result.attempts, client.stats.backend_calls
(True, 'hi', 1, 1)
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt
from tenacity.wait import wait_base, wait_random_exponential

from mirage_bench.backends.base import (
    Backend,
    BackendConnectionError,
    BackendError,
    BackendTimeoutError,
    Completion,
    GenerateParams,
    RateLimitError,
)
from mirage_bench.cache import ResponseCache, cache_key
from mirage_bench.types import Message

if TYPE_CHECKING:
    from aiolimiter import AsyncLimiter

__all__ = ["CallGuard", "CallResult", "Client", "ClientConfig", "ClientStats", "ResponseCache", "cache_key",
           "error_kind", "run_closing"]

logger = logging.getLogger(__name__)
T = TypeVar("T")


class ClientConfig(BaseModel):
    """Operational settings of a :class:`Client`. None of these enter the cache key."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    concurrency: int = Field(default=8, ge=1)
    requests_per_minute: float | None = Field(default=None, gt=0)
    tokens_per_minute: float | None = Field(default=None, gt=0)
    max_attempts: int = Field(default=6, ge=1)
    timeout_s: float = Field(default=120.0, gt=0)
    backoff_base_s: float = Field(default=1.0, ge=0)
    backoff_max_s: float = Field(default=60.0, ge=0)
    #: Upper bound on a server's Retry-After that the client will honour in one wait.
    retry_after_max_s: float = Field(default=600.0, ge=0)


class CallResult(BaseModel):
    """The outcome of one :meth:`Client.call`: a completion, or a recorded failure with its reason."""

    model_config = ConfigDict(frozen=True)

    ok: bool
    #: The completion text; ``None`` unless ``ok``.
    text: str | None = None
    completion: Completion | None = None
    #: Why the call failed (the last error's message); ``None`` when ``ok``.
    error: str | None = None
    #: ``rate_limit``, ``server``, ``timeout``, ``connection``, ``client`` (4xx), ``backend``
    #: (another backend error) or ``unexpected`` (an exception that is not a backend error).
    error_kind: str | None = None
    #: Backend attempts made (0 for a cache hit).
    attempts: int = 0
    cached: bool = False
    cache_key: str = ""


@dataclass
class ClientStats:
    """Counters of one client. Token counts cover backend calls only (cache hits cost nothing)."""

    calls: int = 0
    backend_calls: int = 0
    cache_hits: int = 0
    retries: int = 0
    failures: int = 0
    input_tokens: int = 0
    output_tokens: int = 0

    def as_dict(self) -> dict[str, int]:
        """The counters as a plain dict (for manifests and reports)."""
        return asdict(self)


def error_kind(error: BaseException) -> str:
    """Classify an error for :attr:`CallResult.error_kind`.

    >>> error_kind(RateLimitError("429")), error_kind(TimeoutError()), error_kind(ValueError())
    ('rate_limit', 'timeout', 'unexpected')
    >>> error_kind(BackendError("bad request", retryable=False, status_code=400))
    'client'
    """
    if isinstance(error, RateLimitError):
        return "rate_limit"
    if isinstance(error, BackendTimeoutError | TimeoutError):
        return "timeout"
    if isinstance(error, BackendConnectionError):
        return "connection"
    if isinstance(error, BackendError):
        if error.status_code is not None and error.status_code >= 500:
            return "server"
        if error.status_code is not None and 400 <= error.status_code < 500:
            return "client"
        return "backend"
    return "unexpected"


class _WaitBackoffOrRetryAfter(wait_base):
    """Wait ``max(exponential backoff with full jitter, the error's Retry-After)``."""

    def __init__(self, config: ClientConfig) -> None:
        self._backoff = wait_random_exponential(multiplier=config.backoff_base_s, max=config.backoff_max_s)
        self._retry_after_max = config.retry_after_max_s

    def __call__(self, retry_state: RetryCallState) -> float:
        backoff = float(self._backoff(retry_state))
        outcome = retry_state.outcome
        error = outcome.exception() if outcome is not None else None
        retry_after = getattr(error, "retry_after", None)
        if retry_after is None:
            return backoff
        return max(backoff, min(float(retry_after), self._retry_after_max))


class CallGuard:
    """Concurrency, rate limits, a timeout per attempt and retries around one kind of backend request.

    Shared by :class:`Client` (chat completions) and
    :class:`~mirage_bench.embeddings.EmbeddingClient`, so both obey one implementation of
    :class:`ClientConfig`. The semaphore and limiters are rebuilt per event loop, so an owner
    survives several ``asyncio.run()`` calls.
    """

    def __init__(self, config: ClientConfig, is_retryable: Callable[[BaseException], bool], *,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
        self.config = config
        self._backend_retryable = is_retryable
        self._sleep = sleep
        self._loop: asyncio.AbstractEventLoop | None = None
        self._semaphore = asyncio.Semaphore(config.concurrency)
        self._request_limiter: AsyncLimiter | None = None
        self._token_limiter: AsyncLimiter | None = None

    def _bind_loop(self) -> None:
        loop = asyncio.get_running_loop()
        if loop is self._loop:
            return
        from aiolimiter import AsyncLimiter

        self._loop = loop
        self._semaphore = asyncio.Semaphore(self.config.concurrency)
        rpm, tpm = self.config.requests_per_minute, self.config.tokens_per_minute
        self._request_limiter = AsyncLimiter(rpm, 60.0) if rpm else None
        self._token_limiter = AsyncLimiter(tpm, 60.0) if tpm else None

    def is_retryable(self, error: BaseException) -> bool:
        """Timeouts always; backend errors when the backend says so; nothing else."""
        if isinstance(error, TimeoutError):
            return True
        return isinstance(error, BackendError) and bool(self._backend_retryable(error))

    async def run(self, request: Callable[[], Awaitable[T]], *, tokens: float,
                  on_attempt: Callable[[int], None]) -> tuple[T | None, BaseException | None, int]:
        """``(result, None, attempts)``, or ``(None, last_error, attempts)``; never raises for failures.

        ``tokens`` is the estimate charged to the tokens-per-minute limiter; ``on_attempt(n)`` is
        called before each backend attempt (n = 1, 2, ...) so the owner can count calls and retries.
        """
        self._bind_loop()
        attempts = 0
        retrying = AsyncRetrying(
            stop=stop_after_attempt(self.config.max_attempts),
            wait=_WaitBackoffOrRetryAfter(self.config),
            retry=retry_if_exception(self.is_retryable),
            sleep=self._sleep,
            reraise=True,
        )
        try:
            async for attempt in retrying:
                with attempt:
                    async with self._semaphore:
                        if self._request_limiter is not None:
                            await self._request_limiter.acquire()
                        if self._token_limiter is not None:
                            cap = self.config.tokens_per_minute or tokens
                            await self._token_limiter.acquire(min(tokens, cap))
                        attempts += 1
                        on_attempt(attempts)
                        async with asyncio.timeout(self.config.timeout_s):
                            result = await request()
        except Exception as exc:  # noqa: BLE001 - the owner records every failure
            return None, exc, attempts
        return result, None, attempts

    def failure_reason(self, error: BaseException) -> str:
        """``"<ErrorType>: <message>"``, naming the timeout for a bare timeout."""
        reason = str(error) or type(error).__name__
        if isinstance(error, TimeoutError) and not isinstance(error, BackendError):
            reason = f"timed out after {self.config.timeout_s:g}s"
        return f"{type(error).__name__}: {reason}"


class Client:
    """Calls one backend with concurrency, rate limits, retries, timeouts and an optional cache.

    ``sleep`` is the coroutine used between retries (inject a fake clock in tests).
    """

    def __init__(
        self,
        backend: Backend,
        config: ClientConfig | None = None,
        cache: ResponseCache | None = None,
        *,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.backend = backend
        self.config = config or ClientConfig()
        self.cache = cache
        self.stats = ClientStats()
        #: Usage per pipeline stage (:mod:`mirage_bench.usage`): calls, cache hits, tokens.
        self.stage_usage: dict[str, dict[str, int]] = {}
        self._guard = CallGuard(self.config, backend.is_retryable, sleep=sleep)

    def key_for(self, messages: list[Message], params: GenerateParams,
                prompt_sha256: str | tuple[str, ...] = ()) -> str:
        """The cache key this client uses for a call (see :func:`mirage_bench.cache.cache_key`)."""
        return cache_key(self.backend.name, self.backend.snapshot, messages, params, prompt_sha256)

    def forget(self, key: str) -> bool:
        """Drop a cached completion (e.g. one whose JSON failed to parse) so the next call re-asks."""
        return self.cache.delete(key) if self.cache is not None else False

    async def aclose(self) -> None:
        """Release the backend's connections, if it holds any (``backend.aclose()``); the cache stays open.

        Call it at the end of each ``asyncio.run`` that used an HTTP backend: an SDK connection pool
        collected after its loop closed prints ``RuntimeError: Event loop is closed`` noise.
        """
        close = getattr(self.backend, "aclose", None)
        if close is not None:
            await close()

    def _estimated_tokens(self, messages: list[Message], params: GenerateParams) -> float:
        return sum(len(m.content) for m in messages) / 4.0 + params.max_tokens

    def _count_attempt(self, attempt: int) -> None:
        self.stats.backend_calls += 1
        if attempt > 1:
            self.stats.retries += 1

    async def call(
        self,
        messages: list[Message],
        params: GenerateParams,
        *,
        prompt_sha256: str | tuple[str, ...] = (),
    ) -> CallResult:
        """Return the completion for ``messages`` (from the cache, or the backend with retries).

        Never raises for a backend failure: a failure comes back as ``CallResult(ok=False, ...)``.
        """
        from mirage_bench.usage import add_usage, current_stage

        self.stats.calls += 1
        stage = current_stage()
        add_usage(self.stage_usage, stage, calls=1)
        key = self.key_for(messages, params, prompt_sha256)
        if self.cache is not None:
            hit = self.cache.get(key)
            if hit is not None:
                self.stats.cache_hits += 1
                add_usage(self.stage_usage, stage, cache_hits=1)
                return CallResult(ok=True, text=hit.text, completion=hit, cached=True, cache_key=key)
        completion, error, attempts = await self._guard.run(
            lambda: self.backend.generate(messages, params),
            tokens=self._estimated_tokens(messages, params),
            on_attempt=self._count_attempt,
        )
        if error is not None or completion is None:
            self.stats.failures += 1
            add_usage(self.stage_usage, stage, backend_calls=attempts)
            assert error is not None
            return CallResult(ok=False, error=self._guard.failure_reason(error), error_kind=error_kind(error),
                              attempts=attempts, cache_key=key)
        self.stats.input_tokens += completion.usage.input_tokens
        self.stats.output_tokens += completion.usage.output_tokens
        add_usage(self.stage_usage, stage, backend_calls=attempts, input_tokens=completion.usage.input_tokens,
                  output_tokens=completion.usage.output_tokens)
        if self.cache is not None:
            self.cache.put(key, completion, backend=self.backend.name)
        return CallResult(ok=True, text=completion.text, completion=completion, attempts=attempts,
                          cache_key=key)


def run_closing(main: Coroutine[Any, Any, T], *clients: Client | None) -> T:
    """``asyncio.run(main)``, closing every client's backend connections before that loop ends.

    An SDK connection pool (openai, anthropic: httpx) that outlives its event loop leaves unclosed
    transports behind and, collected later, prints ``RuntimeError: Event loop is closed``. The
    clients are closed even when ``main`` fails; a failure to close is logged, never raised over
    ``main``'s own outcome. ``None`` entries are skipped, so optional clients can be passed as they are.

    >>> from mirage_bench.backends.scripted import ScriptedBackend
    >>> client = Client(ScriptedBackend(lambda m, p: "hi"))
    >>> run_closing(client.call([Message(role="user", content="x")], GenerateParams()), client, None).text
    'hi'
    """

    async def closing() -> T:
        try:
            return await main
        finally:
            for client in clients:
                if client is None:
                    continue
                try:
                    await client.aclose()
                except Exception as exc:  # noqa: BLE001 - closing must not mask the run's own result
                    logger.warning("closing %s failed: %s", client.backend.name, exc)

    return asyncio.run(closing())
