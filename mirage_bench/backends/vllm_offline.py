"""``vllm:<model>``: vLLM's offline ``LLM`` engine, batched, with guided JSON (extra ``vllm``; needs a GPU).

Concurrent ``generate`` calls are collected by an internal queue: the first request of a batch
waits ``batch_window_s`` for company (up to ``max_batch`` requests), then the whole batch goes to
one ``LLM.chat`` call in a worker thread, which is how vLLM's continuous batching pays off from
an asyncio program. A JSON schema becomes
``SamplingParams(structured_outputs=StructuredOutputsParams(json=schema))`` (vLLM >= 0.12), or
``SamplingParams(guided_decoding=GuidedDecodingParams(json=schema))`` on older releases.

vLLM is imported only when the engine is first needed; it is never installed in this project's
test environment (it replaces torch with a CUDA build), so its test runs only where ``vllm`` is
importable and a GPU exists.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from mirage_bench.backends._common import FlaggedRetry, messages_payload, optional_sampling
from mirage_bench.backends.base import BackendError, Completion, GenerateParams, Usage
from mirage_bench.types import Message

#: A queued request: messages, parameters, and the future its caller awaits.
_Pending = tuple[list[Message], GenerateParams, "asyncio.Future[Completion]"]


def vllm_sampling_params(params: GenerateParams) -> Any:
    """Translate :class:`GenerateParams` into ``vllm.SamplingParams`` (structured output when asked)."""
    from vllm import SamplingParams

    kwargs: dict[str, Any] = {"temperature": params.temperature, "max_tokens": params.max_tokens,
                              **optional_sampling(params)}
    if params.json_schema is not None:
        try:
            from vllm.sampling_params import StructuredOutputsParams
        except ImportError:  # vLLM < 0.12
            from vllm.sampling_params import GuidedDecodingParams

            kwargs["guided_decoding"] = GuidedDecodingParams(json=params.json_schema)
        else:
            kwargs["structured_outputs"] = StructuredOutputsParams(json=params.json_schema)
    return SamplingParams(**kwargs)


class VLLMBackend(FlaggedRetry):
    """Offline vLLM with an internal batching queue.

    ``engine`` and ``sampling_factory`` may be injected (a stand-in with vLLM's ``chat`` signature)
    to exercise the batching without vLLM. Offline generation failures are deterministic:
    retryable only if the error says so.
    """

    def __init__(
        self,
        model: str,
        *,
        max_batch: int = 64,
        batch_window_s: float = 0.02,
        engine: Any = None,
        sampling_factory: Callable[[GenerateParams], Any] = vllm_sampling_params,
        **engine_kwargs: Any,
    ) -> None:
        self.model = model
        self.name = f"vllm:{model}"
        self.snapshot = str(engine_kwargs.get("revision") or model)
        self.smoke_test = False
        self.max_batch = max_batch
        self.batch_window_s = batch_window_s
        self.batch_sizes: list[int] = []
        self._engine = engine
        self._engine_kwargs = engine_kwargs
        self._sampling_factory = sampling_factory
        self._queue: asyncio.Queue[_Pending] | None = None
        self._worker: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def _get_engine(self) -> Any:
        if self._engine is None:
            try:
                from vllm import LLM
            except ImportError as exc:
                raise BackendError(
                    "vllm:<model> needs vLLM: pip install 'mirage-bench[vllm]' on a GPU machine",
                    retryable=False,
                ) from exc
            self._engine = LLM(model=self.model, **self._engine_kwargs)
        return self._engine

    def _run_batch(self, batch: list[tuple[list[Message], GenerateParams]]) -> list[Completion]:
        engine = self._get_engine()
        conversations = [messages_payload(messages) for messages, _ in batch]
        sampling = [self._sampling_factory(params) for _, params in batch]
        outputs = engine.chat(conversations, sampling_params=sampling, use_tqdm=False)
        completions = []
        for request_output in outputs:
            best = request_output.outputs[0]
            completions.append(Completion(
                text=best.text,
                usage=Usage(input_tokens=len(request_output.prompt_token_ids or []),
                            output_tokens=len(best.token_ids or [])),
                finish_reason=best.finish_reason,
                response_id=str(request_output.request_id),
                model=self.model,
            ))
        return completions

    async def _drain(self) -> None:
        assert self._queue is not None
        while not self._queue.empty():  # exits when idle; generate() restarts it
            first = self._queue.get_nowait()
            batch = [first]
            deadline = asyncio.get_running_loop().time() + self.batch_window_s
            while len(batch) < self.max_batch:
                remaining = deadline - asyncio.get_running_loop().time()
                if remaining <= 0:
                    break
                try:
                    batch.append(await asyncio.wait_for(self._queue.get(), remaining))
                except TimeoutError:
                    break
            live = [item for item in batch if not item[2].done()]
            if not live:
                continue
            self.batch_sizes.append(len(live))
            try:
                results = await asyncio.to_thread(self._run_batch, [(m, p) for m, p, _ in live])
            except Exception as exc:  # noqa: BLE001 - delivered to every waiting caller
                error = exc if isinstance(exc, BackendError) else BackendError(
                    f"vllm batch failed: {type(exc).__name__}: {exc}", retryable=False)
                for _, _, future in live:
                    if not future.done():
                        future.set_exception(error)
                continue
            for (_, _, future), completion in zip(live, results, strict=True):
                if not future.done():
                    future.set_result(completion)

    async def generate(self, messages: list[Message], params: GenerateParams) -> Completion:
        """Queue the request; it is answered with the batch it joins."""
        loop = asyncio.get_running_loop()
        if self._loop is not loop or self._queue is None:
            self._loop, self._queue, self._worker = loop, asyncio.Queue(), None
        future: asyncio.Future[Completion] = loop.create_future()
        self._queue.put_nowait((list(messages), params, future))
        if self._worker is None or self._worker.done():
            self._worker = loop.create_task(self._drain())
        return await future
