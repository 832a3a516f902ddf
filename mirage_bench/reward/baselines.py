"""LLM-judge baselines (seed 003, §5 and Appendix D.1): direct judge and rubric judge, both orders.

Each pair is judged twice, once with the memory response as A and once as B (the first order is
drawn per pair from the seed). Methods written:

* ``<kind>_single`` — the first order alone;
* ``<kind>_vote`` — both orders, mapped to the same response identities and combined by a
  confidence-weighted vote (direct: confidence/100; rubric: magnitude/5; a rubric "tie" votes 0),
  with ``order_agreement`` recording whether the two orders chose the same response.

The rubric judge of the paper's comparison runs inside the cross-validation
(:func:`fold_rubric_judge`): each pair is judged with the rubric of the outer fold that held it
out, never with the full-data rubric, whose induction saw that pair's label.

A judge's output maps to ``p_memory = 0.5 + Σ s·w / (2·n_orders)`` with ``s = +1`` for the memory
response and ``-1`` for the other, so 0.5 means no preference (scored with half credit).
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field

from mirage_bench.backends.base import GenerateParams
from mirage_bench.reward.data import PreferencePair, ScoreRecord
from mirage_bench.reward.llm import call_structured, format_memories
from mirage_bench.reward.rubric import Rubric

if TYPE_CHECKING:
    from mirage_bench.client import Client
    from mirage_bench.reward.model import FoldRecord

DIRECT_TEMPLATE = "reward_direct_judge"
RUBRIC_JUDGE_TEMPLATE = "reward_rubric_judge"


class DirectJudgeAnswer(BaseModel):
    """Direct judge answer: the preferred response and a 1–100 confidence."""

    preferred: Literal["A", "B"]
    confidence: int = Field(ge=1, le=100)
    rationale: str = ""


class RubricJudgeAnswer(BaseModel):
    """Rubric judge answer: a verdict (possibly a tie) and its 1–5 magnitude."""

    verdict: Literal["A", "B", "tie"]
    magnitude: int = Field(ge=1, le=5)
    rationale: str = ""


def vote(signed_weights: Sequence[float]) -> float:
    """Map signed votes in [-1, 1] (positive = memory response) to a probability.

    >>> vote([0.8, -0.6])
    0.55
    >>> vote([1.0])
    1.0
    """
    return round(0.5 + sum(signed_weights) / (2 * len(signed_weights)), 12)


async def _judge_order(
    client: Client,
    pair: PreferencePair,
    memory_is_a: bool,
    kind: str,
    rubric: Rubric | None,
    params: GenerateParams | None,
) -> tuple[float | None, str | None]:
    a, b = (
        (pair.response_memory, pair.response_no_memory)
        if memory_is_a
        else (pair.response_no_memory, pair.response_memory)
    )
    values = {
        "query": pair.query,
        "memories": format_memories(pair.memories),
        "response_a": a,
        "response_b": b,
    }
    if kind == "direct":
        res = await call_structured(client, DIRECT_TEMPLATE, values, DirectJudgeAnswer, params=params)
        if res.value is None:
            return None, res.error
        picked_memory = (res.value.preferred == "A") == memory_is_a
        return (1.0 if picked_memory else -1.0) * res.value.confidence / 100.0, None
    if rubric is None:
        raise ValueError("the rubric judge needs a rubric")
    res_r = await call_structured(
        client, RUBRIC_JUDGE_TEMPLATE, {"rubric": rubric.render(), **values}, RubricJudgeAnswer, params=params
    )
    if res_r.value is None:
        return None, res_r.error
    if res_r.value.verdict == "tie":
        return 0.0, None
    picked_memory = (res_r.value.verdict == "A") == memory_is_a
    return (1.0 if picked_memory else -1.0) * res_r.value.magnitude / 5.0, None


async def judge_pairs(
    client: Client,
    pairs: Sequence[PreferencePair],
    *,
    kind: Literal["direct", "rubric"],
    rubric: Rubric | None = None,
    seed: int = 0,
    params: GenerateParams | None = None,
) -> dict[str, list[ScoreRecord]]:
    """Judge every pair in both orders.

    Returns ``{"<kind>_judge_single": [...], "<kind>_judge_vote": [...]}``.
    """
    if kind not in ("direct", "rubric"):
        raise ValueError(f"unknown judge kind {kind!r}")

    async def one(pair: PreferencePair) -> tuple[ScoreRecord, ScoreRecord]:
        first_memory_a = random.Random(f"{seed}:{pair.pair_id}").random() < 0.5
        (w1, e1), (w2, e2) = await asyncio.gather(
            _judge_order(client, pair, first_memory_a, kind, rubric, params),
            _judge_order(client, pair, not first_memory_a, kind, rubric, params),
        )
        single_name, vote_name = f"{kind}_judge_single", f"{kind}_judge_vote"
        single = (
            ScoreRecord(
                pair_id=pair.pair_id,
                method=single_name,
                p_memory=vote([w1]),
                details={"memory_is_a": first_memory_a},
            )
            if w1 is not None
            else ScoreRecord(pair_id=pair.pair_id, method=single_name, error=e1)
        )
        if w1 is None or w2 is None:
            both = ScoreRecord(pair_id=pair.pair_id, method=vote_name, error=e1 or e2)
        else:
            agree = (w1 > 0 and w2 > 0) or (w1 < 0 and w2 < 0)
            both = ScoreRecord(
                pair_id=pair.pair_id,
                method=vote_name,
                p_memory=vote([w1, w2]),
                order_agreement=agree,
                details={"weights": [w1, w2]},
            )
        return single, both

    results = await asyncio.gather(*(one(p) for p in pairs))
    return {f"{kind}_judge_single": [r[0] for r in results], f"{kind}_judge_vote": [r[1] for r in results]}


async def fold_rubric_judge(
    client: Client,
    pairs: Sequence[PreferencePair],
    folds: Sequence[FoldRecord],
    *,
    shuffle: int = 0,
    seed: int = 0,
    params: GenerateParams | None = None,
) -> dict[str, list[ScoreRecord]]:
    """The rubric-judge baseline, each pair judged with the rubric of the fold that held it out.

    ``folds`` are the outer folds of a :func:`~mirage_bench.reward.model.cross_validate` run; the
    folds of repeat ``shuffle`` partition the participants, so every pair is judged once, with a
    rubric induced without its labels (the full-data rubric saw them). A fold without a rubric
    (a failed induction under ``on_failure="response_only"``) gives recorded failures.
    """
    by_participant: dict[str, list[PreferencePair]] = {}
    for p in pairs:
        by_participant.setdefault(p.participant_id, []).append(p)
    out: dict[str, list[ScoreRecord]] = {"rubric_judge_single": [], "rubric_judge_vote": []}
    for fold in (f for f in folds if f.shuffle == shuffle):
        test = [p for pid in fold.test_participants for p in by_participant.get(pid, [])]
        if fold.rubric is None:
            why = f"fold {fold.fold} has no rubric ({fold.rubric_error or 'none induced'})"
            for method in out:
                out[method] += [ScoreRecord(pair_id=p.pair_id, method=method, error=why) for p in test]
            continue
        res = await judge_pairs(client, test, kind="rubric", rubric=fold.rubric, seed=seed, params=params)
        for method, recs in res.items():
            for r in recs:
                r.details.update({"rubric": "outer_fold", "shuffle": shuffle, "fold": fold.fold})
            out[method] += recs
    return out
