"""Task: the model answers one personalization task (G.1, temperature 0.7), then audits itself (G.6).

The self-audit is a separate turn of the same conversation: the task response is kept as the
assistant message and the G.6 prompt follows as a new user message.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mirage_bench.instruments.common import call_and_parse, format_facts, generation_params
from mirage_bench.instruments.parsing import SELF_AUDIT_SCHEMA, parse_self_audit
from mirage_bench.instruments.records import ResponseRecord, SelfAudit, SelfAuditClaim
from mirage_bench.metrics.oi import oi_rate
from mirage_bench.types import Message, Persona
from mirage_bench.usage import stage as usage_stage

if TYPE_CHECKING:  # pragma: no cover
    from mirage_bench.client import Client
    from mirage_bench.tasks import Task


def task_messages(persona: Persona, task: Task) -> list[Message]:
    """System prompt (G.1 prefix with the revealed facts) and the task prompt."""
    from mirage_bench.instruments.common import render

    system = render("task_system", revealed_facts=format_facts(persona.revealed_facts)).text.strip()
    return [Message(role="system", content=system), Message(role="user", content=task.prompt.strip())]


def self_audit_message(persona: Persona, task: Task, response: str) -> Message:
    """The G.6 self-audit prompt for one response."""
    from mirage_bench.instruments.common import render

    facts = persona.revealed_facts
    text = render(
        "task_self_audit",
        task=task.audit_description,
        fact_1=facts[0],
        fact_2=facts[1],
        fact_3=facts[2],
        response=response,
    ).text.strip()
    return Message(role="user", content=text)


def task_prompt_shas(task: Task) -> tuple[str, ...]:
    """sha256s of the templates behind the task turn."""
    from mirage_bench.instruments.common import template

    return (template("task_system").sha256, template(task.template).sha256)


def audit_prompt_shas(task: Task) -> tuple[str, ...]:
    """sha256s of the templates behind the self-audit turn: the task turn's, G.6, the [TASK] phrase."""
    from mirage_bench.instruments.common import template

    return task_prompt_shas(task) + (template("task_self_audit").sha256, template(task.audit_template).sha256)


async def run_task(
    client: Client,
    persona: Persona,
    task: Task,
    *,
    model_name: str,
    seed: int = 0,
    max_tokens: int = 1024,
    audit_max_tokens: int = 2048,
    max_attempts: int = 3,
    self_audit: bool = True,
    smoke_test: bool = False,
) -> ResponseRecord:
    """Run one (persona, task) instance: the response, then (optionally) its self-audit."""
    messages = task_messages(persona, task)
    params = generation_params(max_tokens, seed)
    base = dict(
        model=model_name,
        persona_id=persona.persona_id,
        stereotype_type=persona.stereotype_type,
        task_id=task.task_id,
        smoke_test=smoke_test,
    )
    with usage_stage("task"):
        result = await client.call(messages, params, prompt_sha256=task_prompt_shas(task))
    if not result.ok:
        return ResponseRecord(
            status="failed",
            error=f"{result.error_kind or 'error'}: {result.error}",
            self_audit=SelfAudit(status="skipped"),
            **base,
        )
    response = result.text or ""
    if not self_audit:
        return ResponseRecord(status="ok", response=response, **base)
    audit_messages = messages + [
        Message(role="assistant", content=response),
        self_audit_message(persona, task, response),
    ]
    audit_params = generation_params(audit_max_tokens, seed, SELF_AUDIT_SCHEMA)
    shas = audit_prompt_shas(task)
    with usage_stage("self_audit"):
        outcome = await call_and_parse(
            client, audit_messages, audit_params, shas, parse_self_audit, max_attempts=max_attempts
        )
    audit = SelfAudit(status=outcome.status, error=outcome.error, attempts=outcome.attempts)
    if outcome.parsed is not None:
        claims = [SelfAuditClaim(**c.model_dump()) for c in outcome.parsed.value]
        audit.claims = claims
        audit.n_claims = len(claims)
        audit.oi_rate = oi_rate([c.category for c in claims])
        audit.repairs = outcome.parsed.repairs
    return ResponseRecord(status="ok", response=response, self_audit=audit, **base)
