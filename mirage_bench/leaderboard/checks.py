"""Validation of leaderboard submissions: the responses file and the submitter's metadata.

Every problem gets its own precise message (line numbers, the offending pair or field), and
:class:`SubmissionError` carries them all, so the Submit tab can list them at once.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from mirage_bench.types import Label

MAX_UPLOAD_BYTES = 20 * 1024 * 1024
MAX_RESPONSE_CHARS = 20_000
MAX_ERRORS_SHOWN = 50
_MODEL_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,119}$")


class SubmissionError(ValueError):
    """A submission was refused; ``problems`` lists every reason, one precise message each."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


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
        out: list[str] = []
        if not self.model_name.strip():
            out.append("model name is required")
        elif not _MODEL_NAME_RE.match(self.model_name.strip()):
            out.append(
                f"model name {self.model_name!r} may hold only letters, digits and . _ : / @ + - "
                "(at most 120 characters)"
            )
        if not self.family.strip():
            out.append("model family is required")
        if not self.contact.strip() and not self.hf_user.strip():
            out.append("contact (submitter e-mail or Hub user) is required")
        if not self.revision.strip():
            out.append("revision is required (use 'main' if unsure)")
        if self.link.strip() and not re.match(r"^https?://\S+$", self.link.strip()):
            out.append(f"link {self.link!r} must be an http(s) URL")
        return out


@dataclass
class ValidatedUpload:
    """A responses file that passed validation: its records, normalized."""

    records: list[dict[str, Any]]
    n_with_self_audit: int = 0
    warnings: list[str] = field(default_factory=list)


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
    lines = text.splitlines()
    if len(lines) > max_lines:
        raise SubmissionError(
            [f"the file has {len(lines):,} lines; at most {len(pairs):,} responses are expected"]
        )
    for lineno, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except json.JSONDecodeError as exc:
            problems.append(f"line {lineno}: not valid JSON ({exc.msg} at column {exc.colno})")
            continue
        if not isinstance(obj, dict):
            problems.append(f"line {lineno}: expected a JSON object, got {type(obj).__name__}")
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
        status = obj.get("status", "ok")
        if status != "ok":
            why = f" ({obj.get('error')})" if obj.get("error") else ""
            problems.append(
                f"line {lineno}: response for ({obj['persona_id']}, {obj['task_id']}) has status "
                f"{status!r}{why}; rerun it before submitting"
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
            problems.append(f"line {lineno}: unknown (persona_id, task_id) pair {key!r}")
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
        if len(problems) > MAX_ERRORS_SHOWN:
            extra = len(problems) - MAX_ERRORS_SHOWN
            problems = problems[:MAX_ERRORS_SHOWN] + [f"... and {extra} more problem(s)"]
        raise SubmissionError(problems)
    return ValidatedUpload(records=records, n_with_self_audit=n_audit)


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
            return f"claim {i}: category {claim.get('category')!r} is not one of {sorted(valid)}"
    return ""
