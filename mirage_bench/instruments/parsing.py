"""Parse and validate the JSON that instruments ask models for, repairing only what needs no guessing.

Allowed repairs (each one is recorded by name, so a record says exactly what was changed):

* ``code_fence`` - the JSON is wrapped in a Markdown code fence (```json ... ```);
* ``trailing_comma`` - a comma directly before ``]`` or ``}`` (outside strings);
* ``top_level_list`` - the judge returned the claims list itself instead of ``{"claims": [...]}``;
* ``label_normalised`` - a label written in another case or with spaces/hyphens
  (``"inferred reasonable"`` -> ``INFERRED_REASONABLE``).

Anything else (prose around the JSON, truncated output, unknown labels, missing fields) is a
:class:`ParseError`: the caller retries with a fresh call, and finally records a parse failure.

>>> parse_judge_output('```json\\n[{"claim": "x", "category": "grounded", "accuracy": "correct",'
...                    ' "reasoning": "r",}]\\n```').repairs
['code_fence', 'trailing_comma', 'top_level_list', 'label_normalised']
>>> parse_self_audit('[{"claim": "Likes cats", "category": "FABRICATED"}]').value[0].category
<Label.FABRICATED: 'FABRICATED'>
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator

from mirage_bench.types import Accuracy, Label

T = TypeVar("T")

_FENCE_RE = re.compile(r"^\s*```[A-Za-z0-9_-]*[ \t]*\n(?P<body>.*?)\n?```\s*$", re.DOTALL)
_LABEL_VALUES = {label.value for label in Label}
_ACCURACY_VALUES = {acc.value for acc in Accuracy}


class ParseError(ValueError):
    """A model output that cannot be parsed without guessing. ``repairs`` lists what was tried."""

    def __init__(self, message: str, repairs: list[str] | None = None) -> None:
        super().__init__(message)
        self.repairs = list(repairs or [])


@dataclass
class Parsed(Generic[T]):
    """A successfully parsed output and the repairs that were needed to parse it."""

    value: T
    repairs: list[str] = field(default_factory=list)


def _strip_trailing_commas(text: str) -> tuple[str, bool]:
    """Remove commas that directly precede ``]`` or ``}``, ignoring everything inside strings."""
    out: list[str] = []
    changed = False
    in_string = False
    escaped = False
    i = 0
    while i < len(text):
        ch = text[i]
        if in_string:
            out.append(ch)
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
            out.append(ch)
        elif ch == ",":
            j = i + 1
            while j < len(text) and text[j] in " \t\r\n":
                j += 1
            if j < len(text) and text[j] in "]}":
                changed = True
            else:
                out.append(ch)
        else:
            out.append(ch)
        i += 1
    return "".join(out), changed


def load_json_lenient(text: str) -> tuple[Any, list[str]]:
    """``json.loads`` after the no-guessing repairs (code fence, trailing commas).

    >>> load_json_lenient('```\\n{"a": [1, 2,],}\\n```')
    ({'a': [1, 2]}, ['code_fence', 'trailing_comma'])
    >>> load_json_lenient('Sure! {"a": 1}')
    Traceback (most recent call last):
    ...
    mirage_bench.instruments.parsing.ParseError: not valid JSON: Expecting value (line 1 column 1)
    """
    repairs: list[str] = []
    body = text.strip()
    match = _FENCE_RE.match(body)
    if match:
        body = match.group("body").strip()
        repairs.append("code_fence")
    try:
        return json.loads(body), repairs
    except json.JSONDecodeError:
        pass
    fixed, changed = _strip_trailing_commas(body)
    if changed:
        try:
            value = json.loads(fixed)
        except json.JSONDecodeError as exc:
            raise ParseError(
                f"not valid JSON: {exc.msg} (line {exc.lineno} column {exc.colno})",
                repairs + ["trailing_comma"],
            ) from exc
        return value, repairs + ["trailing_comma"]
    try:
        json.loads(body)
    except json.JSONDecodeError as exc:
        raise ParseError(
            f"not valid JSON: {exc.msg} (line {exc.lineno} column {exc.colno})", repairs
        ) from exc
    raise AssertionError("unreachable")  # pragma: no cover


def normalise_enum(value: Any, allowed: set[str]) -> tuple[Any, bool]:
    """Map a label differing only in case, spaces or hyphens onto an allowed value.

    >>> normalise_enum(" Inferred-Stereotype ", {"INFERRED_STEREOTYPE"})
    ('INFERRED_STEREOTYPE', True)
    >>> normalise_enum("REASONABLE", {"INFERRED_REASONABLE"})
    ('REASONABLE', False)
    """
    if not isinstance(value, str) or value in allowed:
        return value, False
    candidate = re.sub(r"[\s\-]+", "_", value.strip()).upper()
    if candidate in allowed:
        return candidate, True
    return value, False


class JudgeClaim(BaseModel):
    """One claim extracted and labelled by the judge.

    The output contract (``prompts/judge_output_format.txt``) names the taxonomy label
    ``category``; ``label`` is accepted as the same field.
    """

    model_config = ConfigDict(extra="ignore")

    claim: str
    label: Label = Field(validation_alias=AliasChoices("category", "label"))
    accuracy: Accuracy
    reasoning: str = ""

    @field_validator("claim")
    @classmethod
    def _a_real_claim(cls, value: str) -> str:
        """Reject a blank claim and the output contract's own ``<...>`` placeholder copied back.

        A weak judge may echo the example object of ``judge_output_format`` (measured with the
        Gemma 3 270M base model behind llama.cpp's server); such text must never reach a score.
        """
        text = value.strip()
        if not text:
            raise ValueError("claim is empty")
        if text.startswith("<") and text.endswith(">"):
            raise ValueError(f"claim {text[:60]!r} is the output format's placeholder, not a claim")
        return value


class JudgeOutput(BaseModel):
    """The judge's whole answer: ``{"claims": [...]}``."""

    model_config = ConfigDict(extra="ignore")

    claims: list[JudgeClaim]


class AuditClaim(BaseModel):
    """One claim of a model's self-audit (G.6)."""

    model_config = ConfigDict(extra="ignore")

    claim: str
    category: Label
    reasoning: str = ""


class ProbeInference(BaseModel):
    """One inference listed under the Probe prompt (G.5)."""

    model_config = ConfigDict(extra="ignore")

    claim: str
    type: str
    reasoning: str = ""


#: The five fields of the Accum memory (G.7), in order.
MEMORY_FIELDS: tuple[str, ...] = (
    "observed",
    "preferences",
    "personality_traits",
    "demographics",
    "predictions",
)


class Memory(BaseModel):
    """The structured Accum memory: five lists of short strings."""

    model_config = ConfigDict(extra="forbid")

    observed: list[str] = Field(default_factory=list)
    preferences: list[str] = Field(default_factory=list)
    personality_traits: list[str] = Field(default_factory=list)
    demographics: list[str] = Field(default_factory=list)
    predictions: list[str] = Field(default_factory=list)

    @field_validator("*", mode="before")
    @classmethod
    def _items_as_text(cls, value: Any) -> Any:
        """Scalars become strings; objects become compact JSON text (no meaning is guessed)."""
        if not isinstance(value, list):
            return value
        out = []
        for item in value:
            if isinstance(item, str):
                out.append(item)
            elif isinstance(item, dict | list):
                out.append(json.dumps(item, sort_keys=True, ensure_ascii=False))
            elif item is None:
                continue
            else:
                out.append(str(item))
        return out

    def entries(self) -> list[tuple[str, str]]:
        """All ``(field, entry)`` pairs, in field order."""
        return [(name, entry) for name in MEMORY_FIELDS for entry in getattr(self, name)]


def _format_validation(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:5]:
        loc = ".".join(str(p) for p in err["loc"])
        parts.append(f"{loc}: {err['msg']}")
    more = f" (+{exc.error_count() - 5} more)" if exc.error_count() > 5 else ""
    return "schema violation: " + "; ".join(parts) + more


def _normalise_items(items: list[Any], keys: dict[str, set[str]]) -> bool:
    changed = False
    for item in items:
        if not isinstance(item, dict):
            continue
        for key, allowed in keys.items():
            if key in item:
                item[key], did = normalise_enum(item[key], allowed)
                changed = changed or did
    return changed


def parse_judge_output(text: str) -> Parsed[JudgeOutput]:
    """Parse the judge's JSON output into :class:`JudgeOutput`, or raise :class:`ParseError`."""
    data, repairs = load_json_lenient(text)
    if isinstance(data, list):
        data = {"claims": data}
        repairs.append("top_level_list")
    if not isinstance(data, dict) or not isinstance(data.get("claims"), list):
        raise ParseError("expected an object with a 'claims' list", repairs)
    if _normalise_items(
        data["claims"], {"category": _LABEL_VALUES, "label": _LABEL_VALUES, "accuracy": _ACCURACY_VALUES}
    ):
        repairs.append("label_normalised")
    try:
        return Parsed(JudgeOutput.model_validate(data), repairs)
    except ValidationError as exc:
        raise ParseError(_format_validation(exc), repairs) from exc


_AUDIT_ADAPTER = TypeAdapter(list[AuditClaim])
_PROBE_ADAPTER = TypeAdapter(list[ProbeInference])


def _parse_array(text: str, adapter: TypeAdapter[Any], enum_keys: dict[str, set[str]]) -> Parsed[Any]:
    data, repairs = load_json_lenient(text)
    if not isinstance(data, list):
        raise ParseError(f"expected a JSON array, got {type(data).__name__}", repairs)
    if enum_keys and _normalise_items(data, enum_keys):
        repairs.append("label_normalised")
    try:
        return Parsed(adapter.validate_python(data), repairs)
    except ValidationError as exc:
        raise ParseError(_format_validation(exc), repairs) from exc


def parse_self_audit(text: str) -> Parsed[list[AuditClaim]]:
    """Parse a G.6 self-audit: a JSON array of ``{claim, category, reasoning}``."""
    return _parse_array(text, _AUDIT_ADAPTER, {"category": _LABEL_VALUES})


def parse_probe(text: str) -> Parsed[list[ProbeInference]]:
    """Parse a G.5 Probe answer: a JSON array of ``{claim, type, reasoning}``."""
    return _parse_array(text, _PROBE_ADAPTER, {})


def parse_memory(text: str) -> Parsed[Memory]:
    """Parse an Accum memory object with the five fields (``directly_observed`` is read as ``observed``).

    >>> parse_memory('{"directly_observed": ["cat"], "preferences": [], "personality_traits": [],'
    ...              ' "demographics": [], "predictions": [3]}').value.predictions
    ['3']
    """
    data, repairs = load_json_lenient(text)
    if not isinstance(data, dict):
        raise ParseError(f"expected a JSON object, got {type(data).__name__}", repairs)
    if "directly_observed" in data and "observed" not in data:
        data["observed"] = data.pop("directly_observed")
    missing = [name for name in MEMORY_FIELDS if name not in data]
    if missing:
        raise ParseError(f"memory lacks field(s) {missing}", repairs)
    try:
        return Parsed(Memory.model_validate(data), repairs)
    except ValidationError as exc:
        raise ParseError(_format_validation(exc), repairs) from exc


def _enum_schema(values: list[str]) -> dict[str, Any]:
    return {"type": "string", "enum": values}


#: Bounds of the judge and self-audit schemas: generous for a frontier model (the paper's judged
#: responses hold 5-15 claims; a claim is one sentence), tight enough that every constrained decoder,
#: local or behind a server, terminates. They bound generation only: the parser does not refuse a
#: longer answer from a server that ignored the schema.
SCHEMA_MAX_CLAIMS = 60
SCHEMA_MAX_CLAIM_CHARS = 400
SCHEMA_MAX_REASONING_CHARS = 800


def claim_item_schema(fields: dict[str, dict[str, Any]], *, claim_chars: int = SCHEMA_MAX_CLAIM_CHARS,
                      reasoning_chars: int = SCHEMA_MAX_REASONING_CHARS) -> dict[str, Any]:
    """One claim object: ``claim``, the enum ``fields``, ``reasoning``, each string bounded."""
    properties: dict[str, Any] = {"claim": {"type": "string", "minLength": 1, "maxLength": claim_chars}}
    properties.update(fields)
    properties["reasoning"] = {"type": "string", "maxLength": reasoning_chars}
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def judge_output_schema(*, max_claims: int = SCHEMA_MAX_CLAIMS, claim_chars: int = SCHEMA_MAX_CLAIM_CHARS,
                        reasoning_chars: int = SCHEMA_MAX_REASONING_CHARS) -> dict[str, Any]:
    """The judge's ``{"claims": [...]}`` schema with the given bounds."""
    item = claim_item_schema(
        {"category": _enum_schema([label.value for label in Label]),
         "accuracy": _enum_schema([acc.value for acc in Accuracy])},
        claim_chars=claim_chars, reasoning_chars=reasoning_chars,
    )
    return {
        "type": "object",
        "properties": {"claims": {"type": "array", "items": item, "maxItems": max_claims}},
        "required": ["claims"],
        "additionalProperties": False,
    }


def self_audit_schema(*, max_claims: int = SCHEMA_MAX_CLAIMS, claim_chars: int = SCHEMA_MAX_CLAIM_CHARS,
                      reasoning_chars: int = SCHEMA_MAX_REASONING_CHARS) -> dict[str, Any]:
    """The G.6 self-audit's JSON array of ``{claim, category, reasoning}`` with the given bounds."""
    item = claim_item_schema({"category": _enum_schema([label.value for label in Label])},
                             claim_chars=claim_chars, reasoning_chars=reasoning_chars)
    return {"type": "array", "items": item, "maxItems": max_claims}


#: JSON schema passed to the judge backend (structured output where supported).
JUDGE_OUTPUT_SCHEMA: dict[str, Any] = judge_output_schema()
#: JSON schema of the self-audit (a top-level array: sent where the backend can constrain arrays).
SELF_AUDIT_SCHEMA: dict[str, Any] = self_audit_schema()

#: JSON schema for the Accum memory.
MEMORY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {name: {"type": "array", "items": {"type": "string"}} for name in MEMORY_FIELDS},
    "required": list(MEMORY_FIELDS),
    "additionalProperties": False,
}
