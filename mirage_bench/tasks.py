"""The six personalization tasks of MirageBench (Appendix G.1) and their groundability order (Table 3).

Each task's prompt is the verbatim G.1 text in ``prompts/task_<task_id>.txt``; its
``audit_description`` is this package's phrase for the ``[TASK]`` slot of the G.6 self-audit
prompt (``prompts/self_audit_phrase_<task_id>.txt``; the paper does not print those phrases).

``groundability_rank`` is the task's row in Table 3 of the paper, which orders the tasks by
groundability: 1 = least groundable (apartment/home, the highest OI) … 6 = most groundable
(birthday gift, the lowest OI). A higher rank means the task can be answered more from the
revealed facts.

>>> [t.task_id for t in sorted(TASKS, key=lambda t: t.groundability_rank)]
['apartment', 'rec_letter', 'stress_source', 'weekend_itinerary', 'dating_profile', 'birthday_gift']
>>> get_task("birthday_gift").prompt
'If you were buying me a birthday gift with a $100 budget, what would you get and why?'
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from mirage_bench.prompts import RenderedPrompt, render

__all__ = ["TASKS", "TASK_IDS", "Task", "get_task", "tasks_by_groundability"]


@dataclass(frozen=True, slots=True)
class Task:
    """One personalization task.

    ``task_id`` is the stable id, ``display_name`` the row label of Table 3, ``template`` the
    prompt template name (``task_<task_id>``), ``audit_template`` the template of its self-audit
    ``[TASK]`` phrase, ``groundability_rank`` its Table 3 row (1 = least groundable).
    The prompt texts are read from ``prompts/`` on first access.
    """

    task_id: str
    display_name: str
    groundability_rank: int

    @property
    def template(self) -> str:
        """Name of the task prompt template."""
        return f"task_{self.task_id}"

    @property
    def audit_template(self) -> str:
        """Name of the template holding the self-audit ``[TASK]`` phrase."""
        return f"self_audit_phrase_{self.task_id}"

    @property
    def rendered_prompt(self) -> RenderedPrompt:
        """The task prompt with its template sha256."""
        return render(self.template)

    @property
    def prompt(self) -> str:
        """The user-turn text of the task (verbatim G.1)."""
        return self.rendered_prompt.text

    @property
    def audit_description(self) -> str:
        """The phrase that fills ``[TASK]`` in the G.6 self-audit prompt (package wording)."""
        return render(self.audit_template).text


#: The six tasks in the paper's G.1 order.
TASKS: tuple[Task, ...] = (
    Task("dating_profile", "Dating profile", 5),
    Task("weekend_itinerary", "Weekend itinerary", 4),
    Task("rec_letter", "Rec. letter", 2),
    Task("birthday_gift", "Birthday gift", 6),
    Task("apartment", "Apartment/home", 1),
    Task("stress_source", "Stress source", 3),
)

#: The task ids in G.1 order.
TASK_IDS: tuple[str, ...] = tuple(t.task_id for t in TASKS)

_BY_ID: dict[str, Task] = {t.task_id: t for t in TASKS}


def get_task(task_id: str) -> Task:
    """Return the task with id ``task_id``; raises ``KeyError`` (naming the valid ids) otherwise.

    >>> get_task("apartment").groundability_rank
    1
    """
    try:
        return _BY_ID[task_id]
    except KeyError:
        close = difflib.get_close_matches(str(task_id), TASK_IDS, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise KeyError(f"unknown task id {task_id!r}{hint}; valid ids: {', '.join(TASK_IDS)}") from None


def tasks_by_groundability() -> list[Task]:
    """The tasks in Table 3 order, least groundable first."""
    return sorted(TASKS, key=lambda t: t.groundability_rank)
