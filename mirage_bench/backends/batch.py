"""Provider batch APIs behind the ordinary backend Protocol (``run --batch``).

:class:`BatchBackend` wraps an ``openai:`` or ``anthropic:`` backend. Its ``generate`` does not call
the provider: it queues the request and awaits its result. When no new request has arrived for
``flush_after_s`` the queue is submitted as one batch (OpenAI Batch API: a JSONL file uploaded with
``files.create(purpose="batch")`` and ``batches.create``; Anthropic Message Batches:
``messages.batches.create``), polled with exponential backoff, and each result is handed back to its
caller as the same :class:`~mirage_bench.backends.base.Completion` the online path returns, or as the
same error. Everything above the backend is unchanged: the client's cache keys (the wrapper has the
inner backend's name and snapshot), parsing, parse retries (a retry is a new request, so it goes into
the next batch) and failure accounting.

Each submitted batch is recorded in ``batches.jsonl`` of the run directory (batch id, provider,
the ``custom_id`` of every request, time) before it is polled; a batch whose results were handed
back is recorded as collected. After a kill, a restarted run finds the requests it sends again under
their ``custom_id`` (a hash of the exact request body) in an uncollected batch and waits for that
batch instead of submitting them again.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import time
from pathlib import Path
from typing import Any

from mirage_bench.backends.base import BackendError, Completion, GenerateParams, Usage
from mirage_bench.fileio import parse_json_line
from mirage_bench.types import Message

log = logging.getLogger(__name__)

#: Provider statuses after which a batch has no more results to give.
_OPENAI_DONE = ("completed", "failed", "expired", "cancelled")


class BatchLog:
    """``batches.jsonl``: one line per submitted batch and one per collected batch (append-only)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    def read(self) -> tuple[dict[str, dict[str, Any]], set[str]]:
        """``(submitted batches by id, ids of collected batches)``; a torn last line is ignored."""
        submitted: dict[str, dict[str, Any]] = {}
        collected: set[str] = set()
        from mirage_bench.fileio import read_jsonl_lenient

        for rec in read_jsonl_lenient(self.path, objects_only=True):
            if rec.get("event") == "submitted":
                submitted[rec["batch_id"]] = rec
            elif rec.get("event") == "collected":
                collected.add(rec["batch_id"])
        return submitted, collected

    def append(self, record: dict[str, Any]) -> None:
        """Append one record and flush it to disk (the id must survive a kill)."""
        import os

        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(record) + "\n")
            fh.flush()
            os.fsync(fh.fileno())


def custom_id(body: dict[str, Any]) -> str:
    """The request's id inside a batch: sha256 of its exact body (64 hex digits, Anthropic's limit)."""
    return hashlib.sha256(json.dumps(body, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


class _OpenAIBatches:
    """OpenAI Batch API through the ``openai`` SDK (``/v1/files``, ``/v1/batches``)."""

    provider = "openai"

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def body(self, messages: list[Message], params: GenerateParams) -> dict[str, Any]:
        mode = (
            "json_schema" if getattr(self.inner, "_structured", "auto") == "auto" else self.inner._structured
        )
        kwargs = self.inner._request(messages, params, mode)
        extra = kwargs.pop("extra_body", None) or {}
        return {**kwargs, **extra}

    async def submit(self, items: list[tuple[str, dict[str, Any]]]) -> str:
        import openai

        from mirage_bench.backends._common import sdk_errors

        lines = "".join(
            json.dumps({"custom_id": cid, "method": "POST", "url": "/v1/chat/completions", "body": body})
            + "\n"
            for cid, body in items
        )
        with sdk_errors(openai, "openai"):
            sdk = self.inner.sdk.get()
            upload = await sdk.files.create(file=("batch.jsonl", lines.encode()), purpose="batch")
            batch = await sdk.batches.create(
                input_file_id=upload.id, endpoint="/v1/chat/completions", completion_window="24h"
            )
        return batch.id

    async def done(self, batch_id: str) -> bool:
        import openai

        from mirage_bench.backends._common import sdk_errors

        with sdk_errors(openai, "openai"):
            batch = await self.inner.sdk.get().batches.retrieve(batch_id)
        return batch.status in _OPENAI_DONE

    async def results(self, batch_id: str) -> dict[str, Completion | BackendError]:
        import openai

        from mirage_bench.backends._common import sdk_errors

        out: dict[str, Completion | BackendError] = {}
        with sdk_errors(openai, "openai"):
            sdk = self.inner.sdk.get()
            batch = await sdk.batches.retrieve(batch_id)
            texts = []
            for file_id in (batch.output_file_id, batch.error_file_id):
                if file_id:
                    texts.append((await sdk.files.content(file_id)).text)
        for text in texts:
            for line in text.splitlines():
                if not line.strip():
                    continue
                row, problem = parse_json_line(line)
                if problem is not None or not isinstance(row, dict) or "custom_id" not in row:
                    # a corrupt line of the provider's output file: its request has no result and is
                    # asked again by the caller, like one of an expired batch
                    log.warning("openai batch %s: an output line is unreadable (%s)", batch_id,
                                problem or "not an object with a custom_id")
                    continue
                response, error = row.get("response") or {}, row.get("error")
                status = int(response.get("status_code") or 0)
                if status == 200 and not error:
                    out[row["custom_id"]] = self._completion(response.get("body") or {})
                else:
                    message = (error or {}).get("message") or json.dumps(response.get("body"))[:300]
                    out[row["custom_id"]] = BackendError(
                        f"openai batch item failed ({status or 'no status'}): {message}",
                        retryable=status in (0, 408, 409, 429) or status >= 500,
                        status_code=status or None,
                    )
        return out  # requests without a line (expired / cancelled batch) are asked again by the caller

    def _completion(self, body: dict[str, Any]) -> Completion:
        from mirage_bench.backends.base import MalformedResponseError

        try:
            choice = body["choices"][0]
            text = choice["message"]["content"]
        except (KeyError, IndexError, TypeError) as exc:
            raise MalformedResponseError(f"openai batch sent a malformed completion: {exc!r}") from exc
        usage = body.get("usage") or {}
        return Completion(
            text=text or "",
            usage=Usage(
                input_tokens=usage.get("prompt_tokens") or 0,
                output_tokens=usage.get("completion_tokens") or 0,
            ),
            finish_reason=choice.get("finish_reason"),
            response_id=body.get("id"),
            model=body.get("model") or self.inner.model,
        )


class _AnthropicBatches:
    """Anthropic Message Batches through the ``anthropic`` SDK (``/v1/messages/batches``)."""

    provider = "anthropic"

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def body(self, messages: list[Message], params: GenerateParams) -> dict[str, Any]:
        kwargs = self.inner._request(messages, params)
        extra = kwargs.pop("extra_body", None) or {}
        return {**kwargs, **extra}

    async def submit(self, items: list[tuple[str, dict[str, Any]]]) -> str:
        import anthropic

        from mirage_bench.backends._common import sdk_errors

        with sdk_errors(anthropic, "anthropic"):
            batch = await self.inner.sdk.get().messages.batches.create(
                requests=[{"custom_id": cid, "params": body} for cid, body in items]
            )
        return batch.id

    async def done(self, batch_id: str) -> bool:
        import anthropic

        from mirage_bench.backends._common import sdk_errors

        with sdk_errors(anthropic, "anthropic"):
            batch = await self.inner.sdk.get().messages.batches.retrieve(batch_id)
        return batch.processing_status == "ended"

    async def results(self, batch_id: str) -> dict[str, Completion | BackendError]:
        import anthropic

        from mirage_bench.backends._common import sdk_errors

        out: dict[str, Completion | BackendError] = {}
        with sdk_errors(anthropic, "anthropic"):
            stream = await self.inner.sdk.get().messages.batches.results(batch_id)
            async for entry in stream:
                result = entry.result
                if result.type == "succeeded":
                    message = result.message
                    text = "".join(
                        getattr(b, "text", "") for b in message.content if getattr(b, "type", None) == "text"
                    )
                    out[entry.custom_id] = Completion(
                        text=text,
                        usage=Usage(
                            input_tokens=message.usage.input_tokens or 0,
                            output_tokens=message.usage.output_tokens or 0,
                        ),
                        finish_reason=message.stop_reason,
                        response_id=message.id,
                        model=message.model or self.inner.model,
                    )
                elif result.type == "errored":
                    error = getattr(result, "error", None)
                    detail = getattr(getattr(error, "error", None), "message", None) or str(error)
                    kind = getattr(getattr(error, "error", None), "type", "") or ""
                    out[entry.custom_id] = BackendError(
                        f"anthropic batch item errored: {detail}",
                        retryable=kind in ("api_error", "overloaded_error", "rate_limit_error"),
                        status_code=400 if kind == "invalid_request_error" else None,
                    )
                else:  # canceled / expired: not answered, ask again
                    out[entry.custom_id] = BackendError(f"anthropic batch item {result.type}", retryable=True)
        return out


def _adapter(inner: Any) -> Any:
    name = str(getattr(inner, "name", ""))
    if name.startswith("openai:"):
        return _OpenAIBatches(inner)
    if name.startswith("anthropic:"):
        return _AnthropicBatches(inner)
    raise ValueError(f"--batch needs an openai: or anthropic: backend, got {name or type(inner).__name__!r}")


class BatchBackend:
    """A backend whose calls go through the provider's batch API (see the module docstring)."""

    def __init__(
        self,
        inner: Any,
        log_path: str | Path,
        *,
        flush_after_s: float = 0.5,
        poll_initial_s: float = 1.0,
        poll_max_s: float = 60.0,
        max_batch: int = 10_000,
    ) -> None:
        self.inner = inner
        self.api = _adapter(inner)
        self.name = inner.name
        self.snapshot = inner.snapshot
        self.smoke_test = getattr(inner, "smoke_test", False)
        self.log = BatchLog(log_path)
        self.flush_after_s = flush_after_s
        self.poll_initial_s = poll_initial_s
        self.poll_max_s = poll_max_s
        self.max_batch = max_batch
        #: Batches submitted through this backend (this process only).
        self.submitted: list[str] = []
        self._pending: dict[str, tuple[dict[str, Any], list[asyncio.Future[Completion]]]] = {}
        self._waiting: dict[str, list[asyncio.Future[Completion]]] = {}
        self._last_arrival = 0.0
        self._flusher: asyncio.Task[None] | None = None
        self._pollers: dict[str, asyncio.Task[None]] = {}
        #: Results already collected in this process, for requests that arrive after their batch ended.
        self._results: dict[str, Completion | BaseException] = {}
        submitted, collected = self.log.read()
        #: ``custom_id -> batch id`` of requests in batches a previous (killed) process never collected.
        self._resumable: dict[str, str] = {
            cid: bid for bid, rec in submitted.items() if bid not in collected for cid in rec["custom_ids"]
        }

    def is_retryable(self, error: BaseException) -> bool:
        """As the wrapped backend."""
        return self.inner.is_retryable(error)

    async def preflight(self) -> None:
        """The wrapped backend's preflight (one cheap online request)."""
        check = getattr(self.inner, "preflight", None)
        if check is not None:
            await check()

    async def aclose(self) -> None:
        """Stop polling and close the wrapped backend's connections."""
        for task in [self._flusher, *self._pollers.values()]:
            if task is not None and not task.done():
                task.cancel()
        close = getattr(self.inner, "aclose", None)
        if close is not None:
            await close()

    async def generate(self, messages: list[Message], params: GenerateParams) -> Completion:
        """Queue the request for the next batch (or join the batch it is already in) and await it."""
        body = self.api.body(messages, params)
        cid = custom_id(body)
        if cid in self._results:
            outcome = self._results.pop(cid)
            if isinstance(outcome, BaseException):
                raise outcome
            return outcome
        future: asyncio.Future[Completion] = asyncio.get_running_loop().create_future()
        if cid in self._resumable:
            batch_id = self._resumable[cid]
            self._waiting.setdefault(cid, []).append(future)
            self._poll(batch_id)
        elif cid in self._waiting:
            self._waiting[cid].append(future)
        else:
            self._pending.setdefault(cid, (body, []))[1].append(future)
            self._last_arrival = time.monotonic()
            if self._flusher is None or self._flusher.done():
                self._flusher = asyncio.ensure_future(self._flush_when_quiet())
        return await future

    async def _flush_when_quiet(self) -> None:
        while self._pending:
            wait = self.flush_after_s - (time.monotonic() - self._last_arrival)
            if wait > 0 and len(self._pending) < self.max_batch:
                await asyncio.sleep(wait)
                continue
            items = list(self._pending.items())[: self.max_batch]
            for cid, _ in items:
                del self._pending[cid]
            try:
                batch_id = await self.api.submit([(cid, body) for cid, (body, _) in items])
            except BaseException as exc:
                for _, (_, futures) in items:
                    for future in futures:
                        if not future.done():
                            future.set_exception(
                                exc if isinstance(exc, Exception) else BackendError(str(exc), retryable=False)
                            )
                if not isinstance(exc, Exception):
                    raise
                continue
            self.log.append(
                {
                    "event": "submitted",
                    "batch_id": batch_id,
                    "provider": self.api.provider,
                    "backend": self.name,
                    "custom_ids": [cid for cid, _ in items],
                    "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                }
            )
            self.submitted.append(batch_id)
            for cid, (_, futures) in items:
                self._waiting.setdefault(cid, []).extend(futures)
                self._resumable[cid] = batch_id
            self._poll(batch_id)

    def _poll(self, batch_id: str) -> None:
        if batch_id not in self._pollers or self._pollers[batch_id].done():
            self._pollers[batch_id] = asyncio.ensure_future(self._collect(batch_id))

    async def _collect(self, batch_id: str) -> None:
        delay = self.poll_initial_s
        try:
            while not await self.api.done(batch_id):
                await asyncio.sleep(delay)
                delay = min(self.poll_max_s, delay * 2)
            results = await self.api.results(batch_id)
        except Exception as exc:  # noqa: BLE001 - every waiter of this batch gets the error
            for cid, bid in list(self._resumable.items()):
                if bid == batch_id:
                    self._resolve(cid, exc)
            return
        for cid, bid in list(self._resumable.items()):
            if bid == batch_id:
                self._resolve(
                    cid,
                    results.get(cid)
                    or BackendError(f"batch {batch_id} returned no result for a request", retryable=True),
                )
        self.log.append({"event": "collected", "batch_id": batch_id})

    def _resolve(self, cid: str, outcome: Completion | BaseException) -> None:
        self._resumable.pop(cid, None)
        waiters = self._waiting.pop(cid, [])
        if not waiters:
            self._results[cid] = outcome  # asked for later (a resumed run's request not sent yet)
        for future in waiters:
            if future.done():
                continue
            if isinstance(outcome, BaseException):
                future.set_exception(outcome)
            else:
                future.set_result(outcome)
