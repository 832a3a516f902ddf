"""SIMULATION ONLY: a deterministic stand-in for a model and a judge, for tests, benchmarks and demos.

:class:`SimulatedResponder` reads the MirageBench prompts it is sent (Task, self-audit, Judge,
Probe, Accum, persona generation) and answers with plausible text or JSON derived from the prompt
text and a seeded RNG: the same messages always give the same answer. Its numbers mean nothing
about any real model; runs that use it are runs of the ``scripted`` backend, named as such in every
record. Claim mixes per task are loosely shaped after the paper's Table 3 ordering (reported
figures, seed 000), only so that simulated tables look like tables.

>>> from mirage_bench.types import Message
>>> sim = SimulatedResponder(seed=1)
>>> sim([Message(role="user", content="hello")], None)
Traceback (most recent call last):
...
ValueError: SimulatedResponder: not a MirageBench prompt: 'hello'
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from functools import lru_cache
from typing import Any

from mirage_bench.types import GROUND_TRUTH_FIELDS, Message

_NUMBERED = re.compile(r"^\s*([123])\.\s+(.+?)\s*$", re.MULTILINE)
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+")
_WORD = re.compile(r"[a-z0-9']+")
_STOP = frozenset(
    "i my me a an the and or of to in on at for with it is was this that so be am just "
    "today last got had has have been went".split()
)

#: (G, R, S, F) sampling weights per task: more imaginative tasks draw more S and F sentences.
TASK_MIX: dict[str, tuple[float, float, float, float]] = {
    "apartment": (0.15, 0.27, 0.20, 0.38),
    "rec_letter": (0.12, 0.40, 0.08, 0.40),
    "stress_source": (0.22, 0.38, 0.09, 0.31),
    "weekend_itinerary": (0.26, 0.35, 0.10, 0.29),
    "dating_profile": (0.34, 0.37, 0.05, 0.24),
    "birthday_gift": (0.40, 0.33, 0.09, 0.18),
}

_REASONABLE = (
    "You clearly enjoy staying active when you get the chance.",
    "You seem to care a lot about the things you do in your free time.",
    "You probably appreciate a good routine after a busy week.",
    "You likely value time spent on your own hobbies.",
    "You come across as someone who enjoys learning new things.",
    "You seem to take pride in your work.",
)
_STEREOTYPE = (
    "As someone into {topic}, you probably prefer a minimalist, practical style.",
    "People who love {topic} tend to be detail-oriented, and you are no exception.",
    "Given your interest in {topic}, you are probably an early riser.",
    "Like most people into {topic}, you likely follow the latest gear and trends.",
)
_FABRICATED = {
    "apartment": (
        "Your apartment has warm lighting and a few plants by the window.",
        "There is a cozy reading nook in the corner of your living room.",
        "Your kitchen has open shelves lined with spices.",
        "You keep a large framed map on your wall.",
    ),
    "rec_letter": (
        "You consistently led your team through demanding deadlines.",
        "You mentored several junior colleagues with patience.",
        "Your colleagues describe you as the first to volunteer for hard problems.",
        "You have an exceptional record of delivering projects on time.",
    ),
    "stress_source": (
        "Your biggest stress is probably balancing work with your social life.",
        "You often worry about money at the end of the month.",
        "Family expectations weigh on you more than you admit.",
        "You lose sleep over deadlines at work.",
    ),
    "weekend_itinerary": (
        "You would love a slow brunch at a local cafe.",
        "You prefer walking tours over museums.",
        "You enjoy live music in small venues at night.",
        "You like to end the day with a quiet drink on a rooftop bar.",
    ),
    "dating_profile": (
        "You are looking for someone who shares your sense of adventure.",
        "You are happiest on long road trips with good company.",
        "You love trying new restaurants on weekends.",
        "You are close with your family and see them often.",
    ),
    "birthday_gift": (
        "You have been wanting a new pair of wireless headphones.",
        "You would enjoy a subscription box of specialty coffee.",
        "You collect vintage vinyl records.",
        "You like cozy sweaters in muted colors.",
    ),
}
_PATTERNS: tuple[tuple[str, str], ...] = (
    tuple((p, "INFERRED_REASONABLE") for p in _REASONABLE)
    + tuple((p.split("{topic}")[-1].strip(" ,."), "INFERRED_STEREOTYPE") for p in _STEREOTYPE)
    + tuple((p, "FABRICATED") for pool in _FABRICATED.values() for p in pool)
)
_MEMORY_POOL = {
    "preferences": ("prefers {w}", "enjoys {w}", "likes talking about {w}"),
    "personality_traits": ("curious about {w}", "passionate about {w}", "organised around {w}"),
    "demographics": ("probably lives near {w}", "likely in their late twenties"),
    "predictions": ("will probably plan more {w}", "may be interested in {w} events"),
}
_LABELS = ("GROUNDED", "INFERRED_REASONABLE", "INFERRED_STEREOTYPE", "FABRICATED")


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP and len(w) > 2}


@lru_cache(maxsize=1)
def _prefixes() -> dict[str, str]:
    """The fixed opening text of each template (before its first placeholder)."""
    from mirage_bench.prompts import load_template

    names = ("task_system", "task_self_audit", "probe", "accum_update", "persona_generation",
             "accum_retraction_judge")
    out = {name: load_template(name).text.split("{{")[0].strip()[:40] for name in names}
    out["judge_system"] = load_template("judge_system").text.strip()
    out["judge_claim_system"] = load_template("judge_claim_system").text.strip()
    out["prune_tail"] = load_template("accum_update_prune_control").text.split("}}")[-1].strip()[:80]
    return out


@lru_cache(maxsize=1)
def _task_prompts() -> dict[str, str]:
    from mirage_bench.tasks import TASKS

    return {t.prompt.strip(): t.task_id for t in TASKS}


class SimulatedResponder:
    """A deterministic simulated model *and* judge (see the module docstring). SIMULATION ONLY.

    ``leniency`` is the chance that the simulated self-audit calls an over-inferring sentence
    INFERRED_REASONABLE; ``judge_noise`` the chance that the simulated judge moves a label one step.
    """

    def __init__(self, seed: int = 0, *, leniency: float = 0.4, judge_noise: float = 0.08) -> None:
        self.seed = seed
        self.leniency = leniency
        self.judge_noise = judge_noise

    def _rng(self, messages: list[Message]) -> random.Random:
        digest = hashlib.sha256(json.dumps([[m.role, m.content] for m in messages]).encode()).hexdigest()
        return random.Random(f"{self.seed}:{digest}")

    def __call__(self, messages: list[Message], params: Any) -> str:
        """Answer one prompt (``params`` is unused: the answer depends on the messages only)."""
        pre = _prefixes()
        rng = self._rng(messages)
        first, last = messages[0].content, messages[-1].content
        if messages[0].role == "system" and first.strip() == pre["judge_system"]:
            return self._judge(last, rng)
        if messages[0].role == "system" and first.strip() == pre["judge_claim_system"]:
            return self._judge_claim(last, rng)
        if messages[0].role == "system" and first.startswith(pre["task_system"]):
            facts = [m.group(2) for m in _NUMBERED.finditer(first)][:3]
            if len(messages) >= 4 and last.startswith(pre["task_self_audit"]):
                return self._self_audit(last, facts, rng)
            return self._task(_task_prompts().get(last.strip(), "dating_profile"), facts, rng)
        if last.startswith(pre["probe"]):
            return self._probe([m.group(2) for m in _NUMBERED.finditer(last)][:3], rng)
        if last.startswith(pre["accum_update"]):
            return self._accum(last, pre["prune_tail"] in last, rng)
        if last.startswith(pre["persona_generation"]):
            return self._persona(last, rng)
        if last.startswith(pre["accum_retraction_judge"]):
            return self._retraction(last)
        raise ValueError(f"SimulatedResponder: not a MirageBench prompt: {last[:60]!r}")

    # --- the simulated model -------------------------------------------------------------------
    @staticmethod
    def _topic(facts: list[str]) -> str:
        words = sorted(_words(" ".join(facts)), key=lambda w: (-len(w), w))
        return words[0] if words else "your interests"

    def _task(self, task_id: str, facts: list[str], rng: random.Random) -> str:
        mix = TASK_MIX.get(task_id, TASK_MIX["dating_profile"])
        sentences: list[str] = []
        for _ in range(rng.randint(5, 10)):
            kind = rng.choices(_LABELS, weights=mix)[0]
            if kind == "GROUNDED" and facts:
                fact = rng.choice(facts).rstrip(".!?")
                sentences.append(f'You told me: "{fact}."')
            elif kind == "INFERRED_REASONABLE":
                sentences.append(rng.choice(_REASONABLE))
            elif kind == "INFERRED_STEREOTYPE":
                sentences.append(rng.choice(_STEREOTYPE).format(topic=self._topic(facts)))
            else:
                sentences.append(rng.choice(_FABRICATED.get(task_id, _FABRICATED["dating_profile"])))
        return " ".join(dict.fromkeys(sentences))

    @staticmethod
    def _classify(sentence: str, facts: list[str]) -> str:
        if '"' in sentence or any(len(_words(sentence) & _words(f)) >= 3 for f in facts):
            return "GROUNDED"
        for pattern, label in _PATTERNS:
            if pattern and pattern in sentence:
                return label
        return "FABRICATED"

    def _self_audit(self, prompt: str, facts: list[str], rng: random.Random) -> str:
        match = re.search(r'"""(.*)"""', prompt, re.DOTALL)
        response = match.group(1) if match else ""
        claims = []
        for sentence in _SENTENCE_SPLIT.split(response.strip()):
            if not sentence:
                continue
            label = self._classify(sentence, facts)
            if label in ("INFERRED_STEREOTYPE", "FABRICATED") and rng.random() < self.leniency:
                label = "INFERRED_REASONABLE"
            claims.append({"claim": sentence, "category": label, "reasoning": "simulated self-audit"})
        return json.dumps(claims)

    def _probe(self, facts: list[str], rng: random.Random) -> str:
        items = [{"claim": f.rstrip(".!?"), "type": "directly_stated", "reasoning": "stated"} for f in facts]
        for sentence in rng.sample(_REASONABLE, k=rng.randint(1, 3)):
            items.append({"claim": sentence, "type": "inferred", "reasoning": "one-step inference"})
        return json.dumps(items)

    def _accum(self, prompt: str, prune: bool, rng: random.Random) -> str:
        match = re.search(r"Current memory of the user:\s*(\{.*?\})\s*\n\s*\n", prompt, re.DOTALL)
        memory: dict[str, list[str]] = json.loads(match.group(1)) if match else {}
        utter = re.search(r'round (\d+)\):\s*"(.*)"', prompt, re.DOTALL)
        number, utterance = (int(utter.group(1)), utter.group(2)) if utter else (0, "")
        out = {k: list(memory.get(k, [])) for k in ("observed", *_MEMORY_POOL)}
        out["observed"].append(utterance.strip())
        words = sorted(_words(utterance)) or ["things"]
        for _ in range(rng.randint(1, 4)):
            fieldname = rng.choice(tuple(_MEMORY_POOL))
            entry = rng.choice(_MEMORY_POOL[fieldname]).format(w=rng.choice(words))
            if entry not in out[fieldname]:
                out[fieldname].append(f"{entry} (r{number})")
        drop = 0.3 if prune else 0.03
        for fieldname in _MEMORY_POOL:
            out[fieldname] = [e for e in out[fieldname] if rng.random() >= drop]
        return json.dumps(out)

    @staticmethod
    def _retraction(prompt: str) -> str:
        """The simulated retraction judge: a memory asserts the inference when it contains its text."""
        target = re.search(r'Contradicted inference: "(.*)"', prompt)
        wanted = (target.group(1) if target else "").casefold()
        blocks = re.findall(r"<<<BEGIN MEMORY>>>\n(.*?)\n<<<END MEMORY>>>", prompt, re.DOTALL)
        before, after, nxt = (blocks + ["(none)"] * 3)[:3]

        def verdict(block: str) -> str | None:
            if block.startswith("(none"):
                return None
            return "asserted" if wanted and wanted in block.casefold() else "retracted"

        return json.dumps({"stored_before": bool(wanted) and wanted in before.casefold(),
                           "after_round": verdict(after) or "retracted", "after_next_round": verdict(nxt),
                           "evidence": [], "reasoning": "simulated retraction judge"})

    # --- the simulated judge -------------------------------------------------------------------
    def _judge(self, prompt: str, rng: random.Random) -> str:
        block = re.search(r"<<<BEGIN RESPONSE (\w+)>>>\n(.*)\n<<<END RESPONSE \1>>>", prompt, re.DOTALL)
        head = prompt[: block.start()] if block else prompt
        response = block.group(2) if block else ""
        facts = [m.group(2) for m in _NUMBERED.finditer(head)][:3]
        truth_words = set()
        for line in head.splitlines():
            key, sep, value = line.partition(":")
            if sep and key.strip() in GROUND_TRUTH_FIELDS:
                truth_words |= _words(value)
        claims = []
        units = [u.strip(" -") for u in re.split(r"(?<=[.!?])\s+|\n", response) if u.strip(" -")]
        for unit in units:
            label = self._classify(unit, facts)
            if rng.random() < self.judge_noise:
                i = _LABELS.index(label)
                label = _LABELS[min(3, max(0, i + rng.choice((-1, 1))))]
            if label == "GROUNDED":
                accuracy = "CORRECT"
            elif _words(unit) & truth_words:
                accuracy = rng.choice(("CORRECT", "PARTIALLY_CORRECT"))
            else:
                accuracy = "INCORRECT" if rng.random() < 0.15 else "UNVERIFIABLE"
            claims.append(
                {"claim": unit, "category": label, "accuracy": accuracy, "reasoning": "simulated judge"}
            )
        return json.dumps({"claims": claims})

    def _judge_claim(self, prompt: str, rng: random.Random) -> str:
        """Fixed-claim judging (``judge-claims``): one label for the fenced claim."""
        block = re.search(r"<<<BEGIN CLAIM (\w+)>>>\n(.*)\n<<<END CLAIM \1>>>", prompt, re.DOTALL)
        facts = [m.group(2) for m in _NUMBERED.finditer(prompt[: block.start()] if block else prompt)][:3]
        label = self._classify(block.group(2) if block else "", facts)
        if rng.random() < self.judge_noise:
            i = _LABELS.index(label)
            label = _LABELS[min(3, max(0, i + rng.choice((-1, 1))))]
        return json.dumps({"label": label, "reasoning": "simulated judge"})

    # --- simulated persona generation ----------------------------------------------------------
    def _persona(self, prompt: str, rng: random.Random) -> str:
        occ = re.search(r"Target occupation seed:\s*(.+?)\.?\s*$", prompt, re.MULTILINE)
        cat = re.search(r"Category:\s*([a-z\-]+)", prompt)
        occupation = occ.group(1).strip() if occ else "teacher"
        category = cat.group(1) if cat else "neutral"
        name = rng.choice(("Sam Rivera", "Priya Nair", "Jonas Berg", "Amara Okafor", "Lena Fischer"))
        truth: dict[str, Any] = {
            "name": name,
            "age": rng.randint(22, 64),
            "gender": rng.choice(("female", "male", "non-binary")),
            "occupation": occupation,
            "city": rng.choice(("Denver", "Leeds", "Osaka", "Porto")),
            "hobbies": rng.sample(["chess", "trail running", "pottery", "birdwatching", "salsa"], k=3),
            "personality": "calm and curious",
            "dietary_style": "vegetarian",
            "living_situation": "rents a flat with one roommate",
            "relationship_status": "married",
            "media_taste": "jazz and history podcasts",
            "pet": "none",
            "exercise_habits": "cycles to work",
            "work_life_pattern": "regular hours, free weekends",
            "quirk": "names every houseplant",
        }
        facts = [
            f"I've been working as a {occupation} for a few years now.",
            f"Spent my Saturday on {truth['hobbies'][0]} and loved it.",
            f"Can't wait to get back to {truth['hobbies'][1]} this weekend.",
        ]
        return json.dumps({"ground_truth": truth, "revealed_facts": facts, "stereotype_type": category})


def simulated_backend(
    *,
    seed: int = 0,
    latency_s: float = 0.0,
    fault_rate: float = 0.0,
    fault_kinds: tuple[str, ...] | None = None,
    leniency: float = 0.4,
    name: str = "scripted:simulate",
) -> Any:
    """A :class:`~mirage_bench.backends.scripted.ScriptedBackend` answering as :class:`SimulatedResponder`."""
    from mirage_bench.backends.scripted import FAULT_KINDS, ScriptedBackend

    return ScriptedBackend(
        SimulatedResponder(seed, leniency=leniency),
        latency_s=latency_s,
        fault_rate=fault_rate,
        fault_kinds=fault_kinds or FAULT_KINDS,
        seed=seed,
        name=name,
        snapshot=f"simulate-v1-seed{seed}",
        # a simulation measures nothing: flag its outputs like the smoke-test model's, so they are
        # never ranked beside a real judge or published as measured data
        smoke_test=True,
    )
