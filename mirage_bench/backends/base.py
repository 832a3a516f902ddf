"""The backend Protocol: one async ``generate`` call, and a way to say whether an error is retryable.

Backends are deliberately tiny. Retries, rate limits, concurrency, timeouts and caching all live
in :mod:`mirage_bench.client`, never in a backend.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from mirage_bench.types import Message


class GenerateParams(BaseModel):
    """Semantic generation parameters: these (and only these) enter the cache key."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    temperature: float = 0.0
    max_tokens: int = 1024
    top_p: float | None = None
    seed: int | None = None
    #: A JSON schema the output must follow, when the backend supports structured output.
    json_schema: dict[str, Any] | None = None
    stop: tuple[str, ...] | None = None


class Usage(BaseModel):
    """Token usage of one completion."""

    input_tokens: int = 0
    output_tokens: int = 0


class Completion(BaseModel):
    """What a backend returns for one call."""

    text: str
    usage: Usage = Field(default_factory=Usage)
    finish_reason: str | None = None
    response_id: str | None = None
    #: The exact model snapshot that answered, when the provider reports it.
    model: str | None = None
    #: True when a smoke-test model (e.g. the embedded ``local`` base model) produced this text.
    smoke_test: bool = False


class BackendError(Exception):
    """An error raised by a backend, with an explicit retryability flag and optional Retry-After."""

    def __init__(self, message: str, *, retryable: bool, retry_after: float | None = None,
                 status_code: int | None = None) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.retry_after = retry_after
        self.status_code = status_code


class RateLimitError(BackendError):
    """HTTP 429 or a provider's rate-limit error: always retryable; honour ``retry_after``."""

    def __init__(self, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(message, retryable=True, retry_after=retry_after, status_code=429)


class BackendTimeoutError(BackendError):
    """The provider or the transport timed out: retryable."""

    def __init__(self, message: str) -> None:
        super().__init__(message, retryable=True)


class MalformedResponseError(BackendError):
    """The server answered (often HTTP 200) with a body that is not a valid completion: retryable."""

    def __init__(self, message: str) -> None:
        super().__init__(message, retryable=True)


class BackendConnectionError(BackendError):
    """The server could not be reached or dropped the connection: retryable."""

    def __init__(self, message: str) -> None:
        super().__init__(message, retryable=True)


@runtime_checkable
class Backend(Protocol):
    """A model backend. ``name`` is the spec it was built from (e.g. ``openai:gpt-4o-mini``)."""

    name: str
    #: The model snapshot used in cache keys (provider snapshot id, file sha256, ...).
    snapshot: str

    async def generate(self, messages: list[Message], params: GenerateParams) -> Completion:
        """Produce one completion. Raise :class:`BackendError` (or subclasses) on failure."""
        ...

    def is_retryable(self, error: BaseException) -> bool:
        """Whether ``error`` (raised by :meth:`generate`) is worth retrying."""
        ...
