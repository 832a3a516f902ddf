"""The six tasks: stable ids, verbatim G.1 prompts, self-audit phrases, Table 3 groundability order."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from mirage_bench.prompts import load_template, render
from mirage_bench.tasks import TASK_IDS, TASKS, get_task, tasks_by_groundability
from tests.seeds import G1_TASK_ORDER, SKIP_REASON, seed_path

HERE = Path(__file__).resolve().parent
SEED = seed_path() or Path(SKIP_REASON)  # a path that is not a file when the seed is absent
EXCERPT = HERE / "fixtures" / "prompts" / "seed_000_excerpt.txt"


@pytest.fixture(scope="module")
def paper() -> str:
    """The seed paper's text, or its verbatim excerpt (checked in test_prompts_verbatim.py)."""
    if SEED.is_file():
        return SEED.read_text(encoding="utf-8")
    return "\n\n".join(EXCERPT.read_text(encoding="utf-8").rstrip("\n").split("\n=====\n")[1:])


def _table3(paper: str) -> list[tuple[str, float]]:
    """(task row label, OI%) of Table 3, in the paper's row order."""
    start = paper.index("Task\tGrnd\tReas\tSter\tFab\tOI%\n")
    block = paper[start : paper.index("\n\n", start)]
    rows = [line.split("\t") for line in block.splitlines()[1:]]
    assert all(len(r) == 6 for r in rows)
    caption = paper[paper.index("Table 3:", start) :].splitlines()[0]
    assert "ordered by groundability" in caption
    return [(r[0], float(r[5])) for r in rows]


def test_task_ids_are_stable_and_in_g1_order() -> None:
    assert TASK_IDS == G1_TASK_ORDER
    assert tuple(t.task_id for t in TASKS) == TASK_IDS


def test_prompts_come_from_the_task_templates(paper: str) -> None:
    section = paper[paper.index("The 6 task prompts are:") : paper.index("G.2 Unified Judge Prompt")]
    g1 = list(re.findall(r"^\d\. \u201c(.*)\u201d$", section, flags=re.M))
    assert len(g1) == 6
    for task, text in zip(TASKS, g1, strict=True):
        assert task.template == f"task_{task.task_id}"
        assert task.prompt == load_template(task.template).text == text
        assert task.rendered_prompt.sha256 == load_template(task.template).sha256


def test_groundability_rank_follows_table3(paper: str) -> None:
    rows = _table3(paper)
    assert [label for label, _ in rows] == [t.display_name for t in tasks_by_groundability()]
    for position, (label, _) in enumerate(rows, start=1):
        (task,) = [t for t in TASKS if t.display_name == label]
        assert task.groundability_rank == position
    # Table 3's order is its OI order: the least groundable task (rank 1) has the highest OI.
    oi = [value for _, value in rows]
    assert oi == sorted(oi, reverse=True)


def test_groundability_extremes() -> None:
    assert tasks_by_groundability()[0].task_id == "apartment"
    assert tasks_by_groundability()[-1].task_id == "birthday_gift"
    assert sorted(t.groundability_rank for t in TASKS) == [1, 2, 3, 4, 5, 6]


def test_audit_descriptions_fill_the_self_audit_prompt() -> None:
    seen = set()
    for task in TASKS:
        phrase = task.audit_description
        assert phrase == load_template(task.audit_template).text
        assert phrase and "\n" not in phrase and phrase[0].islower() and not phrase.endswith(".")
        seen.add(phrase)
        text = render("task_self_audit", task=phrase, fact_1="a", fact_2="b", fact_3="c", response="r").text
        assert text.startswith(f"You were just asked to {phrase} for a user, given only these 3 facts")
    assert len(seen) == len(TASKS)


def test_get_task() -> None:
    assert get_task("rec_letter").display_name == "Rec. letter"
    with pytest.raises(KeyError, match="unknown task id 'apartmnt'.*did you mean 'apartment'"):
        get_task("apartmnt")


def test_tasks_are_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        TASKS[0].groundability_rank = 3  # type: ignore[misc]
