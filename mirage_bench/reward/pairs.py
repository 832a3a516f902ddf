"""Response-pair construction (seed 003, §3.2).

For each participant and each candidate query: retrieve the ``k`` most similar memories, pick a
generator at random, generate one response without memory and one with the memories under the
*ordinary* regime, and screen the pair with an LLM evaluator (substantive difference, memory
grounding, unsupported changes). Pairs are ranked by ``difference × memory_grounding`` (ties
broken by fewer unsupported changes) and the top ``per_participant`` are kept. Each kept query is
assigned a regime (conservative / ordinary / aggressive, balanced, seeded); when that is not
*ordinary*, the memory response is regenerated under it and the stored pair is screened again, so
``screening_score`` describes the stored pair (``selection_screening_score`` is the ordinary pair's
score the selection used). Output pairs carry no preference: a
human adds it. Failed calls drop the query and are reported, never filled in.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from mirage_bench.backends.base import GenerateParams
from mirage_bench.reward.data import REGIMES, Participant, PreferencePair
from mirage_bench.reward.llm import call_structured, call_text, format_memories, render_messages
from mirage_bench.reward.retrieval import RetrievalError, retrieve
from mirage_bench.types import Message

if TYPE_CHECKING:
    from mirage_bench.client import Client
    from mirage_bench.embeddings import EmbeddingClient

SCREENING_TEMPLATE = "reward_screening"
NO_MEMORY_TEMPLATE = "reward_generate_no_memory"


def regime_template(regime: str) -> str:
    """Template name of a prompting regime.

    >>> regime_template("aggressive")
    'reward_regime_aggressive'
    """
    if regime not in REGIMES:
        raise ValueError(f"unknown regime {regime!r}; choose from {REGIMES}")
    return f"reward_regime_{regime}"


class ScreeningAnswer(BaseModel):
    """The screening evaluator's JSON answer."""

    difference: int = Field(ge=1, le=5)
    memory_grounding: int = Field(ge=1, le=5)
    unsupported_changes: int = Field(ge=1, le=5)
    rationale: str = ""


@dataclass
class BuildReport:
    """Pairs built plus every query that was dropped and why."""

    pairs: list[PreferencePair] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    #: Kept pairs with something to know (e.g. a failed re-screening: ``screening_score`` is null).
    notes: list[str] = field(default_factory=list)
    screened: int = 0


async def generate(
    client: Client, query: str, memories: Sequence[str] | None, regime: str, params: GenerateParams
) -> tuple[str | None, str | None]:
    """One response: with ``memories`` under ``regime``'s system prompt, or without memory."""
    if memories is None:
        messages, shas = render_messages(NO_MEMORY_TEMPLATE, {})
    else:
        messages, shas = render_messages(
            regime_template(regime), {"memories": format_memories(list(memories))}
        )
    # The rendered template is the system turn; the query is the user turn.
    messages = [Message(role="system", content=messages[0].content), Message(role="user", content=query)]
    return await call_text(client, messages, params, shas)


def screening_rank(a: ScreeningAnswer) -> tuple[int, int]:
    """Sort key, larger first: substantial memory-grounded differences, then fewer unsupported changes.

    >>> screening_rank(ScreeningAnswer(difference=4, memory_grounding=5, unsupported_changes=2))
    (20, -2)
    """
    return a.difference * a.memory_grounding, -a.unsupported_changes


def screening_value(a: ScreeningAnswer) -> float:
    """One number for a screened pair: ``difference × memory_grounding − unsupported_changes / 10``.

    >>> screening_value(ScreeningAnswer(difference=4, memory_grounding=5, unsupported_changes=2))
    19.8
    """
    return float(a.difference * a.memory_grounding - a.unsupported_changes / 10)


async def build_participant_pairs(
    participant: Participant,
    generators: Mapping[str, Client],
    screener: Client,
    embedder: EmbeddingClient,
    *,
    k: int = 9,
    per_participant: int = 15,
    regimes: Sequence[str] = REGIMES,
    seed: int = 0,
    params: GenerateParams | None = None,
) -> BuildReport:
    """Build one participant's screened, unlabelled pairs."""
    if not generators:
        raise ValueError("at least one generator is needed")
    params = params or GenerateParams(max_tokens=1024, temperature=0.7)
    rng = random.Random(f"{seed}:{participant.participant_id}")
    report = BuildReport()
    try:
        retrieved = await retrieve(embedder, participant.queries, participant.memories, k=k)
    except RetrievalError as exc:
        report.dropped += [f"{participant.participant_id} q{i}: retrieval failed: {exc}"
                           for i in range(len(participant.queries))]
        return report
    names = sorted(generators)
    chosen = [rng.choice(names) for _ in participant.queries]

    async def candidate(i: int) -> tuple[int, str, str, list[str], ScreeningAnswer] | None:
        query, gen = participant.queries[i], chosen[i]
        mems = [participant.memories[j] for j in retrieved[i]]
        (plain, e0), (ordinary, e1) = await asyncio.gather(
            generate(generators[gen], query, None, "ordinary", params),
            generate(generators[gen], query, mems, "ordinary", params),
        )
        if plain is None or ordinary is None:
            report.dropped.append(f"{participant.participant_id} q{i}: generation failed: {e0 or e1}")
            return None
        screen = await call_structured(
            screener,
            SCREENING_TEMPLATE,
            {
                "query": query,
                "memories": format_memories(mems),
                "response_no_memory": plain,
                "response_memory": ordinary,
            },
            ScreeningAnswer,
        )
        if screen.value is None:
            report.dropped.append(f"{participant.participant_id} q{i}: screening failed: {screen.error}")
            return None
        return i, plain, ordinary, mems, screen.value

    found = [
        c
        for c in await asyncio.gather(*(candidate(i) for i in range(len(participant.queries))))
        if c is not None
    ]
    report.screened = len(found)
    found.sort(key=lambda c: (screening_rank(c[4]), -c[0]), reverse=True)
    kept = found[:per_participant]
    slots = [regimes[j % len(regimes)] for j in range(len(kept))]
    rng.shuffle(slots)

    async def finish(
        c: tuple[int, str, str, list[str], ScreeningAnswer], regime: str
    ) -> PreferencePair | None:
        i, plain, ordinary, mems, screen = c
        response = ordinary
        selection = screening_value(screen)
        score: float | None = selection
        if regime != "ordinary":
            text, err = await generate(generators[chosen[i]], participant.queries[i], mems, regime, params)
            if text is None:
                report.dropped.append(f"{participant.participant_id} q{i}: {regime} generation failed: {err}")
                return None
            response = text
            # The stored pair holds the regenerated response: screen that pair, so screening_score
            # describes what is stored (the ordinary pair's score, used for selection, is kept apart).
            again = await call_structured(
                screener,
                SCREENING_TEMPLATE,
                {
                    "query": participant.queries[i],
                    "memories": format_memories(mems),
                    "response_no_memory": plain,
                    "response_memory": response,
                },
                ScreeningAnswer,
            )
            score = screening_value(again.value) if again.value is not None else None
            if again.value is None:
                report.notes.append(
                    f"{participant.participant_id} q{i}: kept, but screening the {regime} response failed "
                    f"({again.error}): screening_score is null"
                )
        return PreferencePair(
            pair_id=f"{participant.participant_id}-q{i:03d}",
            participant_id=participant.participant_id,
            query=participant.queries[i],
            memories=mems,
            response_memory=response,
            response_no_memory=plain,
            generator=chosen[i],
            regime=regime,
            preference=None,
            source=participant.source,
            screening_score=score,
            selection_screening_score=selection,
        )

    done = await asyncio.gather(*(finish(c, r) for c, r in zip(kept, slots, strict=True)))
    report.pairs = [p for p in done if p is not None]
    return report


async def build_pairs(
    participants: Sequence[Participant],
    generators: Mapping[str, Client],
    screener: Client,
    embedder: EmbeddingClient,
    **kwargs: object,
) -> BuildReport:
    """Build pairs for every participant (participants in order; calls concurrent within each)."""
    total = BuildReport()
    for participant in participants:
        rep = await build_participant_pairs(participant, generators, screener, embedder, **kwargs)  # type: ignore[arg-type]
        total.pairs += rep.pairs
        total.dropped += rep.dropped
        total.notes += rep.notes
        total.screened += rep.screened
    return total
