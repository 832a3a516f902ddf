"""Constrained JSON decoding for the in-process transformers backend, through ``llguidance``.

``llguidance`` (Microsoft's grammar engine, also behind vLLM's and llama.cpp's structured output)
compiles a JSON schema into a token-level matcher; :class:`JsonSchemaLogitsProcessor` masks every
token the schema does not allow at each step and stops at the end of the JSON value, so the output
always parses - provided it fits the token budget, which :func:`schema_max_chars` bounds (schemas
given here carry ``maxItems``/``maxLength``, see :mod:`mirage_bench.instruments.parsing`).

It is an optional dependency of the ``local`` extra; without it the backend generates freely and
the caller's parser decides (parse failures are counted, never scored).

>>> schema_max_chars({"type": "array", "maxItems": 2, "items": {"type": "string", "maxLength": 10}})
27
"""

from __future__ import annotations

import copy
import json
import threading
from typing import Any

_TOKENIZERS: dict[int, Any] = {}
_LOCK = threading.Lock()


def available() -> bool:
    """Whether ``llguidance`` is installed."""
    import importlib.util

    return importlib.util.find_spec("llguidance") is not None


def schema_max_chars(schema: dict[str, Any]) -> int:
    """An upper bound on the characters of compact JSON valid under ``schema`` (bounded schemas only).

    Raises ``ValueError`` for an unbounded string or array, which no token budget can be sized for.
    """
    if "enum" in schema:
        return max(len(json.dumps(v)) for v in schema["enum"])
    kind = schema.get("type", "object" if "properties" in schema else "string")
    if kind == "object":
        props = schema.get("properties", {})
        inner = sum(len(json.dumps(name)) + 1 + schema_max_chars(sub) for name, sub in props.items())
        return 2 + inner + max(0, len(props) - 1)
    if kind == "array":
        if "maxItems" not in schema:
            raise ValueError("array without maxItems")
        n = int(schema["maxItems"])
        return 2 + n * schema_max_chars(schema.get("items", {})) + max(0, n - 1)
    if kind == "string":
        if "maxLength" not in schema:
            raise ValueError("string without maxLength")
        return 2 + int(schema["maxLength"])
    if kind in ("integer", "number"):
        return 24
    if kind == "boolean":
        return 5
    return 4


def tighten(schema: dict[str, Any], *, max_items: int | None = None, max_length: int | None = None,
            min_items: int | None = None) -> dict[str, Any]:
    """A copy of ``schema`` with every ``maxItems``/``maxLength`` lowered to at most the given caps
    (and every array's ``minItems`` raised to ``min_items``).

    >>> tighten({"type": "array", "maxItems": 60, "items": {"type": "string", "maxLength": 400}},
    ...         max_items=5, max_length=100, min_items=1)
    {'type': 'array', 'maxItems': 5, 'items': {'type': 'string', 'maxLength': 100}, 'minItems': 1}
    """
    out = copy.deepcopy(schema)

    def visit(node: Any) -> None:
        if isinstance(node, dict):
            if max_items is not None and node.get("type") == "array":
                node["maxItems"] = min(int(node.get("maxItems", max_items)), max_items)
            if min_items is not None and node.get("type") == "array":
                node["minItems"] = max(int(node.get("minItems", 0)), min_items)
            if max_length is not None and node.get("type") == "string" and "enum" not in node:
                node["maxLength"] = min(int(node.get("maxLength", max_length)), max_length)
            for value in node.values():
                visit(value)
        elif isinstance(node, list):
            for value in node:
                visit(value)

    visit(out)
    return out


def _ll_tokenizer(tokenizer: Any) -> Any:
    """The llguidance tokenizer for a transformers tokenizer (built once per tokenizer, ~1 s)."""
    import llguidance.hf

    with _LOCK:
        key = id(tokenizer)
        if key not in _TOKENIZERS:
            _TOKENIZERS[key] = llguidance.hf.from_tokenizer(tokenizer)
        return _TOKENIZERS[key]


class JsonSchemaLogitsProcessor:
    """A transformers ``LogitsProcessor`` that allows only tokens continuing JSON valid under a schema.

    Compact JSON (no free whitespace, so a small model cannot pad forever). After the value is
    complete only EOS is allowed. Works on batch size 1 (the backend generates one sequence).
    """

    def __init__(self, tokenizer: Any, schema: dict[str, Any], prompt_length: int) -> None:
        import llguidance

        grammar = llguidance.LLMatcher.grammar_from_json_schema(
            schema, defaults={"whitespace_flexible": False}
        )
        self._matcher = llguidance.LLMatcher(_ll_tokenizer(tokenizer), grammar, log_level=0)
        if self._matcher.is_error():
            raise ValueError(f"schema not usable for constrained decoding: {self._matcher.get_error()}")
        self._prompt_length = prompt_length
        self._consumed = 0
        self._eos = tokenizer.eos_token_id

    @property
    def accepting(self) -> bool:
        """Whether the text generated so far is a complete JSON value under the schema."""
        return bool(self._matcher.is_accepting())

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        import numpy as np
        import torch

        generated = input_ids[0, self._prompt_length:].tolist()
        for token in generated[self._consumed:]:
            self._matcher.consume_token(int(token))
        self._consumed = len(generated)
        if self._matcher.is_stopped() or self._matcher.is_error():
            allowed = torch.zeros(scores.shape[-1], dtype=torch.bool)
            if self._eos is not None:
                allowed[self._eos] = True
        else:
            mask = np.frombuffer(self._matcher.compute_bitmask(), dtype=np.uint8)
            bits = np.unpackbits(mask, bitorder="little")[: scores.shape[-1]]
            allowed = torch.from_numpy(bits.astype(bool))
            missing = scores.shape[-1] - allowed.shape[0]
            if missing > 0:
                allowed = torch.cat([allowed, torch.zeros(missing, dtype=torch.bool)])
        return scores.masked_fill(~allowed.unsqueeze(0), float("-inf"))
