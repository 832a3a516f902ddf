"""Rubric induction, consolidation and rubric scoring (seed 003, §4.2).

Induction: ``passes`` independent calls, each shown ``per_pass`` preference-labelled quadruplets
(query, memories, both responses in a random order, the annotator's choice) drawn from the
*training* pairs only, each asked for ``dims_per_pass`` rubric dimensions. Consolidation: one call
merges the raw proposals into a canonical rubric and marks every dimension memory-dependent or
memory-agnostic. Scoring: an LLM judge rates one response on every dimension from 1 to 5.
"""

from __future__ import annotations

import asyncio
import random
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field, create_model

from mirage_bench.backends.base import GenerateParams
from mirage_bench.reward.data import PreferencePair
from mirage_bench.reward.llm import LLMResult, call_structured, format_memories

if TYPE_CHECKING:
    from mirage_bench.client import Client

INDUCTION_TEMPLATE = "reward_rubric_induction"
CONSOLIDATION_TEMPLATE = "reward_rubric_consolidation"
SCORING_TEMPLATE = "reward_rubric_scoring"


class RubricError(RuntimeError):
    """Rubric induction could not produce a rubric (every pass or the consolidation failed)."""


class ProposedDimension(BaseModel):
    """One raw proposal of an induction pass."""

    name: str = Field(min_length=1, max_length=200)
    description: str = Field(min_length=1, max_length=2000)


class InductionAnswer(BaseModel):
    """The JSON answer of one induction pass."""

    dimensions: list[ProposedDimension] = Field(min_length=1, max_length=40)


class RubricDimension(BaseModel):
    """One canonical rubric dimension; ``key`` is a stable snake_case identifier."""

    model_config = ConfigDict(frozen=True)

    key: str
    name: str
    description: str
    memory_dependent: bool


class ConsolidatedDimension(BaseModel):
    """A dimension as the consolidation pass returns it."""

    name: str = Field(min_length=1, max_length=200)
    description: str = Field(min_length=1, max_length=2000)
    memory_dependent: bool


class ConsolidationAnswer(BaseModel):
    """The JSON answer of the consolidation pass."""

    dimensions: list[ConsolidatedDimension] = Field(min_length=1, max_length=40)


class Rubric(BaseModel):
    """A canonical rubric and its provenance (the training pairs it was induced from)."""

    dimensions: list[RubricDimension]
    induced_from: list[str] = Field(default_factory=list, description="pair_ids shown to induction passes")
    n_proposals: int = 0
    failed_passes: int = 0
    #: Dimensions the consolidation returned before a ``max_dimensions`` cap (``None``: not capped).
    capped_from: int | None = None

    @property
    def keys(self) -> list[str]:
        """Dimension keys in rubric order."""
        return [d.key for d in self.dimensions]

    def render(self) -> str:
        """The rubric as a numbered list for judge prompts."""
        return "\n".join(
            f"{i}. {d.key} — {d.name}: {d.description}" for i, d in enumerate(self.dimensions, 1)
        )


def slug(name: str) -> str:
    """A snake_case key for a dimension name.

    >>> slug("Memory relevance (to the query)")
    'memory_relevance_to_the_query'
    """
    s = re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")
    return s[:60] or "dimension"


def format_quadruplet(pair: PreferencePair, index: int, rng: random.Random) -> str:
    """One preference-labelled example for an induction prompt (responses in a random order)."""
    memory_first = rng.random() < 0.5
    a, b = (
        (pair.response_memory, pair.response_no_memory)
        if memory_first
        else (pair.response_no_memory, pair.response_memory)
    )
    prefers_memory = pair.human_prefers_memory
    if prefers_memory is None:
        raise ValueError(f"pair {pair.pair_id} has no strict preference; induction needs labelled pairs")
    chosen = "A" if prefers_memory == memory_first else "B"
    return (
        f"### Example {index}\n[Query]\n{pair.query}\n\n[Memories]\n{format_memories(pair.memories)}\n\n"
        f"[Response A]\n{a}\n\n[Response B]\n{b}\n\n[User's choice]\nResponse {chosen}"
    )


async def induce_rubric(
    client: Client,
    train_pairs: Sequence[PreferencePair],
    *,
    passes: int = 5,
    per_pass: int = 10,
    dims_per_pass: int = 10,
    seed: int = 0,
    params: GenerateParams | None = None,
    max_dimensions: int | None = None,
) -> Rubric:
    """Induce a canonical rubric from ``train_pairs`` (which must all carry a strict preference).

    ``max_dimensions`` keeps only the first dimensions of the consolidated rubric (a cost cap for
    smoke tests and budgets; the seed does not cap it), and the rubric records the cap.
    """
    if max_dimensions is not None and max_dimensions < 1:
        raise ValueError("max_dimensions must be at least 1")
    labelled = [p for p in train_pairs if p.human_prefers_memory is not None]
    if not labelled:
        raise RubricError("no labelled training pairs to induce a rubric from")
    rng = random.Random(seed)
    batches = [rng.sample(labelled, min(per_pass, len(labelled))) for _ in range(passes)]
    shown = sorted({p.pair_id for batch in batches for p in batch})

    async def one_pass(batch: list[PreferencePair], k: int) -> LLMResult[InductionAnswer]:
        order_rng = random.Random(f"{seed}:{k}")
        examples = "\n\n".join(format_quadruplet(p, i, order_rng) for i, p in enumerate(batch, 1))
        return await call_structured(
            client,
            INDUCTION_TEMPLATE,
            {"examples": examples, "n_dimensions": str(dims_per_pass)},
            InductionAnswer,
            params=params,
        )

    results = await asyncio.gather(*(one_pass(b, k) for k, b in enumerate(batches)))
    proposals = [d for r in results if r.value is not None for d in r.value.dimensions]
    failed = sum(1 for r in results if r.value is None)
    if not proposals:
        errors = "; ".join(r.error or "" for r in results)
        raise RubricError(f"all {passes} induction passes failed: {errors}")
    listing = "\n".join(f"{i}. {d.name}: {d.description}" for i, d in enumerate(proposals, 1))
    merged = await call_structured(
        client, CONSOLIDATION_TEMPLATE, {"proposals": listing}, ConsolidationAnswer, params=params
    )
    if merged.value is None:
        raise RubricError(f"consolidation failed: {merged.error}")
    dims: list[RubricDimension] = []
    used: set[str] = set()
    for d in merged.value.dimensions:
        key = base = slug(d.name)
        n = 2
        while key in used:
            key, n = f"{base}_{n}", n + 1
        used.add(key)
        dims.append(
            RubricDimension(
                key=key, name=d.name, description=d.description, memory_dependent=d.memory_dependent
            )
        )
    capped_from = None
    if max_dimensions is not None and len(dims) > max_dimensions:
        capped_from, dims = len(dims), dims[:max_dimensions]
    return Rubric(dimensions=dims, induced_from=shown, n_proposals=len(proposals), failed_passes=failed,
                  capped_from=capped_from)


def scores_model(rubric: Rubric) -> type[BaseModel]:
    """A pydantic model ``{"scores": {<key>: int 1..5, ...}}`` for ``rubric`` (its JSON schema)."""
    fields = {k: (int, Field(ge=1, le=5)) for k in rubric.keys}
    scores = create_model("RubricScores", **fields)  # type: ignore[call-overload]
    return create_model("RubricScoring", scores=(scores, ...))


async def score_response(
    client: Client,
    rubric: Rubric,
    *,
    query: str,
    memories: Sequence[str],
    response: str,
    params: GenerateParams | None = None,
) -> tuple[dict[str, int] | None, str | None]:
    """Rate ``response`` on every rubric dimension: ``(scores, None)`` or ``(None, error)``."""
    model = scores_model(rubric)
    result = await call_structured(
        client,
        SCORING_TEMPLATE,
        {
            "rubric": rubric.render(),
            "query": query,
            "memories": format_memories(list(memories)),
            "response": response,
        },
        model,
        params=params,
    )
    if result.value is None:
        return None, result.error
    return dict(result.value.scores.model_dump()), None  # type: ignore[attr-defined]
