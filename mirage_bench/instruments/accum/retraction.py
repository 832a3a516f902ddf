"""The judged retraction measure of Accum: did the memory give up an inference the user contradicted?

For each planted contradiction (round ``r``), an independent judge reads the memory before round
``r``, after it, and after round ``r + 1``, and says whether the contradicted inference was stored
before (``stored_before``) and, for each later memory, whether it is still ``asserted``,
``revised`` (corrected, e.g. "divorced; was married before" for "married") or ``retracted``
(removed). The prompt is ``accum_retraction_judge`` (this package's wording; the paper reports
retraction qualitatively and prints no prompt), sent at temperature 0 with :data:`RETRACTION_SCHEMA`
through the run's :class:`~mirage_bench.client.Client`, so it is cached and retried like every
judge call; an answer that fails to parse after the retries is a recorded failure
(``judge.status``), never scored.

:func:`outcome` turns the verdicts into the measure: stored before and not asserted after the
*last* checked round = retracted (``retracted_round`` is the first checked round from which it
stayed unasserted, so a retraction one round late counts). The retraction rate's denominator is
the contradictions that met a stored inference.

Without a judge, :func:`mirage_bench.instruments.accum.check_contradiction` (the word-overlap
heuristic) decides, named ``word_overlap_fallback`` in every check. It misreads paraphrase
("outgoing and social, but doesn't like big crowds" looks retracted because of the negation;
"divorced; was married before" looks asserted); ``tests/test_accum_retraction.py`` documents it.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field, ValidationError

from mirage_bench.backends.base import GenerateParams
from mirage_bench.instruments.common import JUDGE_TEMPERATURE, call_and_parse, render, template
from mirage_bench.instruments.parsing import Parsed, ParseError, load_json_lenient
from mirage_bench.instruments.records import (
    ContradictionCheck,
    RetractionJudgment,
    RetractionVerdict,
)
from mirage_bench.types import Message

if TYPE_CHECKING:  # pragma: no cover
    from mirage_bench.client import Client

#: The prompt template of the retraction judge.
RETRACTION_TEMPLATE = "accum_retraction_judge"
VERDICTS: tuple[str, ...] = ("asserted", "revised", "retracted")


class RetractionAnswer(BaseModel):
    """The retraction judge's JSON answer."""

    stored_before: bool
    after_round: RetractionVerdict | None
    after_next_round: RetractionVerdict | None = None
    evidence: list[str] = Field(default_factory=list)
    reasoning: str = ""


#: JSON schema sent with every retraction-judge call (structured output where supported).
RETRACTION_SCHEMA: dict[str, Any] = RetractionAnswer.model_json_schema()


def parse_retraction(text: str) -> Parsed[RetractionAnswer]:
    """Parse the judge's answer; verdicts are matched case-insensitively, nothing else is guessed.

    >>> parsed = parse_retraction('{"stored_before": true, "after_round": "Revised"}')
    >>> parsed.value.after_round, parsed.repairs
    ('revised', ['verdict_normalised'])
    >>> try:
    ...     parse_retraction('{"stored_before": true, "after_round": "gone"}')
    ... except ParseError as exc:
    ...     print(str(exc)[:52])
    invalid retraction answer: after_round: Input should
    """
    data, repairs = load_json_lenient(text)
    if not isinstance(data, dict):
        raise ParseError(f"expected a JSON object, got {type(data).__name__}", repairs)
    for key in ("after_round", "after_next_round"):
        value = data.get(key)
        if isinstance(value, str) and value.strip().lower() in VERDICTS and value != value.strip().lower():
            data[key] = value.strip().lower()
            repairs.append("verdict_normalised")
    try:
        return Parsed(RetractionAnswer.model_validate(data), repairs)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'answer'}: {e['msg']}" for e in exc.errors()
        )
        raise ParseError(f"invalid retraction answer: {problems}", repairs) from exc


def outcome(
    stored_before: bool, verdicts: Sequence[tuple[int, str | None]]
) -> tuple[bool | None, str, int | None]:
    """``(retracted, outcome, retracted_round)`` from the verdicts of the checked rounds, in order.

    The last checked round decides; ``retracted_round`` is the first round from which every later
    verdict is "not asserted".

    >>> outcome(True, [(6, "asserted"), (7, "revised")])
    (True, 'revised', 7)
    >>> outcome(True, [(6, "retracted"), (7, "asserted")])
    (False, 'asserted', None)
    >>> outcome(False, [(6, "asserted")])
    (None, 'not_stored', None)
    """
    if not stored_before:
        return None, "not_stored", None
    known = [(r, v) for r, v in verdicts if v is not None]
    if not known:
        raise ValueError("no verdict for the planted round")
    last = known[-1][1]
    if last == "asserted":
        return False, "asserted", None
    first = len(known)
    while first > 0 and known[first - 1][1] != "asserted":
        first -= 1
    return True, str(last), known[first][0]


def memory_text(memory: Mapping[str, Any] | None, missing: str) -> str:
    """A memory as the judge sees it: its JSON, or ``(none: <missing>)``.

    >>> memory_text({"observed": ["I code."]}, "x")
    '{"observed": ["I code."]}'
    >>> memory_text(None, "the script ended")
    '(none: the script ended)'
    """
    if memory is None:
        return f"(none: {missing})"
    return json.dumps(dict(memory), ensure_ascii=False)


async def judge_retraction(
    client: Client,
    *,
    contradicts: str,
    round_number: int,
    utterance: str,
    before: Mapping[str, Any],
    after: Mapping[str, Any],
    after_next: Mapping[str, Any] | None,
    judge_name: str,
    seed: int = 0,
    max_tokens: int = 1024,
    max_attempts: int = 3,
    next_missing: str = "the script ended",
) -> RetractionJudgment:
    """One judge call on one planted contradiction; failures are returned, not raised."""
    prompt = render(
        RETRACTION_TEMPLATE,
        round=str(round_number),
        contradicts=contradicts,
        utterance=utterance,
        memory_before=memory_text(before, "empty"),
        memory_after=memory_text(after, "empty"),
        next_round=str(round_number + 1),
        memory_next=memory_text(after_next, next_missing),
    ).text
    sha = template(RETRACTION_TEMPLATE).sha256
    params = GenerateParams(
        temperature=JUDGE_TEMPERATURE, max_tokens=max_tokens, seed=seed, json_schema=RETRACTION_SCHEMA
    )
    result = await call_and_parse(
        client, [Message(role="user", content=prompt)], params, (sha,), parse_retraction,
        max_attempts=max_attempts,
    )
    base = {"judge": judge_name, "attempts": result.attempts, "prompt_sha256": sha}
    if result.parsed is None:
        return RetractionJudgment(status=result.status, error=result.error, **base)
    answer: RetractionAnswer = result.parsed.value
    if answer.after_round is None:
        return RetractionJudgment(
            status="parse_failure", error="no verdict for the memory after the planted round", **base
        )
    return RetractionJudgment(
        status="ok",
        stored_before=answer.stored_before,
        after_round=answer.after_round,
        after_next_round=answer.after_next_round if after_next is not None else None,
        evidence=answer.evidence,
        reasoning=answer.reasoning,
        repairs=result.parsed.repairs,
        **base,
    )


def apply_judgment(check: ContradictionCheck, judgment: RetractionJudgment) -> ContradictionCheck:
    """Make the judge's reading the check's measure (the heuristic's stays in ``fallback_*``)."""
    check.method = "judge"
    check.judge = judgment
    if judgment.status != "ok":
        check.previously_stored, check.retracted = False, None
        check.outcome, check.retracted_round = None, None
        return check
    verdicts = [(check.checked_rounds[0], judgment.after_round)]
    if len(check.checked_rounds) > 1:
        verdicts.append((check.checked_rounds[1], judgment.after_next_round))
    check.previously_stored = bool(judgment.stored_before)
    check.retracted, check.outcome, check.retracted_round = outcome(check.previously_stored, verdicts)  # type: ignore[assignment]
    return check


async def judge_checks(
    client: Client,
    checks: Sequence[tuple[ContradictionCheck, dict[str, Any]]],
    *,
    judge_name: str,
    seed: int = 0,
    max_tokens: int = 1024,
    max_attempts: int = 3,
) -> None:
    """Judge every ``(check, context)`` concurrently and apply the verdicts in place.

    ``context`` holds ``round_number``, ``utterance``, ``before``, ``after``, ``after_next`` and
    ``next_missing`` (see :func:`judge_retraction`).
    """
    from mirage_bench.usage import stage as usage_stage

    with usage_stage("accum_retraction_judge"):  # paid by the judge, counted apart from the Accum rounds
        judgments = await asyncio.gather(
            *(
                judge_retraction(
                    client, contradicts=check.contradicts, judge_name=judge_name, seed=seed,
                    max_tokens=max_tokens, max_attempts=max_attempts, **context,
                )
                for check, context in checks
            )
        )
    for (check, _), judgment in zip(checks, judgments, strict=True):
        apply_judgment(check, judgment)
