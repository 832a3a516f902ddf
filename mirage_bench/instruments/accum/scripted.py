"""SCRIPTED test doubles for Accum: a memory model that stores planned inferences, and a retraction
judge that applies the rubric to hand-labelled entries. For tests and demos only; never a result.

:class:`PlannedMemoryModel` answers the ``accum_update`` prompts: it copies the current memory,
adds the round's utterance to ``observed`` and applies the round's plan (entries to add, remove or
replace), so a test can make a model that keeps, paraphrases, revises or drops an inference.

:class:`RubricRetractionJudge` answers ``accum_retraction_judge`` prompts by the prompt's rubric,
with the semantic step done by a person in advance: ``labels`` says, per contradicted inference,
which memory entries *assert* it and which *revise* it. A memory is ``asserted`` when one of its
entries asserts the inference, else ``revised`` when one revises it, else ``retracted``. It reads
only what the prompt shows (the inference and the three memories), so it tests the whole path:
rendering, schema, parsing, verdicts and the outcome.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from mirage_bench.types import Message

_MEMORY_FIELDS = ("observed", "preferences", "personality_traits", "demographics", "predictions")
_UPDATE = re.compile(
    r'Current memory of the user:\n(.*?)\n\nNew user message \(round (\d+)\):\n"(.*?)"\n\n', re.DOTALL
)
_BLOCK = re.compile(r"<<<BEGIN MEMORY>>>\n(.*?)\n<<<END MEMORY>>>", re.DOTALL)


@dataclass
class RoundPlan:
    """What the planned model does to the memory in one round (beyond recording the utterance)."""

    add: Mapping[str, Sequence[str]] = field(default_factory=dict)
    remove: Sequence[str] = ()
    replace: Mapping[str, str] = field(default_factory=dict)


@dataclass
class PlannedMemoryModel:
    """A scripted Accum model following ``plan`` (round number -> :class:`RoundPlan`)."""

    plan: Mapping[int, RoundPlan]

    def __call__(self, messages: list[Message], params: Any) -> str:
        prompt = messages[-1].content
        found = _UPDATE.search(prompt)
        if found is None:
            raise ValueError("PlannedMemoryModel: not an accum_update prompt")
        memory = json.loads(found.group(1))
        number, utterance = int(found.group(2)), found.group(3)
        out = {k: list(memory.get(k, [])) for k in _MEMORY_FIELDS}
        out["observed"].append(utterance)
        step = self.plan.get(number, RoundPlan())
        for key in out:
            out[key] = [step.replace.get(e, e) for e in out[key] if e not in step.remove]
        for key, entries in step.add.items():
            out[key] += [e for e in entries if e not in out[key]]
        return json.dumps(out)


@dataclass
class RubricRetractionJudge:
    """A scripted retraction judge applying the rubric to hand labels (see the module docstring).

    ``labels[contradicts][entry]`` is ``"asserts"`` or ``"revises"``; an entry not listed does
    neither. ``calls`` counts the prompts answered.
    """

    labels: Mapping[str, Mapping[str, str]]
    calls: int = 0

    def _verdict(self, block: str, labels: Mapping[str, str]) -> str | None:
        if block.startswith("(none"):
            return None
        entries = [e for values in json.loads(block).values() for e in values]
        kinds = {labels.get(e) for e in entries}
        if "asserts" in kinds:
            return "asserted"
        return "revised" if "revises" in kinds else "retracted"

    def __call__(self, messages: list[Message], params: Any) -> str:
        prompt = messages[-1].content
        found = re.search(r'Contradicted inference: "(.*)"', prompt)
        blocks = _BLOCK.findall(prompt)
        if found is None or len(blocks) != 3:
            raise ValueError("RubricRetractionJudge: not an accum_retraction_judge prompt")
        self.calls += 1
        labels = self.labels.get(found.group(1), {})
        before, after, nxt = blocks
        evidence = [e for b in blocks if not b.startswith("(none")
                    for values in json.loads(b).values() for e in values if e in labels]
        return json.dumps({
            "stored_before": self._verdict(before, labels) == "asserted",
            "after_round": self._verdict(after, labels),
            "after_next_round": self._verdict(nxt, labels),
            "evidence": sorted(set(evidence)),
            "reasoning": "scripted rubric judge (hand-labelled entries)",
        })
