"""``llamacpp:<file.gguf>``: in-process llama-cpp-python (optional; not installed by default).

PyPI ships llama-cpp-python only as an sdist (a ~7-minute compile on 2 cores, measured in
the development machine's stack notes), so it is not part of any extra; install it yourself
(``pip install llama-cpp-python``) to get ~65 tok/s instead of transformers' ~9 tok/s on the
embedded GGUF. A JSON schema is enforced with ``response_format={"type": "json_object",
"schema": ...}`` (grammar-constrained sampling). Generation runs in a worker thread under one lock
per model. With ``chat_format="gemma"`` system messages would be dropped by the format, so they
are folded into the first user turn (``merge_system``).
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

from mirage_bench.backends._common import FlaggedRetry, messages_payload, optional_sampling
from mirage_bench.backends.base import BackendError, Completion, GenerateParams, Usage
from mirage_bench.fileio import file_sha256
from mirage_bench.types import Message


def fold_system_into_user(messages: list[Message]) -> list[dict[str, str]]:
    """Merge system messages into the first user message (for chat formats that drop them).

    >>> fold_system_into_user([Message(role="system", content="S"), Message(role="user", content="U")])
    [{'role': 'user', 'content': 'S\\n\\nU'}]
    """
    system = "\n\n".join(m.content for m in messages if m.role == "system")
    turns = messages_payload([m for m in messages if m.role != "system"])
    if system:
        if turns and turns[0]["role"] == "user":
            turns[0] = {"role": "user", "content": f"{system}\n\n{turns[0]['content']}"}
        else:
            turns.insert(0, {"role": "user", "content": system})
    return turns


class LlamaCppBackend(FlaggedRetry):
    """A GGUF model run in-process by llama-cpp-python.

    Its generation errors are deterministic: not retryable unless flagged so.
    """

    def __init__(self, model_path: str, *, n_ctx: int = 4096, n_threads: int | None = None,
                 chat_format: str | None = None, merge_system: bool | None = None,
                 snapshot: str | None = None, smoke_test: bool = False, **llama_kwargs: Any) -> None:
        path = Path(model_path)
        if not path.is_file():
            raise FileNotFoundError(f"GGUF file {model_path!r} does not exist")
        self.path = path
        self.name = f"llamacpp:{model_path}"
        self.snapshot = snapshot or file_sha256(path)
        self.smoke_test = smoke_test
        self.merge_system = chat_format == "gemma" if merge_system is None else merge_system
        self._kwargs = {"n_ctx": n_ctx, "n_threads": n_threads, "chat_format": chat_format, "verbose": False,
                        **llama_kwargs}
        self._llama: Any = None
        self._lock = threading.Lock()

    def _generate_sync(self, messages: list[Message], params: GenerateParams) -> Completion:
        with self._lock:
            if self._llama is None:
                try:
                    from llama_cpp import Llama
                except ImportError as exc:
                    raise BackendError(
                        "llamacpp:<file.gguf> needs llama-cpp-python: pip install llama-cpp-python",
                        retryable=False,
                    ) from exc
                self._llama = Llama(model_path=str(self.path), **self._kwargs)
            payload = fold_system_into_user(messages) if self.merge_system else messages_payload(messages)
            kwargs: dict[str, Any] = {"messages": payload, "temperature": params.temperature,
                                      "max_tokens": params.max_tokens, **optional_sampling(params)}
            if params.json_schema is not None:
                kwargs["response_format"] = {"type": "json_object", "schema": params.json_schema}
            try:
                response = self._llama.create_chat_completion(**kwargs)
            except ValueError as exc:  # e.g. the prompt exceeds the context window
                raise BackendError(f"llama.cpp rejected the request: {exc}", retryable=False,
                                   status_code=400) from exc
        choice = response["choices"][0]
        usage = response.get("usage") or {}
        return Completion(
            text=choice["message"].get("content") or "",
            usage=Usage(input_tokens=usage.get("prompt_tokens", 0),
                        output_tokens=usage.get("completion_tokens", 0)),
            finish_reason=choice.get("finish_reason"),
            response_id=response.get("id"),
            model=self.path.name,
            smoke_test=self.smoke_test,
        )

    async def generate(self, messages: list[Message], params: GenerateParams) -> Completion:
        """Generate in a worker thread (the first call also loads the model)."""
        return await asyncio.to_thread(self._generate_sync, list(messages), params)
