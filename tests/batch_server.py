"""A local server implementing the OpenAI Batch API and Anthropic Message Batches (tests only).

:class:`FakeBatchServer` is :class:`tests.openai_server.FakeOpenAIServer` plus

* OpenAI: ``POST /v1/files`` (multipart upload, ``purpose=batch``), ``POST /v1/batches``,
  ``GET /v1/batches/{id}``, ``GET /v1/files/{id}/content``;
* Anthropic: ``POST /v1/messages/batches``, ``GET /v1/messages/batches/{id}``,
  ``GET /v1/messages/batches/{id}/results``.

A batch ends after ``polls_to_end`` status requests, and never while ``hold`` is set (so a test can
kill a client mid-batch). Each item is answered exactly as the online endpoint would answer the same
body (the same responder, the same token counts). Items answered in batches are counted in
``batch_items``; ``requests`` (online chat/messages bodies) stays untouched by batches.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

from aiohttp import web

from tests.openai_server import FakeOpenAIServer


class FakeBatchServer(FakeOpenAIServer):
    """See the module docstring."""

    def __init__(self, *, polls_to_end: int = 1, **options: Any) -> None:
        super().__init__(**options)
        self.polls_to_end = polls_to_end
        self.hold = threading.Event()
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self.batch_items = 0
        self._polls: dict[str, int] = {}
        self._item_faults = 0
        self._torn_lines = 0

    def tear_lines(self, count: int) -> None:
        """Write the next ``count`` OpenAI output lines torn (half a JSON object): a corrupt file."""
        with self._lock:
            self._torn_lines += count

    def fail_items(self, count: int) -> None:
        """Answer the next ``count`` batch items with a 500 (OpenAI: in the batch's error file)."""
        with self._lock:
            self._item_faults += count

    def _take_fault(self) -> bool:
        with self._lock:
            if self._item_faults > 0:
                self._item_faults -= 1
                return True
            return False

    def add_routes(self, app: web.Application) -> None:
        """The batch endpoints of both providers."""
        app.router.add_post("/v1/files", self._upload)
        app.router.add_get("/v1/files/{file_id}/content", self._file_content)
        app.router.add_post("/v1/batches", self._openai_create)
        app.router.add_get("/v1/batches/{batch_id}", self._openai_retrieve)
        app.router.add_post("/v1/messages/batches", self._anthropic_create)
        app.router.add_get("/v1/messages/batches/{batch_id}", self._anthropic_retrieve)
        app.router.add_get("/v1/messages/batches/{batch_id}/results", self._anthropic_results)

    # -- answers, as the online endpoints give them ---------------------------------------------
    def chat_body(self, body: dict[str, Any], n: int) -> dict[str, Any]:
        return self.chat_completion(body, self.responder(body), f"chatcmpl-b{n}")

    def message_body(self, body: dict[str, Any], n: int) -> dict[str, Any]:
        return self.anthropic_message(body, f"msg_b{n}")

    def _ended(self, batch_id: str) -> bool:
        with self._lock:
            self._polls[batch_id] = self._polls.get(batch_id, 0) + 1
            return not self.hold.is_set() and self._polls[batch_id] >= self.polls_to_end

    def _retrieve(
        self,
        request: web.Request,
        error: Callable[[int, str], web.Response],
        status_key: str,
        finish: Callable[[dict[str, Any]], None],
    ) -> web.Response:
        """A batch's status; once it ends (see :meth:`_ended`) ``finish`` answers its items first."""
        batch = self.batches.get(request.match_info["batch_id"])
        if batch is None:
            return error(404, "no such batch")
        if batch[status_key] == "in_progress" and self._ended(batch["id"]):
            finish(batch)
        return web.json_response(self._public(batch))

    # -- OpenAI -------------------------------------------------------------------------------------
    async def _upload(self, request: web.Request) -> web.Response:
        form = await request.post()
        upload = form["file"]
        data = upload.file.read() if hasattr(upload, "file") else bytes(upload)
        with self._lock:
            file_id = f"file-{len(self.files) + 1}"
            self.files[file_id] = data
        return web.json_response(
            {
                "id": file_id,
                "object": "file",
                "bytes": len(data),
                "created_at": 0,
                "filename": "batch.jsonl",
                "purpose": str(form.get("purpose", "batch")),
                "status": "processed",
            }
        )

    async def _file_content(self, request: web.Request) -> web.Response:
        data = self.files.get(request.match_info["file_id"])
        if data is None:
            return self._error(404, "no such file")
        return web.Response(body=data, content_type="application/octet-stream")

    @staticmethod
    def _public(batch: dict[str, Any]) -> dict[str, Any]:
        """A batch as its provider shows it (without the server's own ``_`` fields)."""
        return {k: v for k, v in batch.items() if not k.startswith("_")}

    def _new_batch(self, prefix: str, fields: dict[str, Any]) -> web.Response:
        """Store a batch ``<prefix><n>`` with ``fields``; the answer shows it."""
        with self._lock:
            batch_id = f"{prefix}{len(self.batches) + 1}"
            self.batches[batch_id] = {"id": batch_id, **fields}
        return web.json_response(self._public(self.batches[batch_id]))

    async def _openai_create(self, request: web.Request) -> web.Response:
        body = await request.json()
        if body.get("input_file_id") not in self.files:
            return self._error(400, "unknown input_file_id")
        return self._new_batch(
            "batch_",
            {
                "object": "batch",
                "endpoint": body["endpoint"],
                "errors": None,
                "input_file_id": body["input_file_id"],
                "completion_window": body["completion_window"],
                "status": "in_progress",
                "output_file_id": None,
                "error_file_id": None,
                "created_at": 0,
                "request_counts": {"total": 0, "completed": 0, "failed": 0},
                "_provider": "openai",
            },
        )

    async def _openai_retrieve(self, request: web.Request) -> web.Response:
        return self._retrieve(request, self._error, "status", self._finish_openai)

    def _finish_openai(self, batch: dict[str, Any]) -> None:
        lines = [
            json.loads(x) for x in self.files[batch["input_file_id"]].decode().splitlines() if x.strip()
        ]
        out, failed = [], []
        for n, line in enumerate(lines):
            status = 500 if self._take_fault() else 200
            body = (
                self.chat_body(line["body"], n)
                if status == 200
                else {"error": {"message": "injected batch item failure"}}
            )
            item = {
                "id": f"req_{n}",
                "custom_id": line["custom_id"],
                "error": None,
                "response": {"status_code": status, "request_id": f"r{n}", "body": body},
            }
            (out if status == 200 else failed).append(item)
        with self._lock:
            self.batch_items += len(out)
            file_id = f"file-out-{batch['id']}"
            encoded = [json.dumps(o) for o in out]
            for i in range(min(self._torn_lines, len(encoded))):
                encoded[i] = encoded[i][: len(encoded[i]) // 2]
            self._torn_lines -= min(self._torn_lines, len(encoded))
            self.files[file_id] = "".join(line + "\n" for line in encoded).encode()
            error_id = None
            if failed:  # OpenAI puts the failed requests in a separate error file
                error_id = f"file-err-{batch['id']}"
                self.files[error_id] = "".join(json.dumps(o) + "\n" for o in failed).encode()
        batch.update(
            status="completed",
            output_file_id=file_id,
            error_file_id=error_id,
            request_counts={"total": len(lines), "completed": len(out), "failed": len(failed)},
        )

    # -- Anthropic ---------------------------------------------------------------------------------
    async def _anthropic_create(self, request: web.Request) -> web.Response:
        body = await request.json()
        return self._new_batch(
            "msgbatch_",
            {
                "type": "message_batch",
                "processing_status": "in_progress",
                "request_counts": {
                    "processing": len(body["requests"]),
                    "succeeded": 0,
                    "errored": 0,
                    "canceled": 0,
                    "expired": 0,
                },
                "created_at": "2026-01-01T00:00:00Z",
                "expires_at": "2026-01-02T00:00:00Z",
                "ended_at": None,
                "cancel_initiated_at": None,
                "archived_at": None,
                "results_url": None,
                "_requests": body["requests"],
                "_provider": "anthropic",
            },
        )

    async def _anthropic_retrieve(self, request: web.Request) -> web.Response:
        return self._retrieve(request, self._anthropic_error, "processing_status", self._finish_anthropic)

    def _finish_anthropic(self, batch: dict[str, Any]) -> None:
        results = [
            {
                "custom_id": r["custom_id"],
                "result": {"type": "succeeded", "message": self.message_body(r["params"], n)},
            }
            for n, r in enumerate(batch["_requests"])
        ]
        with self._lock:
            self.batch_items += len(results)
        batch.update(
            processing_status="ended",
            ended_at="2026-01-01T00:01:00Z",
            _results=results,
            results_url=f"{self.root_url}/v1/messages/batches/{batch['id']}/results",
            request_counts={
                "processing": 0,
                "succeeded": len(results),
                "errored": 0,
                "canceled": 0,
                "expired": 0,
            },
        )

    async def _anthropic_results(self, request: web.Request) -> web.Response:
        batch = self.batches.get(request.match_info["batch_id"])
        if batch is None or "_results" not in batch:
            return self._anthropic_error(404, "results not ready")
        text = "".join(json.dumps(r) + "\n" for r in batch["_results"])
        return web.Response(body=text.encode(), content_type="application/binary")
