"""``openai:<model>`` and ``openai:<model>@<base_url>``: the OpenAI API or any OpenAI-compatible server.

Structured output: a request with a JSON schema is sent as ``response_format={"type": "json_schema",
...}``. Some compatible servers (llama.cpp's server, measured: HTTP 500 whose message names the
response format) reject that form but accept ``{"type": "json_object", "schema": ...}``; for a
``base_url`` server the backend then resends that request as ``json_object`` and, once that
succeeds, keeps the mode. The fallback happens only when the error *says* the format is
unsupported (a 4xx, or a 5xx whose message names ``response_format``/``json_schema``); a plain
transient 5xx never changes the mode. The resent request is counted
(:func:`~mirage_bench.backends._common.count_extra_request`).

Errors are mapped to the package's types: ``openai.RateLimitError`` (caught before its parent
``APIStatusError``) becomes :class:`RateLimitError` with the server's Retry-After; 5xx, timeouts,
connection failures and malformed bodies (a 200 that is not a completion) are retryable; other 4xx
are not (401/403/404 stop the run: :func:`mirage_bench.client.is_fatal`). The SDK's own retries are
disabled: :class:`mirage_bench.client.Client` owns retries.

Transport: with the ``openai[aiohttp]`` extra installed the SDK runs on its aiohttp transport
(``http_client=openai.DefaultAioHttpClient()``: measured ~1.4x the default httpx transport's
throughput against a local server at 50 ms, see ``docs/engine.md``); without it, on httpx.
One SDK client per event loop (:class:`~mirage_bench.backends._common.LoopBoundClient`). A chat
request goes through that client's ``request`` with options built once per client
(:meth:`OpenAIBackend._chat_options`): what its ``post`` would build, without the per-call cost.
"""

from __future__ import annotations

import math
import os
import re
import sys
from typing import Any, Literal

import orjson

from mirage_bench.backends._common import (
    FlaggedRetry,
    LoopBoundClient,
    count_extra_request,
    messages_payload,
    optional_sampling,
    sdk_errors,
)
from mirage_bench.backends.base import (
    BackendError,
    Completion,
    GenerateParams,
    MalformedResponseError,
    RateLimitError,
    Usage,
)
from mirage_bench.types import Message

#: Key placeholder for keyless local servers (vLLM serve, llama.cpp, Ollama); never sent to api.openai.com.
KEYLESS_PLACEHOLDER = "no-key-needed"

StructuredMode = Literal["auto", "json_schema", "json_object", "none"]

#: An error message saying the structured-output form itself is not supported.
_FORMAT_UNSUPPORTED = re.compile(r"response_format|json_schema|structured output", re.IGNORECASE)


def resolve_api_key(api_key: str | None, base_url: str | None, *, what: str) -> str:
    """The key an OpenAI SDK client sends: ``api_key``, else ``$OPENAI_API_KEY``, else (only for a
    compatible server at ``base_url``) :data:`KEYLESS_PLACEHOLDER`.

    Raises ``ValueError`` starting with ``what`` (``"openai:<model> needs"``) when the OpenAI API
    itself is meant and no key is set; the environment is read here, when a backend is built.
    """
    key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
    if key:
        return key
    if base_url is None:
        raise ValueError(
            f"{what} an API key: set OPENAI_API_KEY (or use openai:<model>@<base_url> "
            "for a local OpenAI-compatible server that needs no key)"
        )
    return KEYLESS_PLACEHOLDER


def backend_name(model: str, base_url: str | None) -> str:
    """``openai:<model>`` or ``openai:<model>@<base_url>``: the spec a backend is named by."""
    return f"openai:{model}" + (f"@{base_url}" if base_url else "")


def bind_endpoint(target: Any, model: str, base_url: str | None, api_key: str | None, *, what: str) -> str:
    """Give ``target`` (a backend of an OpenAI-compatible endpoint) its identity and return its key.

    Sets ``model``, ``base_url``, ``name`` (:func:`backend_name`) and ``snapshot`` (the model asked
    for) on ``target``; the key is :func:`resolve_api_key`'s (``what`` names the caller in its error).
    """
    key = resolve_api_key(api_key, base_url, what=what)
    target.model, target.base_url = model, base_url
    target.name, target.snapshot = backend_name(model, base_url), model
    return key


def format_unsupported(error: BackendError) -> bool:
    """Whether ``error`` says the server does not support ``response_format={"type": "json_schema"}``.

    >>> format_unsupported(BackendError("openai 500: response_format json_schema is not supported",
    ...                                 retryable=True, status_code=500))
    True
    >>> format_unsupported(BackendError("openai 500: internal error", retryable=True, status_code=500))
    False
    """
    if isinstance(error, RateLimitError) or error.status_code is None:
        return False
    if error.status_code not in (400, 415, 422, 500, 501):
        return False
    return bool(_FORMAT_UNSUPPORTED.search(str(error)))


def aiohttp_client() -> Any:
    """``openai.DefaultAioHttpClient()`` when the ``openai[aiohttp]`` extra is installed, else None."""
    try:
        import openai

        return openai.DefaultAioHttpClient()
    except (ImportError, RuntimeError, AttributeError):  # the extra (aiohttp) is not installed
        return None


def http_response_class(sdk: Any) -> type:
    """The ``Response`` class of the HTTP library an openai SDK client runs on (httpx2, or httpx in
    older SDKs): ``cast_to=<it>`` makes the SDK return the raw, read response."""
    for cls in type(sdk._client).__mro__:
        package = cls.__module__.partition(".")[0]
        if cls.__name__ == "AsyncClient" and package in ("httpx", "httpx2"):
            return sys.modules[package].Response  # type: ignore[no-any-return]
    raise RuntimeError(f"openai SDK client on an unknown HTTP client: {type(sdk._client).__name__}")


class OpenAIBackend(FlaggedRetry):
    """A chat-completions backend built on ``openai.AsyncOpenAI``.

    Rate limits, 5xx, timeouts and connection failures are retryable; other 4xx are not.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        structured: StructuredMode = "auto",
        request_timeout_s: float = 600.0,
        extra_body: dict[str, Any] | None = None,
        transport: Literal["auto", "httpx"] = "auto",
    ) -> None:
        key = bind_endpoint(self, model, base_url, api_key, what="openai:<model> needs")
        self.smoke_test = False
        self._api_key = key
        self._structured: StructuredMode = structured
        self._request_timeout_s = request_timeout_s
        self._extra_body = dict(extra_body or {})
        #: ``auto``: the SDK's aiohttp transport when installed; ``httpx``: the SDK's default one.
        self.transport = transport
        #: The AsyncOpenAI client of the running loop.
        self.sdk = LoopBoundClient(self._new_sdk_client)
        #: (SDK client, its chat-completions request options, its raw response class): :meth:`_chat_options`.
        self._chat_template: tuple[Any, Any, type] | None = None

    def _new_sdk_client(self) -> Any:
        import openai

        options: dict[str, Any] = {}
        transport = aiohttp_client() if self.transport == "auto" else None
        if transport is not None:
            options["http_client"] = transport
        return openai.AsyncOpenAI(api_key=self._api_key, base_url=self.base_url, max_retries=0,
                                  timeout=self._request_timeout_s, **options)

    async def preflight(self) -> None:
        """One cheap request that checks the key (and, on api.openai.com, the model) before real work.

        ``GET /models/<model>`` on api.openai.com (401 bad key, 404 unknown model); ``GET /models``
        on a compatible server, whose model names need not match the spec (llama.cpp serves any).
        """
        import openai

        if self.base_url is None:
            with sdk_errors(openai, "openai"):
                await self.sdk.get().models.retrieve(self.model)
            return
        try:
            with sdk_errors(openai, "openai"):
                await self.sdk.get().models.list()
        except BackendError as exc:
            if exc.status_code in (404, 405, 501):  # a server without the models route: the key is unchecked
                return
            raise

    def _response_format(self, schema: dict[str, Any], mode: StructuredMode) -> dict[str, Any] | None:
        if mode == "none":
            return None
        if mode == "json_object":
            return {"type": "json_object", "schema": schema}
        return {"type": "json_schema", "json_schema": {"name": "response", "schema": schema, "strict": False}}

    def _request(
        self, messages: list[Message], params: GenerateParams, mode: StructuredMode
    ) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": messages_payload(messages),
            "temperature": params.temperature,
        }
        # api.openai.com's newer models accept only max_completion_tokens; compatible servers know max_tokens.
        kwargs["max_completion_tokens" if self.base_url is None else "max_tokens"] = params.max_tokens
        kwargs.update(optional_sampling(params))
        # response_format takes an object schema only: an array schema (the self-audit) is sent without
        if params.json_schema is not None and params.json_schema.get("type", "object") == "object":
            fmt = self._response_format(params.json_schema, mode)
            if fmt is not None:
                kwargs["response_format"] = fmt
        kwargs.update(self._extra_body)
        return kwargs

    async def _create(self, body: dict[str, Any]) -> Any:
        """``POST /chat/completions`` through the SDK client's ``request`` (auth, errors, transport).

        Returns the decoded JSON body (a dict). ``chat.completions.create`` would first walk the whole
        body against its TypedDicts (``async_maybe_transform``, measured at ~30 % of this client's
        CPU per call at 50 ms latency) and then build a ``ChatCompletion`` model (~15 %), for a body
        that is plain JSON both ways; ``post(..., cast_to=object)`` sends the same request, and
        ``request(object, options)`` with :meth:`_chat_options` is what that ``post`` does.
        """
        import openai

        # The body encoded by orjson and sent as the request's ``content`` under the SDK's default JSON
        # headers: the SDK's own encoder (stdlib json with a custom class) showed in the per-call profile.
        # orjson would write a NaN/infinite sampling value as null (the server's default, silently)
        # and refuses a lone surrogate: those bodies go to the SDK's encoder, which raises as before.
        payload: dict[str, Any] = {"body": body}
        if all(math.isfinite(v) for v in (body.get("temperature", 0.0), body.get("top_p", 0.0))
               if isinstance(v, float)):
            try:
                payload = {"content": orjson.dumps(body)}
            except (orjson.JSONEncodeError, TypeError):
                pass
        sdk = self.sdk.get()
        with sdk_errors(openai, "openai"):
            if "content" in payload:
                options, response_class = self._chat_options(sdk)
                raw = await sdk.request(response_class, options.model_copy(update=payload))
                response = orjson.loads(raw.content)  # a malformed body: JSONDecodeError -> retryable
            else:
                response = await sdk.post("/chat/completions", cast_to=object, **payload)
        if not isinstance(response, dict):
            raise MalformedResponseError(f"openai sent a non-object body: {type(response).__name__}")
        return response

    def _chat_options(self, sdk: Any) -> tuple[Any, type]:
        """The request options ``sdk.post("/chat/completions", cast_to=..., content=...)`` builds,
        less the content (built once per SDK client, copied with each call's ``content``), and the
        SDK's raw HTTP response class.

        ``post`` is ``request(cast_to, FinalRequestOptions.construct(method="post", url=path, ...))``;
        measured at 50 ms latency / concurrency 64, two of its per-call steps cost ~15 % of the SDK's
        client CPU per request: ``construct`` deep-copies the options' defaults (~25 us), and a
        relative path is parsed and merged into ``base_url`` (two more URL parses, ~0.07 ms with the
        transport's share). The template holds the absolute URL the SDK's ``_prepare_url`` would
        make (``base_url``'s raw path + ``chat/completions``, ``tests/test_backends_openai.py`` pins
        the equality), so ``request`` sends the same method, URL, headers (auth included) and body,
        through the same error mapping and transport. ``cast_to`` is the raw response class (the
        SDK README's "undocumented endpoints" form: the SDK raises its status errors as always and
        returns the read response), decoded by orjson: ``cast_to=object`` built an
        ``AsyncAPIResponse`` and decoded with stdlib json, ~0.04 ms more per call.
        """
        template = self._chat_template
        if template is None or template[0] is not sdk:
            from openai._models import FinalRequestOptions

            base = sdk.base_url
            url = str(base.copy_with(raw_path=base.raw_path + b"chat/completions"))
            options = FinalRequestOptions.construct(method="post", url=url, json_data=None, files=None)
            self._chat_template = template = (sdk, options, http_response_class(sdk))
        return template[1], template[2]

    async def generate(self, messages: list[Message], params: GenerateParams) -> Completion:
        """One chat completion; structured output when ``params.json_schema`` is set."""
        mode: StructuredMode = "json_schema" if self._structured == "auto" else self._structured
        try:
            response = await self._create(self._request(messages, params, mode))
        except BackendError as exc:
            fallback = (
                self._structured == "auto" and self.base_url is not None and params.json_schema is not None
                and params.json_schema.get("type", "object") == "object" and format_unsupported(exc)
            )
            if not fallback:
                raise
            count_extra_request()
            response = await self._create(self._request(messages, params, "json_object"))
            self._structured = "json_object"
        try:
            choices = response["choices"]
            if not choices:
                raise MalformedResponseError("openai returned no choices")
            choice = choices[0]
            message = choice["message"]
            text = message.get("content")
            usage = response.get("usage") or {}
            input_tokens = int(usage.get("prompt_tokens") or 0)
            output_tokens = int(usage.get("completion_tokens") or 0)
        except (AttributeError, TypeError, IndexError, KeyError, ValueError) as exc:
            raise MalformedResponseError(f"openai sent a malformed completion: {exc!r}") from exc
        if not isinstance(text, str):
            if text is not None:
                raise MalformedResponseError(f"openai sent a non-text completion: {type(text).__name__}")
            raise BackendError(f"openai returned no content (refusal: {message.get('refusal')!r})",
                               retryable=False)
        return Completion(
            text=text,
            usage=Usage(input_tokens=input_tokens, output_tokens=output_tokens),
            finish_reason=choice.get("finish_reason"),
            response_id=response.get("id"),
            model=response.get("model") or self.model,
        )

    async def aclose(self) -> None:
        """Close the SDK's HTTP connections (call before the event loop ends to avoid warnings)."""
        await self.sdk.aclose()
