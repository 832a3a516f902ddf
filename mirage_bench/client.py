"""One client owns the hard parts of calling a model: concurrency, rate limits, retries, timeouts, cache.

* concurrency: an ``asyncio.Semaphore`` per client bounds the backend calls in flight;
* rate limits: ``aiolimiter`` leaky buckets for requests/min and tokens/min (tokens estimated as
  ~4 characters per input token plus ``max_tokens``);
* retries: on retryable errors only (429, 5xx, timeouts, dropped connections), waiting
  ``max(tenacity's exponential backoff with full jitter, Retry-After)``;
* timeouts: ``asyncio.timeout(timeout_s)`` around each attempt;
* cache: :class:`~mirage_bench.cache.ResponseCache` (sqlite, successful completions only);
* priority: a call waiting to retry re-enters ahead of fresh calls (:class:`PrioritySemaphore`);
* fail loudly: an error no request can survive (:func:`is_fatal`: 401, 403, 404, a 400 that is not
  about the request's own content) raises :class:`FatalBackendError` from :meth:`Client.call`, once,
  and every later call on that client raises it again without sending anything;
  :meth:`Client.preflight` makes one cheap request before the first real one;
* counting: every request the backend sends (attempts, retries, a backend's adaptations reported
  through :func:`~mirage_bench.backends._common.count_extra_request`, the preflight) is counted in
  :attr:`Client.stats` and reported to the optional ``journal`` *before* it is sent.

:meth:`Client.call` never raises for any other backend failure: it returns a :class:`CallResult`
with ``ok=False``, the reason and an ``error_kind``.

>>> import asyncio
>>> from mirage_bench.backends.scripted import ScriptedBackend
>>> client = Client(ScriptedBackend(lambda m, p: "hi"))
>>> result = asyncio.run(client.call([Message(role="user", content="x")], GenerateParams()))
>>> result.ok, result.text, result.attempts, client.stats.backend_calls
(True, 'hi', 1, 1)
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import logging
import re
import weakref
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field
from tenacity import RetryCallState
from tenacity.wait import wait_base, wait_random_exponential

from mirage_bench.backends._common import REQUEST_COUNTER
from mirage_bench.backends.base import (
    Backend,
    BackendConnectionError,
    BackendError,
    BackendTimeoutError,
    Completion,
    GenerateParams,
    MalformedResponseError,
    RateLimitError,
)
from mirage_bench.cache import ResponseCache, cache_key
from mirage_bench.types import Message
from mirage_bench.usage import add_usage, current_stage

if TYPE_CHECKING:
    from aiolimiter import AsyncLimiter

    from mirage_bench.runs import UsageLedger

__all__ = ["CallGuard", "CallResult", "Client", "ClientConfig", "ClientStats", "FatalBackendError",
           "PrioritySemaphore", "ResponseCache", "cache_key", "error_kind", "is_fatal", "run_closing"]

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
    #: ``rate_limit``, ``server``, ``timeout``, ``connection``, ``malformed`` (an unreadable body),
    #: ``client`` (4xx), ``backend`` (another backend error) or ``unexpected`` (an exception that is
    #: not a backend error).
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
    #: Requests of :meth:`Client.preflight` (also counted in ``backend_calls``).
    preflight_calls: int = 0
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
    if isinstance(error, MalformedResponseError):
        return "malformed"
    if isinstance(error, BackendError):
        if error.status_code is not None and error.status_code >= 500:
            return "server"
        if error.status_code is not None and 400 <= error.status_code < 500:
            return "client"
        return "backend"
    return "unexpected"


#: A 400 naming one of these is about that request's own content (too long, filtered): not fatal.
_PER_REQUEST_400 = re.compile(
    r"context[ _]length|maximum context|too long|too many tokens|prompt is too|input length"
    r"|reduce the length|content[ _]?(filter|policy|management)|safety",
    re.IGNORECASE,
)

#: The fix named in a :class:`FatalBackendError`, per HTTP status.
_FATAL_HINTS: dict[int, str] = {
    401: "the API key was refused: check the key (OPENAI_API_KEY / ANTHROPIC_API_KEY) for this backend",
    403: "the key has no permission for this model or endpoint: check the account's access",
    404: "unknown model or wrong endpoint: check the model name (and the @base_url) in the spec",
    400: "the provider refuses this kind of request: check the model's parameters (spec, max tokens)",
    422: "the provider refuses this kind of request: check the model's parameters (spec, max tokens)",
}


def is_fatal(error: BaseException) -> bool:
    """Whether no request to this backend can succeed after ``error``: the run must stop.

    401/403 (key), 404 (model or endpoint), and a 400/422 that does not name the request's own
    content (a prompt too long or a content filter fails only that record).

    >>> is_fatal(BackendError("401: bad key", retryable=False, status_code=401))
    True
    >>> is_fatal(BackendError("400: maximum context length exceeded", retryable=False, status_code=400))
    False
    >>> is_fatal(RateLimitError("429"))
    False
    """
    if not isinstance(error, BackendError) or error.retryable or error.status_code is None:
        return False
    if error.status_code in (401, 403, 404):
        return True
    if error.status_code in (400, 422):
        return not _PER_REQUEST_400.search(str(error))
    return False


class FatalBackendError(ValueError):
    """A backend error no request can survive; raised by :meth:`Client.call` to stop the stage.

    ``str()`` is one line naming the backend, the provider's message and the fix. It is a
    ``ValueError`` (a configuration mistake: key, model name, endpoint), so every command that
    prints bad input as one line prints this one too.
    """

    def __init__(self, backend: str, error: BaseException, role: str | None = None) -> None:
        self.backend = backend
        self.error = error
        self.role = role
        status = getattr(error, "status_code", None)
        hint = _FATAL_HINTS.get(status or 0, "fix the backend's configuration")
        who = f"{role} backend {backend}" if role else f"backend {backend}"
        message = " ".join(str(error).split())[:300]
        super().__init__(f"{who} failed: {message} -> {hint}")


class PrioritySemaphore:
    """A semaphore whose waiters are served by priority (lower first), FIFO within a priority.

    The client acquires with priority 0 for a retry and 1 for a fresh call, so a call that already
    waited out a backoff goes back ahead of work that has not started yet.
    """

    def __init__(self, value: int) -> None:
        self._value = value
        self._waiters: list[tuple[int, int, asyncio.Future[None]]] = []
        self._counter = itertools.count()

    async def acquire(self, priority: int = 1) -> None:
        """Take a slot, waiting behind callers of lower ``priority`` values."""
        if self._value > 0 and not self._waiters:
            self._value -= 1
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._waiters, (priority, next(self._counter), future))
        try:
            await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                self.release()  # the slot was handed over just as we were cancelled: pass it on
            raise

    def release(self) -> None:
        """Give a slot back (to the first live waiter, if any)."""
        while self._waiters:
            _, _, future = heapq.heappop(self._waiters)
            if not future.done():
                future.set_result(None)
                return
        self._value += 1


#: Semaphores shared per (backend, event loop) for backends that declare ``max_concurrency``; weak
#: keys, so a later backend or loop that reuses a dead one's ``id()`` never inherits its taken slots.
_SHARED_SEMAPHORES: weakref.WeakKeyDictionary[Any, weakref.WeakKeyDictionary[Any, PrioritySemaphore]] = (
    weakref.WeakKeyDictionary()
)


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


def _retry_state(attempt_number: int, error: BaseException) -> RetryCallState:
    """A tenacity ``RetryCallState`` after failed attempt ``attempt_number`` (for its wait strategies)."""
    state = RetryCallState(None, None, (), {})  # type: ignore[arg-type]
    state.attempt_number = attempt_number
    state.set_exception((type(error), error, error.__traceback__))
    return state


class CallGuard:
    """Concurrency, rate limits, a timeout per attempt and retries around one kind of backend request.

    Shared by :class:`Client` (chat completions) and
    :class:`~mirage_bench.embeddings.EmbeddingClient`, so both obey one implementation of
    :class:`ClientConfig`. The semaphore and limiters are rebuilt per event loop, so an owner
    survives several ``asyncio.run()`` calls.
    """

    def __init__(self, config: ClientConfig, is_retryable: Callable[[BaseException], bool], *,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
                 shared_by: object | None = None, limit: int | None = None) -> None:
        self.config = config
        #: With ``shared_by`` (a backend declaring ``max_concurrency``), every guard of that object
        #: shares one semaphore of ``limit`` slots, so two clients of one local model queue for it
        #: before their timeouts start instead of inside them.
        self._shared_by = shared_by
        self._limit = min(limit, config.concurrency) if limit else config.concurrency
        self._backend_retryable = is_retryable
        self._sleep = sleep
        self._wait = _WaitBackoffOrRetryAfter(config)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._semaphore = PrioritySemaphore(config.concurrency)
        #: Calls waiting out a backoff before their next attempt (for progress displays).
        self.retrying = 0
        self._request_limiter: AsyncLimiter | None = None
        self._token_limiter: AsyncLimiter | None = None

    def _bind_loop(self) -> None:
        loop = asyncio.get_running_loop()
        if loop is self._loop:
            return
        from aiolimiter import AsyncLimiter

        self._loop = loop
        if self._shared_by is not None:
            try:
                per_loop = _SHARED_SEMAPHORES.setdefault(self._shared_by, weakref.WeakKeyDictionary())
                self._semaphore = per_loop.setdefault(loop, PrioritySemaphore(self._limit))
            except TypeError:  # a backend that cannot be weakly referenced: this guard's own slots
                self._semaphore = PrioritySemaphore(self._limit)
        else:
            self._semaphore = PrioritySemaphore(self._limit)
        rpm, tpm = self.config.requests_per_minute, self.config.tokens_per_minute
        self._request_limiter = AsyncLimiter(rpm, 60.0) if rpm else None
        self._token_limiter = AsyncLimiter(tpm, 60.0) if tpm else None

    def is_retryable(self, error: BaseException) -> bool:
        """Timeouts always; backend errors when the backend says so; nothing else."""
        if isinstance(error, TimeoutError):
            return True
        return isinstance(error, BackendError) and bool(self._backend_retryable(error))

    async def _backoff(self, seconds: float) -> None:
        self.retrying += 1
        try:
            await self._sleep(seconds)
        finally:
            self.retrying -= 1

    async def run(self, request: Callable[[], Awaitable[T]], *, tokens: float,
                  on_attempt: Callable[[int], None]) -> tuple[T | None, BaseException | None, int]:
        """``(result, None, attempts)``, or ``(None, last_error, attempts)``; never raises for failures.

        ``tokens`` is the estimate charged to the tokens-per-minute limiter; ``on_attempt(n)`` is
        called before each backend attempt (n = 1, 2, ...) so the owner can count calls and retries.
        """
        self._bind_loop()
        # A plain loop, not ``AsyncRetrying``: building tenacity's retry machinery for every call showed
        # in the per-call profile at 50 ms latency, and most calls never retry. The policy is tenacity's
        # all the same: stop after ``max_attempts``, retry only what :meth:`is_retryable` accepts,
        # wait :class:`_WaitBackoffOrRetryAfter` (tenacity's full-jitter exponential, or Retry-After).
        attempts = 0
        semaphore = self._semaphore
        while True:
            try:
                await semaphore.acquire(0 if attempts else 1)
                try:
                    if self._request_limiter is not None:
                        await self._request_limiter.acquire()
                    if self._token_limiter is not None:
                        cap = self.config.tokens_per_minute or tokens
                        await self._token_limiter.acquire(min(tokens, cap))
                    attempts += 1
                    on_attempt(attempts)
                    async with asyncio.timeout(self.config.timeout_s):
                        result = await request()
                finally:
                    semaphore.release()
            except Exception as exc:  # noqa: BLE001 - the owner records every failure
                if attempts >= self.config.max_attempts or not self.is_retryable(exc):
                    return None, exc, attempts
                await self._backoff(self._wait(_retry_state(attempts, exc)))
                continue
            return result, None, attempts

    def failure_reason(self, error: BaseException) -> str:
        """``"<ErrorType>: <message>"``, naming the timeout for a bare timeout."""
        reason = str(error) or type(error).__name__
        if isinstance(error, TimeoutError) and not isinstance(error, BackendError):
            reason = f"timed out after {self.config.timeout_s:g}s"
        return f"{type(error).__name__}: {reason}"


class Client:
    """Calls one backend with concurrency, rate limits, retries, timeouts and an optional cache.

    ``sleep`` is the coroutine used between retries (inject a fake clock in tests). ``journal``,
    when given, is called as ``journal(counter, n)`` for every change of :attr:`stats` (a request
    is journalled before it is sent), so a run can keep its counts on disk through a kill.
    ``role`` (``model``/``judge``) names the backend in a :class:`FatalBackendError`.
    """

    def __init__(
        self,
        backend: Backend,
        config: ClientConfig | None = None,
        cache: ResponseCache | None = None,
        *,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        journal: Callable[[str, int], None] | None = None,
        role: str | None = None,
        ledger: UsageLedger | None = None,
    ) -> None:
        self.backend = backend
        self.config = config or ClientConfig()
        self.cache = cache
        self.stats = ClientStats()
        self.role = role
        self._journal = journal
        #: The run's usage ledger: every change of :attr:`stats` is appended as ``<role> <counter> <n>``
        #: and ``stage:<stage> <counter> <n>`` lines, one ``os.write`` per event (a request is
        #: written before it is sent), so the counts survive kill -9.
        self.ledger = ledger
        #: Usage per pipeline stage (:mod:`mirage_bench.usage`), the same counters as :attr:`stats`.
        self.stage_usage: dict[str, dict[str, int]] = {}
        #: The fatal error that stopped this client, once one happened.
        self.fatal: FatalBackendError | None = None
        limit = getattr(backend, "max_concurrency", None)
        self._guard = CallGuard(self.config, backend.is_retryable, sleep=sleep,
                                shared_by=backend if limit else None, limit=limit)

    @property
    def retrying(self) -> int:
        """Calls currently waiting out a backoff before a retry."""
        return self._guard.retrying

    def _bump(self, counter: str, n: int = 1) -> None:
        self._bump_many(((counter, n),))

    def _bump_many(self, counts: tuple[tuple[str, int], ...]) -> None:
        """Add ``counts`` to :attr:`stats` and the stage's usage; journal them (one ledger write in all)."""
        stage = current_stage()
        lines: list[tuple[str, str, int]] = []
        for counter, n in counts:
            setattr(self.stats, counter, getattr(self.stats, counter) + n)
            if not n:
                continue
            if self._journal is not None:
                self._journal(counter, n)
            if self.ledger is not None:
                lines.append((self.role or "client", counter, n))
            if stage is not None:
                add_usage(self.stage_usage, stage, **{counter: n})
                if self.ledger is not None:
                    lines.append((f"stage:{stage}", counter, n))
        if lines:
            self.ledger.add_many(lines)  # type: ignore[union-attr]

    def _count_extra_request(self) -> None:
        self._bump("backend_calls")

    def _raise_fatal(self, error: BaseException) -> None:
        if self.fatal is None:
            self.fatal = FatalBackendError(self.backend.name, error, self.role)
        raise self.fatal

    async def preflight(self) -> None:
        """One cheap request (``backend.preflight()``, when the backend has one) before real work.

        An in-process backend's ``warm_up()`` (loading its model) runs first, outside any timeout.
        Raises :class:`FatalBackendError` for a bad key, an unknown model or a refused request;
        retryable errors are retried like any call; any other failure is left to the real calls.
        """
        warm_up = getattr(self.backend, "warm_up", None)
        if warm_up is not None:  # an in-process model loads here: no request, no timeout
            try:
                await warm_up()
            except BackendError as exc:
                if not exc.retryable:
                    self._raise_fatal(exc)
                raise
        check = getattr(self.backend, "preflight", None)
        if check is None:
            return

        async def request() -> None:
            token = REQUEST_COUNTER.set(self._count_extra_request)
            try:
                await check()
            finally:
                REQUEST_COUNTER.reset(token)

        _, error, _ = await self._guard.run(request, tokens=0.0, on_attempt=self._count_preflight)
        if error is not None:
            if is_fatal(error):
                self._raise_fatal(error)
            logger.warning("preflight of %s failed: %s", self.backend.name, self._guard.failure_reason(error))

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
        self._bump_many((("backend_calls", 1), ("retries", 1)) if attempt > 1 else (("backend_calls", 1),))

    def _count_preflight(self, attempt: int) -> None:
        self._bump_many((("backend_calls", 1), ("preflight_calls", 1)))

    async def _generate(self, messages: list[Message], params: GenerateParams) -> Completion:
        token = REQUEST_COUNTER.set(self._count_extra_request)
        try:
            return await self.backend.generate(messages, params)
        finally:
            REQUEST_COUNTER.reset(token)

    async def call(
        self,
        messages: list[Message],
        params: GenerateParams,
        *,
        prompt_sha256: str | tuple[str, ...] = (),
    ) -> CallResult:
        """Return the completion for ``messages`` (from the cache, or the backend with retries).

        A failure comes back as ``CallResult(ok=False, ...)``, except a fatal one (:func:`is_fatal`),
        which raises :class:`FatalBackendError` (and keeps raising it, sending nothing, afterwards).
        """
        if self.fatal is not None:
            raise self.fatal
        self._bump("calls")
        key = ""
        if self.cache is not None:
            key = self.key_for(messages, params, prompt_sha256)
            hit = self.cache.get(key)
            if hit is not None:
                self._bump("cache_hits")
                return CallResult(ok=True, text=hit.text, completion=hit, cached=True, cache_key=key)
        completion, error, attempts = await self._guard.run(
            lambda: self._generate(messages, params),
            tokens=self._estimated_tokens(messages, params),
            on_attempt=self._count_attempt,
        )
        if error is not None or completion is None:
            self._bump("failures")
            assert error is not None
            if is_fatal(error):
                self._raise_fatal(error)
            return CallResult(ok=False, error=self._guard.failure_reason(error), error_kind=error_kind(error),
                              attempts=attempts, cache_key=key)
        self._bump_many((("input_tokens", completion.usage.input_tokens),
                         ("output_tokens", completion.usage.output_tokens)))
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
