"""``transformers:<path>``: local generation with a transformers causal LM on CPU.

The model is loaded on the first call (in a worker thread, so the event loop keeps running) and
shared by every backend built for the same weights. Generation also runs in a worker thread; one
lock per model serializes calls, because a CPU model gains nothing from concurrent ``generate``
calls and they would fight over the same cores.

Prompting: the tokenizer's chat template when it has one; otherwise (base models such as the
Gemma 3 270M of ``local:gemma``) a plain ``System:/User:/Assistant:`` transcript, cut at the next
``User:``/``System:`` turn the model starts to write.

Structured output: a JSON schema in the parameters is enforced token by token with
:class:`~mirage_bench.backends.constrained.JsonSchemaLogitsProcessor` (``llguidance``, in the
``local`` extra) when it is installed; without it the caller's parser decides. ``schema_caps``
(``max_items``, ``max_length``) tightens a schema's bounds for a small model, and the token budget
is cut to what the (tightened) schema can need.

Loading: a GGUF is de-quantized in Python on every load (16 s idle, over a minute on busy cores);
with ``convert_cache`` (the ``local`` backend sets it) the de-quantized float32 weights and the
tokenizer are saved once as safetensors and later loads read those (the same values).

Stopping: each generation checks a cancel event between tokens (a ``StoppingCriteria``); a call
that times out or is cancelled sets it, so the generation thread really stops within one token
instead of running on behind the retries.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from pathlib import Path
from typing import Any

from mirage_bench.backends._common import FlaggedRetry, messages_payload, plain_transcript, truncate_at_stop
from mirage_bench.backends.base import BackendError, Completion, GenerateParams, Usage
from mirage_bench.types import Message

#: Turn markers that end a base model's answer in a plain transcript.
TRANSCRIPT_STOPS: tuple[str, ...] = ("\nUser:", "\nSystem:", "\nAssistant:")

logger = logging.getLogger(__name__)

_MODELS: dict[tuple[str, str | None], tuple[Any, Any]] = {}
_LOCKS: dict[tuple[str, str | None], threading.Lock] = {}
_REGISTRY_LOCK = threading.Lock()


def _silence_gguf_bar() -> None:
    """transformers' GGUF loader draws a plain ``tqdm`` bar that ``disable_progress_bar`` misses."""
    import functools

    try:
        from tqdm.auto import tqdm
        from transformers import modeling_gguf_pytorch_utils as gguf_utils
    except ImportError:  # pragma: no cover - another transformers layout: the bar stays
        return
    if getattr(gguf_utils, "tqdm", None) is tqdm:
        gguf_utils.tqdm = functools.partial(tqdm, disable=True)


def _model_lock(key: tuple[str, str | None]) -> threading.Lock:
    with _REGISTRY_LOCK:
        return _LOCKS.setdefault(key, threading.Lock())


class TransformersBackend(FlaggedRetry):
    """A CPU ``AutoModelForCausalLM`` + tokenizer (optionally from a ``.gguf`` file in ``path``).

    Local generation errors are deterministic: never flagged retryable.
    """

    def __init__(
        self,
        path: str,
        *,
        gguf_file: str | None = None,
        name: str | None = None,
        snapshot: str | None = None,
        model_id: str | None = None,
        smoke_test: bool = False,
        torch_threads: int | None = None,
        schema_caps: dict[str, int] | None = None,
        constrained: bool = True,
        convert_cache: str | Path | None = None,
    ) -> None:
        target = Path(path)
        if gguf_file is None and target.suffix == ".gguf":
            target, gguf_file = target.parent, target.name
        if not target.exists():
            raise FileNotFoundError(f"transformers model path {str(target)!r} does not exist")
        if gguf_file is not None and not (target / gguf_file).is_file():
            raise FileNotFoundError(f"GGUF file {gguf_file!r} not found in {str(target)!r}")
        self.path = str(target)
        self.gguf_file = gguf_file
        self.name = name or f"transformers:{path}"
        self.snapshot = snapshot or self._default_snapshot()
        self.model_id = model_id or Path(path).name
        self.smoke_test = smoke_test
        self._torch_threads = torch_threads
        self._key = (self.path, self.gguf_file)
        self.schema_caps = dict(schema_caps or {})
        #: Folder keeping a de-quantized copy of a GGUF (see :meth:`_save_converted`); None: never.
        self._convert_cache = convert_cache
        from mirage_bench.backends import constrained as _constrained

        #: Whether JSON schemas are enforced while decoding (``llguidance`` installed and wanted).
        self.constrained = constrained and _constrained.available()

    def _default_snapshot(self) -> str:
        """The commit hash of a hub snapshot folder when there is one, else the resolved path."""
        parts = Path(self.path).resolve().parts
        if "snapshots" in parts and parts.index("snapshots") + 1 < len(parts):
            return parts[parts.index("snapshots") + 1]
        return str(Path(self.path).resolve()) + (f"/{self.gguf_file}" if self.gguf_file else "")

    def _load(self) -> tuple[Any, Any]:
        """Load (once per process) the tokenizer and model; called with the model lock held."""
        if self._key in _MODELS:
            return _MODELS[self._key]
        try:
            import torch
            from transformers import AutoModelForCausalLM, AutoTokenizer
        except ImportError as exc:  # pragma: no cover - depends on the installed extras
            raise ImportError(
                "transformers backends need the 'local' extra: pip install 'mirage-bench[local]'"
            ) from exc
        if self._torch_threads:
            torch.set_num_threads(self._torch_threads)
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # one progress display per run: the engine's
        hf_logging.set_verbosity_error()
        _silence_gguf_bar()
        converted = self._converted_dir()
        if converted is not None and (converted / "config.json").is_file():
            try:
                tokenizer = AutoTokenizer.from_pretrained(str(converted))
                model = AutoModelForCausalLM.from_pretrained(str(converted), dtype=torch.float32)
            except (OSError, ValueError) as exc:  # a damaged conversion: convert again
                logger.warning("converted copy %s unusable (%s); reading the GGUF again", converted, exc)
            else:
                model.eval()
                _MODELS[self._key] = (tokenizer, model)
                return tokenizer, model
        kwargs: dict[str, Any] = {"gguf_file": self.gguf_file} if self.gguf_file else {}
        tokenizer = AutoTokenizer.from_pretrained(self.path, **kwargs)
        model = AutoModelForCausalLM.from_pretrained(self.path, dtype=torch.float32, **kwargs)
        model.eval()
        if converted is not None:
            self._save_converted(converted, tokenizer, model)
        _MODELS[self._key] = (tokenizer, model)
        return tokenizer, model

    def _converted_dir(self) -> Path | None:
        """Where the de-quantized weights of this GGUF are kept (``convert_cache``/<snapshot>), if set."""
        if self._convert_cache is None or self.gguf_file is None:
            return None
        safe = "".join(c if c.isalnum() else "-" for c in self.snapshot)[-40:]
        return Path(self._convert_cache) / safe

    @staticmethod
    def _save_converted(target: Path, tokenizer: Any, model: Any) -> None:
        """Save the de-quantized model (safetensors) and tokenizer under ``target``, atomically.

        Reading a GGUF de-quantizes every tensor in Python (16 s idle, over a minute on busy
        cores); the saved float32 copy (the same values) loads in seconds. A failure is logged and
        only costs the next run the conversion again.
        """
        import os
        import shutil

        from safetensors.torch import save_model

        partial = target.with_name(f"{target.name}.partial-{os.getpid()}")
        try:
            partial.mkdir(parents=True, exist_ok=True)
            # save_pretrained refuses a GGUF-loaded model ("quantized with gguf"); its weights are
            # plain float32 tensors by now, so the state dict is written directly (tied weights once)
            save_model(model, str(partial / "model.safetensors"), metadata={"format": "pt"})
            config = model.config.to_dict()
            config.pop("quantization_config", None)
            (partial / "config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
            tokenizer.save_pretrained(str(partial))
            os.replace(partial, target)
        except Exception as exc:  # noqa: BLE001 - a cache that cannot be written costs time, not results
            logger.warning("could not keep a converted copy at %s: %s", target, exc)
        finally:
            shutil.rmtree(partial, ignore_errors=True)

    def _prompt(self, tokenizer: Any, messages: list[Message]) -> tuple[str, bool]:
        """The prompt text and whether it is a chat-template rendering (else a plain transcript)."""
        if getattr(tokenizer, "chat_template", None):
            payload = messages_payload(messages)
            return tokenizer.apply_chat_template(payload, tokenize=False, add_generation_prompt=True), True
        return plain_transcript(messages), False

    def _schema(self, params: GenerateParams) -> dict[str, Any] | None:
        if params.json_schema is None or not self.constrained:
            return None
        from mirage_bench.backends.constrained import tighten

        if not self.schema_caps:
            return params.json_schema
        caps = self.schema_caps
        return tighten(params.json_schema, max_items=caps.get("max_items"), max_length=caps.get("max_length"),
                       min_items=caps.get("min_items"))

    def _generate_sync(self, messages: list[Message], params: GenerateParams,
                       cancel: threading.Event | None = None) -> Completion:
        import torch
        from transformers import LogitsProcessorList, StoppingCriteria, StoppingCriteriaList

        class _Cancelled(StoppingCriteria):
            def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
                stop = cancel is not None and cancel.is_set()
                return torch.full((input_ids.shape[0],), stop, dtype=torch.bool)

        with _model_lock(self._key):
            if cancel is not None and cancel.is_set():
                raise BackendError(f"{self.name}: generation cancelled before it started", retryable=True)
            tokenizer, model = self._load()
            if self._torch_threads:  # OpenMP's thread count is per calling thread: set it in this one
                torch.set_num_threads(self._torch_threads)
            prompt, templated = self._prompt(tokenizer, messages)
            inputs = tokenizer(prompt, return_tensors="pt", add_special_tokens=not templated)
            prompt_length = int(inputs["input_ids"].shape[1])
            schema = self._schema(params)
            stops: tuple[str, ...] = ()
            if schema is None:
                stops = tuple(params.stop or ()) + (() if templated else TRANSCRIPT_STOPS)
            max_new = params.max_tokens
            processors = LogitsProcessorList()
            if schema is not None:
                from mirage_bench.backends.constrained import JsonSchemaLogitsProcessor, schema_max_chars

                try:  # cut the budget to what the schema can need (1 token >= 1 character)
                    max_new = min(max_new, schema_max_chars(schema) + 8)
                except ValueError:
                    pass
                processors.append(JsonSchemaLogitsProcessor(tokenizer, schema, prompt_length))
            options: dict[str, Any] = {"max_new_tokens": max_new, "do_sample": params.temperature > 0,
                                       "logits_processor": processors,
                                       "stopping_criteria": StoppingCriteriaList([_Cancelled()])}
            if params.temperature > 0:
                options["temperature"] = params.temperature
                if params.top_p is not None:
                    options["top_p"] = params.top_p
                if params.seed is not None:
                    torch.manual_seed(params.seed)
            if stops:
                options["stop_strings"] = list(stops)
                options["tokenizer"] = tokenizer
            if tokenizer.pad_token_id is None and tokenizer.eos_token_id is not None:
                options["pad_token_id"] = tokenizer.eos_token_id
            with torch.inference_mode():
                output = model.generate(**inputs, **options)
        if cancel is not None and cancel.is_set():
            raise BackendError(f"{self.name}: generation cancelled", retryable=True)
        new_tokens = output[0, prompt_length:]
        raw = tokenizer.decode(new_tokens, skip_special_tokens=True)
        text, stopped = truncate_at_stop(raw, stops)
        n_new = int(new_tokens.shape[0])
        eos = tokenizer.eos_token_id
        ended = n_new < max_new or (n_new > 0 and eos is not None and int(new_tokens[-1]) == eos)
        finish = "stop" if stopped or ended else "length"
        return Completion(
            text=text.strip(),
            usage=Usage(input_tokens=prompt_length, output_tokens=n_new),
            finish_reason=finish,
            model=self.model_id,
            smoke_test=self.smoke_test,
        )

    async def generate(self, messages: list[Message], params: GenerateParams) -> Completion:
        """Generate in a worker thread (the first call also loads the model there).

        A cancellation (the client's timeout, Ctrl-C) sets the generation's cancel event, so the
        thread stops at the next token and frees the model for the retry.
        """
        cancel = threading.Event()
        try:
            return await asyncio.to_thread(self._generate_sync, list(messages), params, cancel)
        except (ImportError, FileNotFoundError, OSError) as exc:
            raise BackendError(f"{self.name}: cannot load model: {exc}", retryable=False) from exc
        finally:
            cancel.set()

    #: One generation at a time per model: the client queues calls *before* their timeout starts.
    max_concurrency = 1

    async def warm_up(self) -> None:
        """Load the model (in a worker thread) before the first call: a broken install fails here."""
        def load() -> None:
            with _model_lock(self._key):
                self._load()

        try:
            await asyncio.to_thread(load)
        except (ImportError, FileNotFoundError, OSError) as exc:
            raise BackendError(f"{self.name}: cannot load model: {exc}", retryable=False) from exc
