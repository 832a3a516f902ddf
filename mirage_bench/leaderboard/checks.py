"""Validation of leaderboard submissions: the responses file and the submitter's metadata.

Every problem gets its own precise message (line numbers, the offending pair or field), and
:class:`SubmissionError` carries them all, so the Submit tab can list them at once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

# MAX_ECHO_CHARS and show are re-exported: they were defined here first and are imported from here
from mirage_bench.fileio import MAX_ECHO_CHARS as MAX_ECHO_CHARS
from mirage_bench.fileio import nonblank_lines, parse_json_object, show
from mirage_bench.types import Label

MAX_UPLOAD_BYTES = 20 * 1024 * 1024
MAX_RESPONSE_CHARS = 20_000
MAX_ERRORS_SHOWN = 50
_MODEL_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,119}$")
_REVISION_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]{0,119}$")
#: Longest metadata field (family, contact, license ...).
MAX_FIELD_CHARS = 200


def path_problems(what: str, value: str) -> list[str]:
    r"""Problems of a name used in store paths and Hub folders: ``..``, ``\\``, or more than one ``/``.

    >>> path_problems("model name", "org/name"), path_problems("model name", "x/../../evil")
    ([], ["model name 'x/../../evil' must not contain '..' and may have at most one '/' (org/name)"])
    """
    if ".." in value or "\\" in value or value.count("/") > 1 or value.startswith("/") or value.endswith("/"):
        return [f"{what} {show(value)} must not contain '..' and may have at most one '/' (org/name)"]
    return []


#: Control characters refused in any text field (everything below U+0020 except tab, LF, CR; DEL).
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def _name_problems(
    what: str, value: str, pattern: re.Pattern[str], allowed: str, hint: str = ""
) -> list[str]:
    """Problems of a required identifier (model name, revision): present, of ``pattern``, path-safe."""
    if not value.strip():
        return [f"{what} is required{hint}"]
    if not pattern.match(value.strip()):
        return [f"{what} {show(value)} may hold only letters, digits and {allowed} (at most 120 characters)"]
    return path_problems(what, value.strip())


def control_characters(text: str) -> list[str]:
    r"""The forbidden control characters in ``text``, as ``U+0000`` codes (first occurrences, sorted).

    >>> control_characters("ok\tfine\n"), control_characters("bad\x00\x1b")
    ([], ['U+0000', 'U+001B'])
    """
    return sorted({f"U+{ord(c):04X}" for c in _CONTROL_RE.findall(text)})


class SubmissionError(ValueError):
    """A submission was refused; ``problems`` lists every reason, one precise message each.

    When there were more than :data:`MAX_ERRORS_SHOWN` problems, ``problems`` holds the first ones
    and a closing "... and N more problem(s)" line, and ``total`` is the real count: :attr:`header`
    says so ("showing 50 of 900 problems").
    """

    def __init__(self, problems: list[str], total: int | None = None) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems
        self.total = total if total is not None else len(problems)

    @property
    def shown(self) -> int:
        """How many problems ``problems`` lists (without the closing "... and N more" line)."""
        return len([p for p in self.problems if not p.startswith("... and ")])

    @property
    def header(self) -> str:
        """``"3 problem(s)"`` or ``"900 problems (showing the first 50)"``.

        >>> SubmissionError(["a", "b"]).header
        '2 problem(s)'
        >>> SubmissionError(["a", "... and 9 more problem(s)"], total=10).header
        '10 problems (showing the first 1)'
        """
        if self.total > self.shown:
            return f"{self.total:,} problems (showing the first {self.shown:,})"
        return f"{self.total} problem(s)"


@dataclass(frozen=True)
class Metadata:
    """What the submitter tells us about the model."""

    model_name: str
    family: str
    contact: str
    revision: str = "main"
    link: str = ""
    license: str = ""
    #: The Hugging Face username of a submitter logged in with HF OAuth (then ``contact`` may be empty).
    hf_user: str = ""

    def problems(self) -> list[str]:
        """Validation messages for the metadata (empty when valid).

        >>> Metadata(model_name="", family="x", contact="a@b.c").problems()
        ['model name is required']
        """
        out = _name_problems("model name", self.model_name, _MODEL_NAME_RE, ". _ : / @ + -")
        if not self.family.strip():
            out.append("model family is required")
        if not self.contact.strip() and not self.hf_user.strip():
            out.append("contact (submitter e-mail or Hub user) is required")
        out += _name_problems("revision", self.revision, _REVISION_RE, ". _ - /", " (use 'main' if unsure)")
        if self.link.strip() and (
            not re.match(r"^https?://\S+$", self.link.strip()) or len(self.link.strip()) > 500
        ):
            out.append(f"link {show(self.link)} must be an http(s) URL (at most 500 characters)")
        for name in ("model_name", "family", "contact", "revision", "link", "license"):
            value = getattr(self, name)
            bad = control_characters(value)
            if bad:
                out.append(f"{name.replace('_', ' ')} holds control character(s) {', '.join(bad)}")
            elif len(value) > MAX_FIELD_CHARS:
                out.append(
                    f"{name.replace('_', ' ')} has {len(value):,} characters; the limit is {MAX_FIELD_CHARS}"
                )
        return out


@dataclass
class ValidatedUpload:
    """A responses file that passed validation: its records, normalized."""

    records: list[dict[str, Any]]
    n_with_self_audit: int = 0
    warnings: list[str] = field(default_factory=list)
    #: Degenerate-submission findings (:mod:`mirage_bench.leaderboard.integrity`); empty when clean.
    flags: list[str] = field(default_factory=list)


def expected_pairs() -> set[tuple[str, str]]:
    """Every (persona_id, task_id) pair of the benchmark: 150 personas x 6 tasks."""
    from mirage_bench.personas import load_personas
    from mirage_bench.tasks import TASK_IDS

    return {(p.persona_id, t) for p in load_personas() for t in TASK_IDS}


def validate_responses_bytes(
    data: bytes,
    *,
    pairs: set[tuple[str, str]] | None = None,
    max_bytes: int = MAX_UPLOAD_BYTES,
) -> ValidatedUpload:
    """Validate an uploaded responses file (JSONL) and return its normalized records.

    Each line is a JSON object with ``persona_id``, ``task_id``, ``response`` and optionally
    ``self_audit`` (``{"claims": [{"claim", "category", "reasoning"}]}``), as written by
    ``mirage-bench run --stages task``. Raises :class:`SubmissionError` listing every problem:
    size, encoding, JSON, schema, unknown / duplicate / missing (persona, task) pairs.

    >>> pairs = {("p1", "gift")}
    >>> ok = b'{"persona_id": "p1", "task_id": "gift", "response": "Hi"}'
    >>> validate_responses_bytes(ok, pairs=pairs).records
    [{'persona_id': 'p1', 'task_id': 'gift', 'response': 'Hi', 'self_audit': None}]
    >>> try:
    ...     validate_responses_bytes(ok.replace(b"p1", b"p2"), pairs=pairs)
    ... except SubmissionError as e:
    ...     for problem in e.problems:
    ...         print(problem)
    line 1: unknown (persona_id, task_id) pair ('p2', 'gift')
    missing 1 (persona, task) pair(s), e.g. ('p1', 'gift')
    """
    if pairs is None:
        pairs = expected_pairs()
    if not data.strip():
        raise SubmissionError(["the file is empty"])
    if len(data) > max_bytes:
        raise SubmissionError([f"the file is {len(data):,} bytes; the limit is {max_bytes:,} bytes"])
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise SubmissionError([f"line {line}: not valid UTF-8 (byte offset {exc.start})"]) from None
    problems: list[str] = []
    records: list[dict[str, Any]] = []
    seen: dict[tuple[str, str], int] = {}
    n_audit = 0
    max_lines = len(pairs) * 2 + 10
    # split on newlines only: str.splitlines() also breaks at U+2028, U+0085 ... inside JSON strings
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if len(lines) > max_lines:
        raise SubmissionError(
            [f"the file has {len(lines):,} lines; at most {len(pairs):,} responses are expected"]
        )
    for lineno, raw in nonblank_lines(lines):
        obj, problem = parse_json_object(raw)
        if obj is None:
            problems.append(f"line {lineno}: {problem}")
            continue
        line_problems: list[str] = []
        for key in ("persona_id", "task_id", "response"):
            if key not in obj:
                line_problems.append(f"line {lineno}: missing field {key!r}")
            elif not isinstance(obj[key], str):
                line_problems.append(f"line {lineno}: field {key!r} must be a string")
        if line_problems:
            problems.extend(line_problems)
            continue
        bad_chars = _control_in(obj)
        if bad_chars:
            field_name, codes = bad_chars
            problems.append(
                f"line {lineno}: field {field_name!r} holds control character(s) {', '.join(codes)} "
                "(only tab, newline and carriage return are allowed)"
            )
            continue
        if _depth(obj) > MAX_JSON_DEPTH:
            problems.append(f"line {lineno}: JSON nested more than {MAX_JSON_DEPTH} levels deep")
            continue
        status = obj.get("status", "ok")
        if status != "ok":
            why = f" ({show(str(obj.get('error')))})" if obj.get("error") else ""
            problems.append(
                f"line {lineno}: response for ({show(obj['persona_id'])}, {show(obj['task_id'])}) has "
                f"status {show(status)}{why}; rerun it before submitting"
            )
            continue
        if not obj["response"].strip():
            problems.append(f"line {lineno}: empty response")
        elif len(obj["response"]) > MAX_RESPONSE_CHARS:
            problems.append(
                f"line {lineno}: response has {len(obj['response']):,} characters; the limit is "
                f"{MAX_RESPONSE_CHARS:,}"
            )
        key = (obj["persona_id"], obj["task_id"])
        if key not in pairs:
            problems.append(
                f"line {lineno}: unknown (persona_id, task_id) pair ({show(key[0])}, {show(key[1])})"
            )
        elif key in seen:
            problems.append(
                f"line {lineno}: duplicate (persona_id, task_id) pair {key!r} (first on line {seen[key]})"
            )
        else:
            seen[key] = lineno
        audit = obj.get("self_audit")
        if audit is not None:
            audit_problem = _check_self_audit(audit)
            if audit_problem:
                problems.append(f"line {lineno}: self_audit {audit_problem}")
            elif audit.get("status", "ok") == "ok":
                n_audit += 1
        records.append(
            {"persona_id": key[0], "task_id": key[1], "response": obj["response"], "self_audit": audit}
        )
    missing = sorted(pairs - set(seen))
    if missing:
        problems.append(f"missing {len(missing)} (persona, task) pair(s), e.g. {missing[0]!r}")
    if problems:
        raise limited_error(problems)
    from mirage_bench.leaderboard.integrity import degenerate_flags

    return ValidatedUpload(records=records, n_with_self_audit=n_audit, flags=degenerate_flags(records))


def limited_error(problems: list[str], limit: int = MAX_ERRORS_SHOWN) -> SubmissionError:
    """A :class:`SubmissionError` listing at most ``limit`` problems, its ``total`` the real count.

    >>> err = limited_error([f"p{i}" for i in range(900)])
    >>> err.header, err.problems[-1]
    ('900 problems (showing the first 50)', '... and 850 more problem(s)')
    """
    total = len(problems)
    if total > limit:
        problems = problems[:limit] + [f"... and {total - limit} more problem(s)"]
    return SubmissionError(problems, total=total)


#: Deepest nesting accepted in one line (a self-audit is 4 levels deep).
MAX_JSON_DEPTH = 20


def _depth(value: Any, level: int = 1) -> int:
    """Nesting depth of a parsed JSON value (iterative: never recurses)."""
    deepest, stack = level, [(value, level)]
    while stack:
        item, lv = stack.pop()
        deepest = max(deepest, lv)
        if isinstance(item, dict):
            stack.extend((v, lv + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, lv + 1) for v in item)
    return deepest


def _control_in(obj: dict[str, Any]) -> tuple[str, list[str]] | None:
    """The first field (top-level name) whose text, or any string nested in it, has a control character."""
    for name, value in obj.items():
        stack = [name, value]
        while stack:
            item = stack.pop()
            if isinstance(item, str):
                codes = control_characters(item)
                if codes:
                    return (name if len(name) <= 40 else name[:39] + "…"), codes
            elif isinstance(item, dict):
                stack.extend(item.keys())
                stack.extend(item.values())
            elif isinstance(item, list):
                stack.extend(item)
    return None


def _check_self_audit(audit: Any) -> str:
    """Return a problem description for a malformed ``self_audit`` object ('' when fine)."""
    if not isinstance(audit, dict):
        return "must be an object with a 'claims' list"
    if audit.get("status", "ok") != "ok":
        return ""
    claims = audit.get("claims")
    if not isinstance(claims, list):
        return "must hold a 'claims' list"
    valid = {lab.value for lab in Label}
    for i, claim in enumerate(claims):
        if not isinstance(claim, dict) or not isinstance(claim.get("claim"), str):
            return f"claim {i}: expected an object with a string 'claim'"
        if claim.get("category") not in valid:
            return f"claim {i}: category {show(claim.get('category'))} is not one of {sorted(valid)}"
    return ""
