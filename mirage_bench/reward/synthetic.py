"""SYNTHETIC fixtures for testing the reward pipeline offline — not data, never to be published as data.

:func:`synthetic_pairs` draws fake participants, memories, responses and five-point preferences
from a known generative rule (a relevant memory mention helps, an unwarranted one hurts, more
headings help a little, plus a per-participant bias and noise). :func:`synthetic_responder` is a
scripted-backend responder that answers every ``reward_*`` prompt of this package
deterministically from the prompt text (rubric induction/consolidation, rubric scoring, direct
and rubric judges, screening, generation). Every id and ``source`` is ``synthetic``.

>>> pairs = synthetic_pairs(n_participants=3, pairs_per_participant=2, seed=1)
>>> len(pairs), pairs[0].source, pairs[0].pair_id.startswith("synthetic_")
(6, 'synthetic', True)
"""

from __future__ import annotations

import json
import math
import random
import re

from mirage_bench.backends.base import GenerateParams
from mirage_bench.reward.data import REGIMES, Participant, PreferencePair
from mirage_bench.types import Message

SOURCE = "synthetic"
TOPICS: tuple[str, ...] = (
    "hiking",
    "baking",
    "chess",
    "cycling",
    "jazz",
    "gardening",
    "photography",
    "running",
    "painting",
    "coding",
    "yoga",
    "sushi",
    "climbing",
    "knitting",
)
_MENTION = re.compile(r"Since you enjoy (\w+)")


def _response(rng: random.Random, topic: str, mention: str | None) -> str:
    lines: list[str] = []
    for h in range(rng.randint(0, 3)):
        lines.append(f"## Part {h + 1}")
        lines += [f"- step {j + 1} for {topic}" for j in range(rng.randint(0, 3))]
    body = " ".join(["Here is a general suggestion."] * rng.randint(1, 6))
    if mention:
        body = f"Since you enjoy {mention}, I tailored this. " + body
    return "\n".join([body, *lines])


def synthetic_participants(n: int = 4, *, queries: int = 6, seed: int = 0) -> list[Participant]:
    """SYNTHETIC participants (memory stores and queries) for exercising ``build-pairs``."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        likes = rng.sample(TOPICS, 6)
        mems = [f"synthetic memory: the user enjoys {t}" for t in likes]
        mems += [f"synthetic memory: went to a {rng.choice(TOPICS)} event last week" for _ in range(6)]
        qs = [f"synthetic query {j}: plan something about {rng.choice(TOPICS)}" for j in range(queries)]
        out.append(
            Participant(participant_id=f"synthetic_u{i:03d}", memories=mems, queries=qs, source=SOURCE)
        )
    return out


def synthetic_pairs(
    n_participants: int = 20,
    pairs_per_participant: int = 12,
    *,
    seed: int = 0,
    participant_bias: float = 0.3,
    tie_rate: float = 0.05,
) -> list[PreferencePair]:
    """SYNTHETIC labelled pairs drawn from the rule in the module docstring (reproducible from ``seed``)."""
    rng = random.Random(seed)
    pairs: list[PreferencePair] = []
    for u in range(n_participants):
        pid = f"synthetic_u{u:03d}"
        bias = rng.gauss(0.0, participant_bias)
        likes = rng.sample(TOPICS, 6)
        for q in range(pairs_per_participant):
            topic = rng.choice(TOPICS)
            kind = rng.choices(["relevant", "unwarranted", "none"], [0.4, 0.4, 0.2])[0]
            mention = (
                topic
                if kind == "relevant"
                else (rng.choice([t for t in likes if t != topic]) if kind == "unwarranted" else None)
            )
            mems = [f"synthetic memory: the user enjoys {t}" for t in likes]
            if kind == "relevant" and topic not in likes:
                mems[0] = f"synthetic memory: the user enjoys {topic}"
            y_m = _response(rng, topic, mention)
            y_0 = _response(rng, topic, None)
            h_diff = y_m.count("## ") - y_0.count("## ")
            u_val = (
                1.6 * (kind == "relevant")
                - 1.6 * (kind == "unwarranted")
                + 0.5 * h_diff
                + bias
                + rng.gauss(0.0, 0.8)
            )
            if abs(u_val) < 0.15 and rng.random() < tie_rate * 10:
                pref = "about_same"
            else:
                side = "memory" if u_val > 0 else "no_memory"
                pref = f"{side}_{'much' if abs(u_val) > 0.7 else 'slightly'}_better"
            pairs.append(
                PreferencePair(
                    pair_id=f"synthetic_{pid[10:]}_{q:02d}",
                    participant_id=pid,
                    query=f"synthetic query: help me plan something about {topic}",
                    memories=mems,
                    response_memory=y_m,
                    response_no_memory=y_0,
                    generator=rng.choice(["gen_a", "gen_b", "gen_c"]),
                    regime=rng.choice(REGIMES),
                    preference=pref,
                    source=SOURCE,
                )
            )  # type: ignore[arg-type]
    return pairs


# ---- the scripted responder -------------------------------------------------------------------

_PROPOSALS = [
    ("Memory relevance", "uses remembered information that bears on the query"),
    ("Unwarranted personal assumptions", "assumes personal details unrelated to the query"),
    ("Structure", "organizes the answer under headings"),
    ("Clarity", "is easy to follow"),
]
_RUBRIC = [
    {
        "name": "Memory relevance",
        "description": "uses remembered information relevant to the query",
        "memory_dependent": True,
    },
    {
        "name": "Unwarranted personal assumptions",
        "description": "brings in personal details the query does not call for",
        "memory_dependent": True,
    },
    {
        "name": "Structure",
        "description": "organizes the answer with headings and lists",
        "memory_dependent": False,
    },
    {"name": "Clarity", "description": "is clear and direct", "memory_dependent": False},
]


def _section(text: str, name: str) -> str:
    m = re.search(rf"\[{re.escape(name)}\]\n(.*?)(?:\n\n\[|\Z)", text, re.S)
    return m.group(1) if m else ""


def _judge_value(query: str, response: str) -> float:
    topic_m = re.search(r"about (\w+)", query)
    topic = topic_m.group(1) if topic_m else ""
    m = _MENTION.search(response)
    if m is None:
        return 0.0
    return 1.0 if m.group(1) == topic else -1.0


def _rubric_score(key: str, query: str, response: str) -> int:
    v = _judge_value(query, response)
    if "relevance" in key:
        return 5 if v > 0 else (3 if v == 0 else 2)
    if "assumption" in key:
        return 5 if v < 0 else 1
    if "structure" in key:
        return min(5, 1 + response.count("## "))
    return 3


def synthetic_responder(messages: list[Message], params: GenerateParams) -> str:
    """Answer any ``reward_*`` prompt deterministically (for the scripted backend; SYNTHETIC)."""
    text = messages[-1].content
    title = (params.json_schema or {}).get("title")
    if title == "InductionAnswer":
        return json.dumps({"dimensions": [{"name": n, "description": d} for n, d in _PROPOSALS]})
    if title == "ConsolidationAnswer":
        return json.dumps({"dimensions": _RUBRIC})
    if title == "RubricScoring":
        keys = list(params.json_schema["$defs"]["RubricScores"]["properties"])  # type: ignore[index]
        query, response = _section(text, "User Query"), _section(text, "Response")
        return json.dumps({"scores": {k: _rubric_score(k, query, response) for k in keys}})
    if title in ("DirectJudgeAnswer", "RubricJudgeAnswer"):
        query = _section(text, "User Query")
        va = _judge_value(query, _section(text, "Response A"))
        vb = _judge_value(query, _section(text, "Response B"))
        # The direct judge favours any personal mention; the rubric judge only relevant ones.
        if title == "DirectJudgeAnswer":
            a, b = abs(va), abs(vb)
            return json.dumps({"preferred": "A" if a >= b else "B", "confidence": 80 if a != b else 55})
        if va == vb:
            return json.dumps({"verdict": "tie", "magnitude": 1})
        return json.dumps({"verdict": "A" if va > vb else "B", "magnitude": 4})
    if title == "ScreeningAnswer":
        mem = _section(text, "Response with memory")
        grounded = 5 if "Since you enjoy" in mem else 1
        return json.dumps(
            {"difference": 1 + len(mem) % 5, "memory_grounding": grounded, "unsupported_changes": 1}
        )
    # Generation: a system turn with remembered information gets a personalized answer.
    system = messages[0].content if messages[0].role == "system" else ""
    liked = re.findall(r"enjoys (\w+)", system)
    seed = sum(map(ord, text)) + (7 if "Personalize proactively" in system else 0)
    rng = random.Random(seed)
    return _response(rng, "your request", liked[rng.randrange(len(liked))] if liked else None)


def synthetic_coefficient_check(pairs: list[PreferencePair]) -> float:
    """Share of SYNTHETIC strict pairs where the generating rule's sign agrees with the label."""
    agree = total = 0
    for p in pairs:
        if p.human_prefers_memory is None:
            continue
        v = _judge_value(p.query, p.response_memory)
        if v != 0:
            total += 1
            agree += (v > 0) == p.human_prefers_memory
    return agree / total if total else math.nan


def synthetic_client(record: list[tuple[str | None, str]] | None = None, **backend_options: object):  # noqa: ANN201
    """A :class:`~mirage_bench.client.Client` over a scripted backend answering with the SYNTHETIC responder.

    When ``record`` is a list, every backend call appends ``(schema title, last message text)`` to it.
    """
    from mirage_bench.backends.scripted import ScriptedBackend
    from mirage_bench.client import Client, ClientConfig

    def responder(messages: list[Message], params: GenerateParams) -> str:
        if record is not None:
            record.append(((params.json_schema or {}).get("title"), messages[-1].content))
        return synthetic_responder(messages, params)

    backend = ScriptedBackend(responder, name="scripted:synthetic", **backend_options)  # type: ignore[arg-type]
    return Client(backend, ClientConfig(backoff_base_s=0.0, backoff_max_s=0.0))
