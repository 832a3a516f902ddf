"""The integrity detectors' corpora: ordinary responses and degenerate templates, as submissions.

Two separate files under ``tests/fixtures/integrity/``:

* ``tuning.jsonl``: the data the thresholds of
  :class:`mirage_bench.leaderboard.integrity.Thresholds` were set on (``benchmarks/bench_integrity.py``
  prints every statistic on it);
* ``heldout.jsonl``: different personas, tasks and wordings, never used for tuning; the tests check the
  thresholds on it.

The "ordinary" responses were written by hand by a project engineer in the style of an assistant
answering the benchmark's tasks from the persona's three revealed facts (they are not model outputs and
carry no judge labels). Degenerate submissions are built from the templates: the same text for every
persona (``refusal``, ``near_empty``, ``boilerplate``), the facts echoed back (``echo``), or one generic
template with a fact pasted in (``template``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

CORPUS_DIR = Path(__file__).parent / "fixtures" / "integrity"


def _rows(name: str) -> list[dict[str, Any]]:
    lines = (CORPUS_DIR / f"{name}.jsonl").read_text("utf-8").splitlines()
    return [json.loads(x) for x in lines if x.strip()]


def _fill(template: str, facts: list[str]) -> str:
    values: dict[str, str] = {}
    for i, fact in enumerate(facts, start=1):
        values[f"fact{i}"] = fact
        values[f"fact{i}_lower"] = fact[0].lower() + fact[1:]
    return template.format(**values)


def submissions(name: str) -> dict[str, list[dict[str, Any]]]:
    """``{"ordinary": records, "<kind> <n>": records, ...}`` for the corpus ``name``.

    Every degenerate submission covers the same (persona, task) pairs as the ordinary one.
    """
    from mirage_bench.personas import get_persona

    rows = _rows(name)
    ordinary = [
        {"persona_id": r["persona_id"], "task_id": r["task_id"], "response": r["response"]}
        for r in rows
        if r["kind"] == "ordinary"
    ]
    out: dict[str, list[dict[str, Any]]] = {"ordinary": ordinary}
    counters: dict[str, int] = {}
    for r in rows:
        if r["kind"] == "ordinary":
            continue
        counters[r["kind"]] = counters.get(r["kind"], 0) + 1
        out[f"{r['kind']} {counters[r['kind']]}"] = [
            {
                "persona_id": o["persona_id"],
                "task_id": o["task_id"],
                "response": _fill(r["template"], list(get_persona(o["persona_id"]).revealed_facts)),
            }
            for o in ordinary
        ]
    return out
