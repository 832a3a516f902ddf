"""Persona generation with the G.8 prompt and any backend; the output is validated like a bundled persona.

Field names of the generated ground truth are normalised only in case and spacing
(``"dietary style"`` -> ``dietary_style``); everything else must already follow the persona rules
(:func:`mirage_bench.personas.validate_personas`), or the result lists the problems.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from mirage_bench.instruments.common import call_and_parse, generation_params
from mirage_bench.instruments.parsing import Parsed, ParseError, load_json_lenient
from mirage_bench.structs import field_values
from mirage_bench.types import STEREOTYPE_TYPES, Message, Persona

if TYPE_CHECKING:  # pragma: no cover
    from mirage_bench.client import Client

#: The G.8 prompt writes the category with a hyphen; :class:`Persona` uses underscores.
_PROMPT_CATEGORY = {
    "stereotypical": "stereotypical",
    "counter_stereotypical": "counter-stereotypical",
    "neutral": "neutral",
}


def _field_name(key: str) -> str:
    return re.sub(r"[\s\-]+", "_", key.strip()).lower()


def parse_generated_persona(text: str, persona_id: str) -> Parsed[Persona]:
    """Parse the G.8 JSON answer into a :class:`Persona` (``source="generated"``).

    >>> out = ('{"ground_truth": {"Name": "Ana", "dietary style": "vegan"},'
    ...        ' "revealed_facts": ["a", "b", "c"],'
    ...        ' "stereotype_type": "counter-stereotypical"}')
    >>> p = parse_generated_persona(out, "g_001").value
    >>> p.stereotype_type, sorted(p.ground_truth)
    ('counter_stereotypical', ['dietary_style', 'name'])
    """
    data, repairs = load_json_lenient(text)
    if not isinstance(data, dict):
        raise ParseError(f"expected a JSON object, got {type(data).__name__}", repairs)
    truth = data.get("ground_truth")
    if not isinstance(truth, dict):
        raise ParseError("'ground_truth' must be an object", repairs)
    stype = data.get("stereotype_type")
    if isinstance(stype, str):
        stype = _field_name(stype)
    try:
        persona = Persona(
            persona_id=persona_id,
            stereotype_type=stype,
            source="generated",
            ground_truth={_field_name(k): v for k, v in truth.items()},
            revealed_facts=data.get("revealed_facts"),
        )
    except ValidationError as exc:
        raise ParseError(
            f"not a valid persona: {exc.errors()[0]['loc']}: {exc.errors()[0]['msg']}", repairs
        ) from exc
    return Parsed(persona, repairs)


@dataclass
class GeneratedPersona:
    """The outcome of one generation: the persona (if parsed) and the validator's problems."""

    status: str
    persona: Persona | None = None
    problems: list[str] = field(default_factory=list)
    error: str | None = None
    raw: str | None = None

    @property
    def valid(self) -> bool:
        """Parsed, of the requested category, and without validator problems."""
        return self.status == "ok" and self.persona is not None and not self.problems

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready view."""
        return {
            "status": self.status,
            "valid": self.valid,
            **field_values(self, only=("problems", "error")),
            "persona": self.persona.model_dump() if self.persona else None,
        }


async def generate_persona(
    client: Client,
    *,
    stereotype_type: str,
    occupation: str,
    persona_id: str,
    seed: int = 0,
    max_tokens: int = 1024,
    max_attempts: int = 3,
) -> GeneratedPersona:
    """Generate one persona with the G.8 prompt and validate it with the persona validator."""
    from mirage_bench.instruments.common import render, template
    from mirage_bench.personas import validate_personas

    if stereotype_type not in STEREOTYPE_TYPES:
        raise ValueError(f"stereotype_type must be one of {STEREOTYPE_TYPES}, got {stereotype_type!r}")
    prompt = render(
        "persona_generation", stereotype_type=_PROMPT_CATEGORY[stereotype_type], occupation=occupation
    ).text.strip()
    outcome = await call_and_parse(
        client,
        [Message(role="user", content=prompt)],
        generation_params(max_tokens, seed),
        (template("persona_generation").sha256,),
        lambda text: parse_generated_persona(text, persona_id),
        max_attempts=max_attempts,
    )
    if outcome.parsed is None:
        return GeneratedPersona(status=outcome.status, error=outcome.error, raw=outcome.text)
    persona: Persona = outcome.parsed.value
    problems = list(validate_personas([persona], complete=False))
    if persona.stereotype_type != stereotype_type:
        problems.append(f"asked for {stereotype_type!r}, got {persona.stereotype_type!r}")
    return GeneratedPersona(status="ok", persona=persona, problems=problems, raw=outcome.text)
