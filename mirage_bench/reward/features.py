"""Pair features for the memory-aware reward model (seed 003, §4.2 "Feature regression").

Every feature compares the memory-conditioned response y^m with the no-memory response y^0 and
is signed so that larger values favour y^m: rubric features are ``score(y^m) - score(y^0)``
(1–5 judge scores), deterministic features are differences of counts (length as a log ratio).
A rubric score the judge failed to give is ``NaN`` (imputed inside the fitted pipeline from
training rows only), and the failure is counted.

>>> response_stats("## Plan\\n- a\\n- b\\n\\n**Do** it?")["list_items"]
2.0
"""

from __future__ import annotations

import asyncio
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from mirage_bench.backends.base import GenerateParams
from mirage_bench.reward.data import PreferencePair
from mirage_bench.reward.rubric import Rubric, score_response

if TYPE_CHECKING:
    from mirage_bench.client import Client

_HEADING = re.compile(r"^\s{0,3}(#{1,6}\s+\S|\*\*[^*\n]+\*\*\s*:?\s*$)", re.M)
_LIST_ITEM = re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s+\S", re.M)
_BOLD = re.compile(r"\*\*[^*\n]+\*\*|__[^_\n]+__")
_CODE_BLOCK = re.compile(r"```")
_WORD = re.compile(r"\w+", re.U)

#: Deterministic response features, in feature-vector order (all memory-agnostic).
DETERMINISTIC_FEATURES: tuple[str, ...] = (
    "length_log_ratio",
    "headings",
    "list_items",
    "bold_spans",
    "paragraphs",
    "questions",
    "code_blocks",
)


def response_stats(text: str) -> dict[str, float]:
    """Counts describing one response's form (words, headings, list items, bold spans, ...)."""
    return {
        "words": float(len(_WORD.findall(text))),
        "headings": float(len(_HEADING.findall(text))),
        "list_items": float(len(_LIST_ITEM.findall(text))),
        "bold_spans": float(len(_BOLD.findall(text))),
        "paragraphs": float(len([b for b in re.split(r"\n\s*\n", text) if b.strip()])),
        "questions": float(text.count("?")),
        "code_blocks": float(len(_CODE_BLOCK.findall(text)) // 2),
    }


def deterministic_features(pair: PreferencePair) -> list[float]:
    """The :data:`DETERMINISTIC_FEATURES` of one pair, signed to favour the memory response."""
    m, o = response_stats(pair.response_memory), response_stats(pair.response_no_memory)
    out = [math.log((m["words"] + 1.0) / (o["words"] + 1.0))]
    out += [m[k] - o[k] for k in DETERMINISTIC_FEATURES[1:]]
    return out


@dataclass
class FeatureSet:
    """A feature matrix over pairs with its column names and memory / response blocks."""

    pair_ids: list[str]
    X: np.ndarray
    names: list[str]
    memory_columns: list[int]
    response_columns: list[int]
    failed_scores: int = 0
    errors: list[str] = field(default_factory=list)
    #: Why this fold has no rubric features although a judge was given (see ``RubricFeaturizer.on_failure``).
    rubric_error: str | None = None

    def rows(self, ids: Sequence[str]) -> np.ndarray:
        """The rows of the given pair ids, in that order."""
        index = {p: i for i, p in enumerate(self.pair_ids)}
        return self.X[[index[i] for i in ids]]

    def block(self, name: str) -> list[int]:
        """Column indices of block ``all`` / ``memory`` / ``response``."""
        if name == "all":
            return list(range(len(self.names)))
        if name == "memory":
            return self.memory_columns
        if name == "response":
            return self.response_columns
        raise ValueError(f"unknown feature block {name!r} (all, memory, response)")


def rubric_feature_names(rubric: Rubric) -> list[str]:
    """Column names of the rubric features."""
    return [f"rubric:{k}" for k in rubric.keys]


async def rubric_scores(
    client: Client, rubric: Rubric, pairs: Sequence[PreferencePair], *, params: GenerateParams | None = None
) -> list[tuple[dict[str, int] | None, dict[str, int] | None, list[str]]]:
    """Judge scores of both responses of every pair: ``(scores_m, scores_0, errors)`` per pair."""

    async def one(pair: PreferencePair) -> tuple[dict[str, int] | None, dict[str, int] | None, list[str]]:
        (sm, em), (s0, e0) = await asyncio.gather(*(
            score_response(client, rubric, query=pair.query, memories=pair.memories, response=response,
                           params=params)
            for response in (pair.response_memory, pair.response_no_memory)
        ))
        errs = [f"{pair.pair_id}: {e}" for e in (em, e0) if e]
        return sm, s0, errs

    return list(await asyncio.gather(*(one(p) for p in pairs)))


async def build_features(
    client: Client | None,
    rubric: Rubric | None,
    pairs: Sequence[PreferencePair],
    *,
    params: GenerateParams | None = None,
) -> FeatureSet:
    """Rubric features (when a rubric and client are given) followed by the deterministic ones."""
    names: list[str] = []
    memory_cols: list[int] = []
    response_cols: list[int] = []
    blocks: list[np.ndarray] = []
    failed = 0
    errors: list[str] = []
    if rubric is not None:
        if client is None:
            raise ValueError("rubric features need a judge client")
        scored = await rubric_scores(client, rubric, pairs, params=params)
        R = np.full((len(pairs), len(rubric.dimensions)), np.nan)
        for i, (sm, s0, errs) in enumerate(scored):
            errors += errs
            if sm is None or s0 is None:
                failed += 1
                continue
            R[i] = [sm[k] - s0[k] for k in rubric.keys]
        blocks.append(R)
        for j, d in enumerate(rubric.dimensions):
            (memory_cols if d.memory_dependent else response_cols).append(j)
        names += rubric_feature_names(rubric)
    D = np.array([deterministic_features(p) for p in pairs], dtype=float).reshape(len(pairs), -1)
    response_cols += list(range(len(names), len(names) + D.shape[1]))
    names += [f"response:{n}" for n in DETERMINISTIC_FEATURES]
    blocks.append(D)
    return FeatureSet(
        [p.pair_id for p in pairs], np.hstack(blocks), names, memory_cols, response_cols, failed, errors
    )
