"""Probe: explicit inference elicitation (G.5), once per persona at temperature 0.7.

The listed inferences are then labelled by the judge like a Task response (the request shown to
the judge is the Probe prompt itself); the Probe's headline figure is the judge's *incorrect
rate*, the share of claims whose accuracy is INCORRECT (the paper reports 0.7%-4.6%).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mirage_bench.instruments.common import call_and_parse, generation_params
from mirage_bench.instruments.parsing import parse_probe
from mirage_bench.instruments.records import ProbeItem, ProbeRecord
from mirage_bench.types import Accuracy, Message, Persona
from mirage_bench.usage import stage as usage_stage

if TYPE_CHECKING:  # pragma: no cover
    from mirage_bench.client import Client


def probe_message(persona: Persona) -> Message:
    """The G.5 user prompt for one persona."""
    from mirage_bench.instruments.common import render

    facts = persona.revealed_facts
    return Message(
        role="user", content=render("probe", fact_1=facts[0], fact_2=facts[1], fact_3=facts[2]).text.strip()
    )


def inferences_as_text(items: list[ProbeItem]) -> str:
    """The Probe inferences as the text shown to the judge: one ``- claim`` line each.

    >>> inferences_as_text([ProbeItem(claim="Owns a cat", type="directly_stated")])
    '- Owns a cat'
    """
    return "\n".join(f"- {item.claim}" for item in items)


async def run_probe(
    client: Client,
    persona: Persona,
    *,
    model_name: str,
    judge_client: Client | None = None,
    judge_name: str | None = None,
    seed: int = 0,
    max_tokens: int = 2048,
    judge_max_tokens: int = 4096,
    max_attempts: int = 3,
    smoke_test: bool = False,
    judge_config: Any = None,
) -> ProbeRecord:
    """Ask the Probe question, parse ``[{claim, type, reasoning}]``, and have the judge label it."""
    from mirage_bench.instruments.common import template
    from mirage_bench.instruments.judge import judge_text

    message = probe_message(persona)
    params = generation_params(max_tokens, seed)
    with usage_stage("probe"):
        outcome = await call_and_parse(
            client, [message], params, (template("probe").sha256,), parse_probe, max_attempts=max_attempts
        )
    record = ProbeRecord(
        model=model_name,
        judge=judge_name if judge_client else None,
        persona_id=persona.persona_id,
        stereotype_type=persona.stereotype_type,
        status=outcome.status,
        error=outcome.error,
        raw=outcome.text,
        smoke_test=smoke_test,
    )
    if outcome.parsed is None:
        return record
    record.inferences = [ProbeItem(**item.model_dump()) for item in outcome.parsed.value]
    record.repairs = outcome.parsed.repairs
    if judge_client is not None and record.inferences:
        with usage_stage("probe_judge"):
            judgment = await judge_text(
                judge_client,
            persona,
            message.content,
                inferences_as_text(record.inferences),
                seed=seed,
                max_tokens=judge_max_tokens,
                max_attempts=max_attempts,
                config=judge_config,
            )
        record.judgment = judgment
        if judgment.status == "ok" and judgment.claims:
            incorrect = sum(1 for c in judgment.claims if c.accuracy == Accuracy.INCORRECT)
            record.incorrect_rate = incorrect / len(judgment.claims)
    return record
