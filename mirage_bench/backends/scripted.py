"""``scripted``: a backend that replays programmed or recorded outputs, with injected faults.

It exists for tests and dry runs. Outputs come from a *responder* callable, from a JSONL recording
keyed by the sha256 of the messages, or (by default) from :func:`schema_responder`, which returns a
deterministic schema-valid JSON object when the request carries a JSON schema and a short text
otherwise. Faults are injected at a seeded rate and raised as the very error types the real
backends raise (:class:`~mirage_bench.backends.base.RateLimitError` with Retry-After, a 500
:class:`~mirage_bench.backends.base.BackendError`,
:class:`~mirage_bench.backends.base.BackendTimeoutError`), or returned as a completion whose JSON
is cut short (``malformed_json``).

Whether the *n*-th call for given messages faults depends only on ``(seed, messages, n)``, never
on the order in which concurrent calls arrive, so a run is reproducible.

>>> import asyncio
>>> from mirage_bench.backends.base import GenerateParams
>>> backend = ScriptedBackend(lambda messages, params: "hello")
>>> asyncio.run(backend.generate([Message(role="user", content="hi")], GenerateParams())).text
'hello'
>>> backend.calls
1
"""

from __future__ import annotations

import asyncio
import inspect
import json
import random
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from mirage_bench.backends._common import FlaggedRetry, message_hash
from mirage_bench.backends.base import (
    Backend,
    BackendError,
    BackendTimeoutError,
    Completion,
    GenerateParams,
    RateLimitError,
    Usage,
)
from mirage_bench.types import Message

#: What a responder may return: text, a full completion, or an exception to raise.
ResponderResult = str | Completion | BaseException
Responder = Callable[[list[Message], GenerateParams], ResponderResult | Awaitable[ResponderResult]]

FAULT_KINDS: tuple[str, ...] = ("rate_limit", "server_error", "timeout", "malformed_json")


def example_from_schema(schema: dict[str, Any], rng: random.Random, *, _root: dict[str, Any] | None = None,
                        _depth: int = 0) -> Any:
    """Build a small instance that satisfies ``schema`` (objects, arrays, enums, ``$ref``, ``anyOf``).

    Enum values are drawn with ``rng``, so the output is deterministic for a seeded generator.

    >>> example_from_schema({"type": "object", "properties": {"n": {"type": "integer", "minimum": 2},
    ...                      "tag": {"enum": ["A"]}}, "required": ["n"]}, random.Random(0))
    {'n': 2, 'tag': 'A'}
    """
    root = schema if _root is None else _root
    if _depth > 12:
        raise ValueError("schema nests too deeply (or is recursive) for example_from_schema")
    if "$ref" in schema:
        ref = schema["$ref"]
        if not ref.startswith("#/"):
            raise ValueError(f"only local $ref is supported, got {ref!r}")
        target: Any = root
        for part in ref[2:].split("/"):
            target = target[part]
        return example_from_schema(target, rng, _root=root, _depth=_depth + 1)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return rng.choice(list(schema["enum"]))
    for key in ("anyOf", "oneOf", "allOf"):
        if key in schema:
            options = [s for s in schema[key] if s.get("type") != "null"] or schema[key]
            return example_from_schema(options[0], rng, _root=root, _depth=_depth + 1)
    kind = schema.get("type", "object" if "properties" in schema else "string")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object":
        props: dict[str, Any] = schema.get("properties", {})
        return {
            name: example_from_schema(sub, rng, _root=root, _depth=_depth + 1) for name, sub in props.items()
        }
    if kind == "array":
        low = int(schema.get("minItems", 1))
        high = min(int(schema.get("maxItems", 3)), max(low, 3))  # small examples, within the bound
        count = rng.randint(low, max(low, high))
        items = schema.get("items", {"type": "string"})
        return [example_from_schema(items, rng, _root=root, _depth=_depth + 1) for _ in range(count)]
    if kind in ("integer", "number"):
        value = schema.get("minimum", schema.get("exclusiveMinimum", -1) + 1)
        return int(value) if kind == "integer" else float(value)
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    text = f"scripted text {rng.randrange(10_000):04d}"
    min_length = int(schema.get("minLength", 0))
    return text.ljust(min_length, "x")[: int(schema.get("maxLength", 10_000))]


def schema_responder(messages: list[Message], params: GenerateParams) -> str:
    """Default responder: schema-valid JSON for structured requests, a short fixed text otherwise.

    >>> schema_responder([Message(role="user", content="hi")], GenerateParams())
    'Scripted response b03d228f.'
    """
    digest = message_hash(messages)
    if params.json_schema is not None:
        rng = random.Random(digest)
        return json.dumps(example_from_schema(params.json_schema, rng), ensure_ascii=False)
    return f"Scripted response {digest[:8]}."


def load_recording(path: str | Path) -> dict[str, Completion]:
    """Read a JSONL recording; each line holds a key and an output.

    The key is ``messages_sha256`` (see :func:`message_hash`) or ``messages`` (a list of
    ``{"role", "content"}``); the output is ``text`` or a full ``completion`` object.

    Raises ``ValueError`` naming the file and line of a malformed record.
    """
    table: dict[str, Completion] = {}
    for lineno, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            if "messages_sha256" in record:
                key = str(record["messages_sha256"])
            else:
                key = message_hash([Message.model_validate(m) for m in record["messages"]])
            if "completion" in record:
                completion = Completion.model_validate(record["completion"])
            else:
                completion = Completion(text=str(record["text"]))
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"{path}:{lineno}: bad recording line ({exc})") from exc
        table[key] = completion
    return table


class ScriptedBackend(FlaggedRetry):
    """Replays programmed outputs with injectable latency and seeded faults (see the module docstring).

    ``calls`` counts every call to :meth:`generate` (faulted ones included); ``faults`` counts the
    injected faults by kind.
    """

    def __init__(
        self,
        responder: Responder | None = None,
        *,
        latency_s: float = 0.0,
        fault_rate: float = 0.0,
        fault_kinds: Sequence[str] = FAULT_KINDS,
        seed: int = 0,
        name: str = "scripted",
        snapshot: str = "scripted-v1",
        retry_after_s: float = 0.01,
        smoke_test: bool = False,
    ) -> None:
        unknown = set(fault_kinds) - set(FAULT_KINDS)
        if unknown:
            raise ValueError(f"unknown fault kinds {sorted(unknown)}; choose from {FAULT_KINDS}")
        if not 0.0 <= fault_rate <= 1.0:
            raise ValueError(f"fault_rate must be within [0, 1], got {fault_rate}")
        if fault_rate > 0 and not fault_kinds:
            raise ValueError("fault_rate > 0 needs at least one fault kind")
        self.responder: Responder = responder if responder is not None else schema_responder
        self.latency_s = latency_s
        self.fault_rate = fault_rate
        self.fault_kinds = tuple(fault_kinds)
        self.seed = seed
        self.name = name
        self.snapshot = snapshot
        self.retry_after_s = retry_after_s
        self.smoke_test = smoke_test
        self.calls = 0
        self.faults: Counter[str] = Counter()
        self._seen: Counter[str] = Counter()

    @classmethod
    def from_recording(cls, path: str | Path, **options: Any) -> ScriptedBackend:
        """A backend that answers from a JSONL recording (see :func:`load_recording`).

        Messages absent from the recording raise a non-retryable 404 :class:`BackendError`.
        """
        table = load_recording(path)

        def replay(messages: list[Message], params: GenerateParams) -> ResponderResult:
            key = message_hash(messages)
            if key not in table:
                return BackendError(f"no recorded response for messages {key[:12]} in {path}",
                                    retryable=False, status_code=404)
            return table[key]

        options.setdefault("snapshot", f"recording:{Path(path).name}")
        return cls(replay, **options)

    def _fault_for(self, key: str) -> str | None:
        n = self._seen[key]
        self._seen[key] += 1
        if self.fault_rate <= 0:
            return None
        rng = random.Random(f"{self.seed}:{key}:{n}")
        if rng.random() >= self.fault_rate:
            return None
        return rng.choice(self.fault_kinds)

    async def generate(self, messages: list[Message], params: GenerateParams) -> Completion:
        """Sleep ``latency_s``, maybe inject a fault, else return the responder's output."""
        self.calls += 1
        key = message_hash(messages)
        fault = self._fault_for(key)
        if self.latency_s > 0:
            await asyncio.sleep(self.latency_s)
        if fault == "rate_limit":
            self.faults[fault] += 1
            raise RateLimitError("scripted 429: rate limited", retry_after=self.retry_after_s)
        if fault == "server_error":
            self.faults[fault] += 1
            raise BackendError("scripted 500: internal server error", retryable=True, status_code=500)
        if fault == "timeout":
            self.faults[fault] += 1
            raise BackendTimeoutError("scripted timeout")
        result = self.responder(list(messages), params)
        if inspect.isawaitable(result):
            result = await result
        if isinstance(result, BaseException):
            raise result
        completion = result if isinstance(result, Completion) else Completion(text=str(result))
        if fault == "malformed_json":
            self.faults[fault] += 1
            text = completion.text
            completion = completion.model_copy(update={"text": text[: max(1, len(text) // 2)] + ' ,"'})
        usage = completion.usage
        if usage.input_tokens == 0 and usage.output_tokens == 0:
            usage = Usage(input_tokens=sum(len(m.content) for m in messages) // 4 + 1,
                          output_tokens=len(completion.text) // 4 + 1)
        return completion.model_copy(update={
            "usage": usage,
            "finish_reason": completion.finish_reason or "stop",
            "response_id": completion.response_id or f"scripted-{key[:12]}-{self._seen[key]}",
            "model": completion.model or self.snapshot,
            "smoke_test": completion.smoke_test or self.smoke_test,
        })


class RecordingBackend:
    """Wrap a backend and append every successful completion to a JSONL recording.

    The file can later be replayed with :meth:`ScriptedBackend.from_recording`.
    """

    def __init__(self, inner: Backend, path: str | Path) -> None:
        self.inner = inner
        self.path = Path(path)
        self.name = inner.name
        self.snapshot = inner.snapshot
        self.smoke_test = bool(getattr(inner, "smoke_test", False))

    async def generate(self, messages: list[Message], params: GenerateParams) -> Completion:
        """Call the wrapped backend, then append ``{"messages_sha256", "messages", "completion"}``."""
        completion = await self.inner.generate(messages, params)
        record = {
            "messages_sha256": message_hash(messages),
            "messages": [m.model_dump() for m in messages],
            "completion": completion.model_dump(mode="json"),
        }
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
        return completion

    def is_retryable(self, error: BaseException) -> bool:
        """Delegate to the wrapped backend."""
        return self.inner.is_retryable(error)
