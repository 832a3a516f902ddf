"""``anthropic:<model>``: the Anthropic Messages API (``anthropic.AsyncAnthropic``).

System messages are sent as the separate ``system`` field. A JSON schema is sent as
``output_config={"format": {"type": "json_schema", "schema": ...}}`` (structured outputs); if the
API rejects it with a 400 the backend stops sending it and relies on the prompt's own format
instructions.

Sampling parameters: the installed SDK (anthropic 2.x) no longer exposes ``temperature``/``top_p``,
and Claude Opus 4.7 and later reject them with a 400 ("temperature is deprecated for this
model"). The backend sends them through ``extra_body`` and, on that 400, drops them for this model
and re-sends; such a model then samples at the API default, which the docs flag for the paper's
temperature-0 judge protocol. Errors map as for ``openai:`` (rate limit caught before
``APIStatusError``; 5xx / 529 overload, timeouts and connection failures retryable).
"""

from __future__ import annotations

import os
from typing import Any

from mirage_bench.backends._common import (
    FlaggedRetry,
    LoopBoundClient,
    count_extra_request,
    messages_payload,
    sdk_errors,
)
from mirage_bench.backends.base import BackendError, Completion, GenerateParams, Usage
from mirage_bench.types import Message

#: JSON-schema keywords Anthropic's structured output refuses with a 400 (numeric, string-length and
#: array bounds): dropped from the schema sent, as the official SDKs do; the parser still validates.
UNSUPPORTED_SCHEMA_KEYWORDS: frozenset[str] = frozenset({
    "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minLength", "maxLength",
    "maxItems", "uniqueItems", "minProperties", "maxProperties",
})


def anthropic_schema(schema: Any) -> Any:
    """``schema`` without the keywords Anthropic refuses (``minItems`` above 1 dropped too).

    >>> anthropic_schema({"type": "array", "maxItems": 60, "minItems": 1,
    ...                   "items": {"type": "string", "maxLength": 400}})
    {'type': 'array', 'minItems': 1, 'items': {'type': 'string'}}
    """
    if isinstance(schema, list):
        return [anthropic_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {}
    for key, value in schema.items():
        if key in UNSUPPORTED_SCHEMA_KEYWORDS or (key == "minItems" and isinstance(value, int) and value > 1):
            continue
        out[key] = anthropic_schema(value) if key not in ("enum", "const", "required") else value
    return out


class AnthropicBackend(FlaggedRetry):
    """A Messages API backend built on ``anthropic.AsyncAnthropic``.

    Rate limits, 5xx/overload, timeouts and connection failures are retryable; other 4xx are not.
    """

    def __init__(self, model: str, *, api_key: str | None = None, base_url: str | None = None,
                 request_timeout_s: float = 600.0, send_sampling_params: bool = True) -> None:
        key = api_key if api_key is not None else os.environ.get("ANTHROPIC_API_KEY")
        if not key:
            raise ValueError("anthropic:<model> needs an API key: set ANTHROPIC_API_KEY")
        self.model = model
        self.name = f"anthropic:{model}"
        self.snapshot = model
        self.smoke_test = False
        self.base_url = base_url
        self._api_key = key
        self._timeout = request_timeout_s
        #: Whether temperature/top_p are sent (turned off when the model rejects them).
        self.sends_sampling_params = send_sampling_params
        self._structured = True
        #: The AsyncAnthropic client of the running loop.
        self.sdk = LoopBoundClient(self._new_sdk_client)

    def _new_sdk_client(self) -> Any:
        import anthropic

        return anthropic.AsyncAnthropic(api_key=self._api_key, base_url=self.base_url, max_retries=0,
                                        timeout=self._timeout)

    def _request(self, messages: list[Message], params: GenerateParams) -> dict[str, Any]:
        system = "\n\n".join(m.content for m in messages if m.role == "system")
        turns = messages_payload([m for m in messages if m.role != "system"])
        if not turns:
            raise BackendError("anthropic needs at least one user message", retryable=False, status_code=400)
        kwargs: dict[str, Any] = {"model": self.model, "max_tokens": params.max_tokens, "messages": turns}
        if system:
            kwargs["system"] = system
        if params.stop:
            kwargs["stop_sequences"] = list(params.stop)
        if params.json_schema is not None and self._structured and params.json_schema.get("type") == "object":
            kwargs["output_config"] = {"format": {"type": "json_schema",
                                                  "schema": anthropic_schema(params.json_schema)}}
        extra: dict[str, Any] = {}
        if self.sends_sampling_params:
            extra["temperature"] = params.temperature
            if params.top_p is not None:
                extra["top_p"] = params.top_p
        if extra:
            kwargs["extra_body"] = extra
        return kwargs

    async def preflight(self) -> None:
        """``GET /v1/models/<model>``: a bad key (401) or an unknown model (404) before any real call."""
        import anthropic

        with sdk_errors(anthropic, "anthropic"):
            await self.sdk.get().models.retrieve(self.model)

    async def _create(self, kwargs: dict[str, Any]) -> Any:
        import anthropic

        with sdk_errors(anthropic, "anthropic"):
            return await self.sdk.get().messages.create(**kwargs)

    async def generate(self, messages: list[Message], params: GenerateParams) -> Completion:
        """One Messages API call, adapting once to a model that rejects sampling params or output_config."""
        for adaptation in range(3):
            if adaptation:
                count_extra_request()
            try:
                response = await self._create(self._request(messages, params))
                break
            except BackendError as exc:
                text = str(exc).lower()
                if exc.status_code != 400:
                    raise
                if self.sends_sampling_params and ("temperature" in text or "top_p" in text):
                    self.sends_sampling_params = False
                elif self._structured and params.json_schema is not None and (
                        "output_config" in text or "format" in text or "schema" in text):
                    self._structured = False
                else:
                    raise
        else:  # pragma: no cover - both adaptations used and still failing is re-raised above
            raise BackendError("anthropic request kept failing", retryable=False, status_code=400)
        text = "".join(getattr(block, "text", "") for block in response.content
                       if getattr(block, "type", None) == "text")
        return Completion(
            text=text,
            usage=Usage(input_tokens=response.usage.input_tokens or 0,
                        output_tokens=response.usage.output_tokens or 0),
            finish_reason=response.stop_reason,
            response_id=response.id,
            model=response.model or self.model,
        )

    async def aclose(self) -> None:
        """Close the SDK's HTTP connections (call before the event loop ends to avoid warnings)."""
        await self.sdk.aclose()
