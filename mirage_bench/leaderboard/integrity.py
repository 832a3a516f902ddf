"""Degenerate-submission detection, independent of the judge.

By Eq. 1 of the paper a response whose only claims restate the revealed facts has OI 0 %, and one
that claims nothing about the user has no OI at all, so a "model" that answers every instance with
the same polite request for more information, or echoes the facts back, would top a board sorted by
OI. These detectors look at the submitted text only (no model call) and name what they find:

``near_duplicate``
    The same, or nearly the same, text for many personas. For each task, every response is compared
    with the other personas' responses to that task: the persona's own revealed-fact words are
    masked out first (so a template that pastes the facts in still matches), then the Jaccard
    similarity of word 3-shingles is computed (a sparse binary shingle matrix, one sparse product
    per task), with and without the masking (the higher counts). A response *repeats* another when
    the best match is ≥ :attr:`Thresholds.duplicate_jaccard`.
``copies_facts``
    Responses that mostly restate the revealed facts: the share of a response's content words
    (stop words removed, light suffix stemming) that occur in the persona's three facts is
    ≥ :attr:`Thresholds.fact_coverage`.
``refusal``
    Refusals and requests for more information instead of an answer: one of
    :data:`REFUSAL_PATTERNS` in the opening of a short response.
``near_empty``
    Fewer than :attr:`Thresholds.near_empty_words` words.
``unpersonalized``
    Non-personalized boilerplate: the response uses none of the persona's fact words.

A submission is flagged for a kind when the share of its responses showing it reaches that kind's
share threshold. The thresholds were set on the tuning set ``tests/fixtures/integrity/tuning.jsonl``
(see ``benchmarks/bench_integrity.py``, which prints every statistic on it) and are checked on the
separate held-out set ``tests/fixtures/integrity/heldout.jsonl`` by ``tests/test_integrity.py``.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: Refusal / "tell me more" openings (case-insensitive), searched in the first
#: :attr:`Thresholds.refusal_window` characters of a response.
REFUSAL_PATTERNS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(p, re.IGNORECASE)
    for p in (
        r"\bI(?:'m| am)? (?:sorry|afraid|unable)\b",
        r"\bI (?:can(?:no|')t|cannot|won't|am not able to|'m not able to) "
        r"(?:help|assist|provide|write|create|do|make|personali[sz]e|answer|suggest|recommend|generate)",
        r"\bas an (?:ai|a\.i\.|artificial intelligence|language model)\b",
        r"\bI (?:don't|do not) (?:have|know) (?:enough|any|much|sufficient)?\s*"
        r"(?:information|details|context|data)\b",
        r"\b(?:need|require) (?:a bit |some )?(?:more|additional|further) (?:information|details|context)\b",
        r"\b(?:could|can|would) you (?:please )?(?:tell|share with|give|provide|send) (?:me )?"
        r"(?:more|some|a few|additional)\b",
        r"\bwithout (?:more|additional|further|knowing more) (?:information|details|context|about you)?",
        r"\bplease (?:provide|share) (?:more|some|additional)\b",
    )
)

_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def _stop_words() -> frozenset[str]:
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return frozenset(ENGLISH_STOP_WORDS) | {"i'm", "i've", "i'll", "you're", "you've", "it's", "don't"}


def words(text: str) -> list[str]:
    """Lower-cased word tokens.

    >>> words("Pixel's coffee, 4am!")
    ["pixel's", 'coffee', '4am']
    """
    return _WORD.findall(text.lower())


def stem(word: str) -> str:
    """A light suffix stemmer (enough to match "climbing" with "climb", "shifts" with "shift").

    >>> [stem(w) for w in ("climbing", "shifts", "painted", "pixel's", "yoga")]
    ['climb', 'shift', 'paint', 'pixel', 'yoga']
    """
    word = word.split("'")[0]
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def content_stems(text: str) -> list[str]:
    """Stems of the non-stop-word tokens of ``text``, in order."""
    stop = _stop_words()
    return [stem(w) for w in words(text) if w not in stop and len(w) > 1]


@dataclass(frozen=True)
class Thresholds:
    """Per-response tests and per-submission shares (documented in the module docstring)."""

    #: A response repeats another persona's when their masked 3-shingle Jaccard is at least this.
    duplicate_jaccard: float = 0.4
    #: Flag ``near_duplicate`` when at least this share of responses repeats another persona's.
    duplicate_share: float = 0.3
    #: A response copies the facts when at least this share of its content words is in the facts.
    fact_coverage: float = 0.6
    copies_facts_share: float = 0.3
    #: Characters at the start of a response searched for a refusal pattern.
    refusal_window: int = 240
    #: A refusal pattern only counts in a response shorter than this (a long answer that ends with
    #: "tell me more about your budget" is an answer).
    refusal_max_words: int = 120
    refusal_share: float = 0.2
    near_empty_words: int = 12
    near_empty_share: float = 0.2
    unpersonalized_share: float = 0.7
    #: Below this many responses no submission-level share is judged (a share of 2 means nothing).
    min_responses: int = 6


DEFAULT_THRESHOLDS = Thresholds()


@dataclass
class IntegrityReport:
    """Per-kind shares, the per-response findings and the resulting flags of one submission."""

    n_responses: int
    shares: dict[str, float]
    flagged: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    flags: list[str] = field(default_factory=list)
    stats: dict[str, float] = field(default_factory=dict)
    #: Per-response statistics in record order: ``best_jaccard`` (with another persona's response to
    #: the same task), ``fact_coverage`` (``nan`` for a persona without facts) and ``words``.
    per_response: dict[str, list[float]] = field(default_factory=dict)


KINDS: dict[str, str] = {
    "near_duplicate": "repeat another persona's response to the same task almost word for word",
    "copies_facts": "mostly restate the user's revealed facts",
    "refusal": "refuse or ask for more information instead of answering",
    "near_empty": "are nearly empty",
    "unpersonalized": "use none of the user's revealed facts",
}


def _shingles(tokens: Sequence[str], n: int = 3) -> list[str]:
    if not tokens:
        return []
    if len(tokens) < n:
        return [" ".join(tokens)]
    return [" ".join(tokens[i : i + n]) for i in range(len(tokens) - n + 1)]


def max_other_jaccard(shingle_sets: Sequence[Sequence[str]], owners: Sequence[str]) -> np.ndarray:
    """For each shingle set, its highest Jaccard similarity with a set of a *different* owner.

    >>> max_other_jaccard([["a b", "b c"], ["a b", "b c"], ["x y"]], ["p1", "p2", "p3"]).tolist()
    [1.0, 1.0, 0.0]
    """
    from scipy import sparse
    from sklearn.feature_extraction.text import CountVectorizer

    n = len(shingle_sets)
    if n < 2:
        return np.zeros(n)
    nonempty = [bool(s) for s in shingle_sets]
    if not any(nonempty):
        return np.zeros(n)
    vec = CountVectorizer(analyzer=lambda s: s, binary=True)
    matrix = vec.fit_transform([list(s) if s else ["\x00empty"] for s in shingle_sets]).astype(np.float32)
    matrix = sparse.csr_matrix(matrix)
    inter = (matrix @ matrix.T).toarray()
    sizes = np.asarray(matrix.sum(axis=1)).ravel()
    union = sizes[:, None] + sizes[None, :] - inter
    sim = np.divide(inter, union, out=np.zeros_like(inter), where=union > 0)
    owner_arr = np.asarray(owners, dtype=object)
    same = owner_arr[:, None] == owner_arr[None, :]
    sim[same] = 0.0
    empty = ~np.asarray(nonempty)
    sim[empty, :] = 0.0
    sim[:, empty] = 0.0
    return sim.max(axis=1)


def analyze(
    records: Sequence[Mapping[str, Any]],
    facts: Mapping[str, Sequence[str]] | None = None,
    thresholds: Thresholds = DEFAULT_THRESHOLDS,
) -> IntegrityReport:
    """Run every detector on a submission's responses (``persona_id``, ``task_id``, ``response``).

    ``facts`` maps persona id -> revealed facts (default: the benchmark's personas). Records of a
    persona without facts are compared for near-duplicates only.
    """
    if facts is None:
        from mirage_bench.personas import load_personas

        facts = {p.persona_id: list(p.revealed_facts) for p in load_personas()}
    t = thresholds
    stop = _stop_words()
    n = len(records)
    per_kind: dict[str, list[tuple[str, str]]] = {k: [] for k in KINDS}
    coverages: list[float] = []
    coverage_by_record: list[float] = []
    by_task: dict[str, list[int]] = defaultdict(list)
    masked: list[list[str]] = []
    word_counts: list[int] = []
    n_with_facts = 0
    for i, rec in enumerate(records):
        text = str(rec.get("response") or "")
        key = (str(rec.get("persona_id")), str(rec.get("task_id")))
        toks = words(text)
        word_counts.append(len(toks))
        fact_stems = {s for f in facts.get(key[0], ()) for s in content_stems(f)}
        masked.append([w for w in toks if stem(w) not in fact_stems])
        by_task[key[1]].append(i)
        if len(toks) < t.near_empty_words:
            per_kind["near_empty"].append(key)
        opening = text[: t.refusal_window]
        if len(toks) < t.refusal_max_words and any(p.search(opening) for p in REFUSAL_PATTERNS):
            per_kind["refusal"].append(key)
        if not fact_stems:
            coverage_by_record.append(float("nan"))
        else:
            n_with_facts += 1
            stems = [stem(w) for w in toks if w not in stop and len(w) > 1]
            used = [s for s in stems if s in fact_stems]
            coverage = len(used) / len(stems) if stems else 0.0
            coverages.append(coverage)
            coverage_by_record.append(coverage)
            if stems and coverage >= t.fact_coverage:
                per_kind["copies_facts"].append(key)
            if not used:
                per_kind["unpersonalized"].append(key)
    best = np.zeros(n)
    for idx in by_task.values():
        owners = [str(records[i].get("persona_id")) for i in idx]
        sims = max_other_jaccard([_shingles(masked[i]) for i in idx], owners)
        plain = [_shingles(words(str(records[i].get("response") or ""))) for i in idx]
        raw = max_other_jaccard(plain, owners)
        best[idx] = np.maximum(sims, raw)
    for i in np.flatnonzero(best >= t.duplicate_jaccard):
        rec = records[int(i)]
        per_kind["near_duplicate"].append((str(rec.get("persona_id")), str(rec.get("task_id"))))
    denominators = {k: (n_with_facts if k in ("copies_facts", "unpersonalized") else n) for k in KINDS}
    shares = {k: (len(v) / denominators[k] if denominators[k] else 0.0) for k, v in per_kind.items()}
    limits = {
        "near_duplicate": t.duplicate_share,
        "copies_facts": t.copies_facts_share,
        "refusal": t.refusal_share,
        "near_empty": t.near_empty_share,
        "unpersonalized": t.unpersonalized_share,
    }
    flags: list[str] = []
    if n >= t.min_responses:
        for kind, share in shares.items():
            if share >= limits[kind] and per_kind[kind]:
                flags.append(
                    f"{kind}: {100 * share:.0f}% of responses {KINDS[kind]} "
                    f"(threshold {100 * limits[kind]:.0f}%)"
                )
    distinct = len({" ".join(words(str(r.get("response") or ""))) for r in records})
    stats = {
        "distinct_share": distinct / n if n else 0.0,
        "median_best_jaccard": float(np.median(best)) if n else 0.0,
        "median_fact_coverage": float(np.median(coverages)) if coverages else 0.0,
        "median_words": float(np.median(word_counts)) if word_counts else 0.0,
    }
    per_response = {
        "best_jaccard": [float(x) for x in best],
        "fact_coverage": coverage_by_record,
        "words": [float(x) for x in word_counts],
    }
    return IntegrityReport(
        n_responses=n, shares=shares, flagged=per_kind, flags=flags, stats=stats, per_response=per_response
    )


def degenerate_flags(
    records: Sequence[Mapping[str, Any]], facts: Mapping[str, Sequence[str]] | None = None
) -> list[str]:
    """The flags of :func:`analyze` (empty for an ordinary submission)."""
    return analyze(records, facts).flags


def injection_flag(judgments: Sequence[Any]) -> list[str]:
    """``["injection: k of n responses ..."]`` when the judge stage flagged any response, else ``[]``.

    ``judgments`` are :class:`~mirage_bench.instruments.records.JudgmentRecord` objects or dicts.
    """
    counts: dict[str, int] = defaultdict(int)
    flagged = 0
    for j in judgments:
        get = j.get if isinstance(j, Mapping) else lambda k, d=None, j=j: getattr(j, k, d)
        if get("injection_flag", False):
            flagged += 1
            for sig in get("injection_signals", None) or []:
                counts[str(sig)] += 1
    if not flagged:
        return []
    kinds = ", ".join(f"{k} {v}" for k, v in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
    return [f"injection: {flagged} of {len(judgments)} responses flagged ({kinds})"]


def submission_flags(responses: Sequence[Mapping[str, Any]], judgments: Sequence[Any] = ()) -> list[str]:
    """Every flag of a submission: the degenerate-text findings on its ``ok`` responses, then the
    injection count of its judgments."""
    ok = [r for r in responses if r.get("status", "ok") == "ok"]
    return degenerate_flags(ok) + injection_flag(judgments)


__all__ = [
    "submission_flags",
    "DEFAULT_THRESHOLDS",
    "KINDS",
    "REFUSAL_PATTERNS",
    "IntegrityReport",
    "Thresholds",
    "analyze",
    "degenerate_flags",
    "injection_flag",
    "max_other_jaccard",
]
