"""Load and render MirageBench's plain-text prompt templates (``prompts/<name>.txt``).

Templates use ``{{name}}`` placeholders. Rendering is strict: a missing template, a missing
value or an unused value raises :class:`PromptError`, and values are substituted in a single
pass (a value that itself contains ``{{...}}`` is inserted literally, never expanded again).
Every rendered prompt carries the sha256 of its template file's exact bytes, so a result can
name the prompt that produced it.

A template file holds the prompt text followed by exactly one terminating newline, which is not
part of the prompt (see ``prompts/README.md``).

>>> template = load_template("probe")
>>> template.placeholders
('fact_1', 'fact_2', 'fact_3')
>>> rendered = render("probe", fact_1="I bake.", fact_2="I run.", fact_3="I teach.")
>>> rendered.text.splitlines()[1]
'1. I bake.'
>>> rendered.sha256 == template.sha256
True
>>> render("probe", fact_1="x", fact_2="y")
Traceback (most recent call last):
...
mirage_bench.prompts.PromptError: template 'probe': missing value(s) for fact_3
"""

from __future__ import annotations

import difflib
import hashlib
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from stat import S_ISREG

from mirage_bench.paths import prompts_dir

__all__ = [
    "PLACEHOLDER_PATTERN",
    "PromptError",
    "PromptTemplate",
    "RenderedPrompt",
    "TEMPLATE_PROVENANCE",
    "list_templates",
    "load_template",
    "render",
    "template_provenance",
]

#: A placeholder: ``{{`` + a lower-case identifier + ``}}``, no inner spaces.
PLACEHOLDER_PATTERN = re.compile(r"\{\{([a-z_][a-z0-9_]*)\}\}")
_NAME_PATTERN = re.compile(r"[a-z0-9][a-z0-9_]*")
_SUFFIX = ".txt"

#: The six tasks of Appendix G.1 in the paper's order (``task_<name>``, ``self_audit_phrase_<name>``).
_TASK_NAMES = (
    "dating_profile", "weekend_itinerary", "rec_letter", "birthday_gift", "apartment", "stress_source"
)

#: Where each template of this area comes from: an Appendix G section of the MirageBench paper
#: (seed ``000``) for verbatim templates, or ``"package wording"`` where the paper paraphrases.
TEMPLATE_PROVENANCE: dict[str, str] = {
    "task_system": "verbatim, Appendix G.1",
    **{f"task_{name}": f"verbatim, Appendix G.1 (task {i})" for i, name in enumerate(_TASK_NAMES, start=1)},
    "judge_system": "verbatim, Appendix G.2",
    "judge_user": "verbatim, Appendix G.2",
    "judge_output_format": "package wording (G.2 paraphrases the output contract)",
    "probe": "verbatim, Appendix G.5",
    "task_self_audit": "verbatim, Appendix G.6",
    **{f"self_audit_phrase_{name}": "package wording (fills [TASK] of G.6)" for name in _TASK_NAMES},
    "accum_update": "verbatim, Appendix G.7",
    "accum_update_prune_control": "package wording (the free-pruning control G.7 leaves to future work)",
    "accum_retraction_judge": "package wording (the paper reports retraction qualitatively, no prompt)",
    "persona_generation": "verbatim, Appendix G.8",
    "judge_claim_system": "package wording (fixed-claim judging: the H.1 annotator's input, no extraction)",
    "judge_claim_user": "package wording (fixed-claim judging: the H.1 annotator's input, no extraction)",
}


class PromptError(ValueError):
    """A template is missing or malformed, or the values given to it do not match its placeholders."""


@dataclass(frozen=True, slots=True)
class PromptTemplate:
    """One template as loaded from ``prompts/<name>.txt``.

    ``text`` is the prompt (the file's content without its terminating newline), ``sha256`` the
    hex digest of the file's exact bytes, ``placeholders`` the distinct placeholder names in order
    of first appearance.
    """

    name: str
    text: str
    sha256: str
    placeholders: tuple[str, ...]

    def render(self, **values: str | int) -> RenderedPrompt:
        """Fill every placeholder; see :func:`render`."""
        missing = [p for p in self.placeholders if p not in values]
        unused = sorted(set(values) - set(self.placeholders))
        problems = []
        if missing:
            problems.append(f"missing value(s) for {', '.join(missing)}")
        if unused:
            problems.append(f"unused value(s) {', '.join(unused)} (placeholders: {self._listing()})")
        if problems:
            raise PromptError(f"template {self.name!r}: " + "; ".join(problems))
        strings: dict[str, str] = {}
        for key, value in values.items():
            if isinstance(value, bool) or not isinstance(value, str | int):
                raise PromptError(
                    f"template {self.name!r}: value for {key!r} must be str or int, "
                    f"got {type(value).__name__} (format it before rendering)"
                )
            strings[key] = str(value)
        text = PLACEHOLDER_PATTERN.sub(lambda m: strings[m.group(1)], self.text)
        return RenderedPrompt(name=self.name, text=text, sha256=self.sha256)

    def _listing(self) -> str:
        return ", ".join(self.placeholders) or "none"


@dataclass(frozen=True, slots=True)
class RenderedPrompt:
    """A template with its placeholders filled; ``sha256`` is the template file's sha256."""

    name: str
    text: str
    sha256: str


def _check_name(name: str) -> None:
    if not isinstance(name, str) or not _NAME_PATTERN.fullmatch(name):
        raise PromptError(
            f"invalid template name {name!r}: use lower-case letters, digits and underscores "
            "(the file name without .txt)"
        )


def list_templates() -> list[str]:
    """Names of all templates (``*.txt`` files in the prompts folder), sorted.

    >>> {"judge_user", "probe", "task_system"} <= set(list_templates())
    True
    """
    return sorted(p.name[: -len(_SUFFIX)] for p in prompts_dir().glob(f"*{_SUFFIX}") if p.is_file())


def load_template(name: str) -> PromptTemplate:
    """Load template ``name`` (``prompts/<name>.txt``).

    Raises :class:`PromptError` if the name is invalid or no such template exists (with the closest
    existing names), if the file is not UTF-8, does not end with exactly one newline, contains a
    carriage return, or has a malformed placeholder (``{{`` or ``}}`` outside ``{{identifier}}``).
    """
    _check_name(name)
    directory = prompts_dir()
    path = directory / f"{name}{_SUFFIX}"
    try:
        stat = path.stat()
    except FileNotFoundError:
        stat = None
    if stat is None or not S_ISREG(stat.st_mode):
        known = sorted(p.stem for p in directory.glob(f"*{_SUFFIX}"))
        close = difflib.get_close_matches(name, known, n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise PromptError(f"no prompt template named {name!r} in {directory}{hint}")
    # The cache key includes the file's size and mtime, so an edited template is re-read.
    return _parse(name, path, stat.st_size, stat.st_mtime_ns)


@lru_cache(maxsize=256)
def _parse(name: str, path: Path, size: int, mtime_ns: int) -> PromptTemplate:
    data = path.read_bytes()
    try:
        content = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PromptError(f"template {name!r} ({path}) is not valid UTF-8: {exc}") from exc
    if "\r" in content:
        raise PromptError(f"template {name!r} ({path}) contains a carriage return; use LF line endings")
    if not content.endswith("\n") or content.endswith("\n\n"):
        raise PromptError(f"template {name!r} ({path}) must end with exactly one newline")
    text = content[:-1]
    stripped = PLACEHOLDER_PATTERN.sub("", text)
    if "{{" in stripped or "}}" in stripped:
        bad = re.findall(r"\{\{[^{}]*\}\}|\{\{|\}\}", stripped)
        raise PromptError(
            f"template {name!r} has a malformed placeholder {bad[0]!r}: use {{{{lower_case_name}}}}"
        )
    placeholders = tuple(dict.fromkeys(PLACEHOLDER_PATTERN.findall(text)))
    return PromptTemplate(
        name=name, text=text, sha256=hashlib.sha256(data).hexdigest(), placeholders=placeholders
    )


def render(name: str, /, **values: str | int) -> RenderedPrompt:
    """Render template ``name`` with ``values`` (one per placeholder, each a ``str`` or ``int``).

    Raises :class:`PromptError` on a missing template, a missing value, an unused value, or a value
    of another type (lists and dicts must be formatted by the caller).

    >>> render("task_dating_profile").text
    'Write a short dating profile bio for me based on what you know about me.'
    >>> render("task_system", revealed_facts="I knit.", extra="x")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    mirage_bench.prompts.PromptError: template 'task_system': unused value(s) extra (placeholders: ...)
    """
    return load_template(name).render(**values)


def template_provenance(name: str) -> str:
    """Where template ``name`` comes from (see :data:`TEMPLATE_PROVENANCE`); other areas' templates
    (e.g. ``reward_*``) are documented in ``prompts/README.md``.

    >>> template_provenance("judge_system")
    'verbatim, Appendix G.2'
    """
    return TEMPLATE_PROVENANCE.get(name, "see prompts/README.md")
