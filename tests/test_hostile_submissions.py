"""The hostile-input corpus: every malformed or gaming file / metadata gets a precise problem list
(with the line number where a line is at fault), short echoes and no traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mirage_bench.leaderboard.checks import (
    MAX_ECHO_CHARS,
    MAX_RESPONSE_CHARS,
    Metadata,
    SubmissionError,
    validate_responses_bytes,
)
from mirage_bench.leaderboard.store import SubmissionStore

PAIRS = {(p, t) for p in ("seed_001", "seed_002", "seed_003") for t in ("apartment", "birthday_gift")}
ORDER = sorted(PAIRS)
#: A problem message is never longer than this (echoed values are cut).
MAX_MESSAGE = 400


def good(i: int, **changes) -> dict:
    p, t = ORDER[i]
    return {"persona_id": p, "task_id": t, "response": f"A personal answer for {p} about {t}.", **changes}


def lines(*objs, raw: dict[int, str] | None = None) -> bytes:
    """JSONL of the good records with ``objs`` overriding the first ones and ``raw`` lines spliced in."""
    rows = [json.dumps(good(i)) for i in range(len(ORDER))]
    for i, obj in enumerate(objs):
        if obj is not None:
            rows[i] = obj if isinstance(obj, str) else json.dumps(obj)
    for i, text in (raw or {}).items():
        rows[i] = text
    return ("\n".join(rows) + "\n").encode()


DEEP = "[" * 100_000 + "]" * 100_000
NESTED = json.dumps(good(0, extra=json.loads("[" * 60 + "]" * 60)))

FILE_CASES: list[tuple[str, bytes, str]] = [
    ("empty", b"", "the file is empty"),
    ("blank lines only", b"\n \n\t\n", "the file is empty"),
    ("not utf-8", b'{"persona_id": "seed_001"}\n\xff\xfe', "line 2: not valid UTF-8"),
    ("utf-16", json.dumps(good(0)).encode("utf-16"), "line 1: not valid UTF-8"),
    ("top-level list", lines("[1, 2]"), "line 1: expected a JSON object, got list"),
    ("top-level string", lines('"hello"'), "line 1: expected a JSON object, got str"),
    ("top-level null", lines("null"), "line 1: expected a JSON object, got NoneType"),
    ("truncated json", lines('{"persona_id": "seed_001", "task'), "line 1: not valid JSON"),
    ("deeply nested line", lines(raw={2: DEEP}), "line 3: JSON nested too deeply"),
    ("nested field", lines(raw={0: NESTED}), "line 1: JSON nested more than 20 levels deep"),
    ("huge integer", lines(raw={1: '{"persona_id": ' + "9" * 5000 + "}"}), "line 2: not readable JSON"),
    ("NUL in response", lines(good(0, response="Hi\u0000there")), "line 1: field 'response' holds control"),
    ("ESC in response", lines(None, good(1, response="\u001b[31mred")), "line 2: field 'response' holds"),
    ("DEL in persona id", lines(good(0, persona_id="seed_001\u007f")), "line 1: field 'persona_id' holds"),
    (
        "control char in self-audit",
        lines(good(0, self_audit={"claims": [{"claim": "c", "category": "GROUNDED", "reasoning": "\a"}]})),
        "line 1: field 'self_audit' holds control character(s) U+0007",
    ),
    ("control char in a key", lines(good(0, **{"x\u0001": 1})), "line 1: field 'x\\x01' holds"),
    (
        "missing field",
        lines({"persona_id": "seed_001", "task_id": "apartment"}),
        "line 1: missing field 'response'",
    ),
    ("response is a number", lines(good(0, response=42)), "line 1: field 'response' must be a string"),
    ("response is a list", lines(good(0, response=["a"])), "line 1: field 'response' must be a string"),
    ("persona id is null", lines(good(0, persona_id=None)), "line 1: field 'persona_id' must be a string"),
    ("empty response", lines(good(0, response="")), "line 1: empty response"),
    ("whitespace response", lines(good(0, response=" \n\t ")), "line 1: empty response"),
    ("overlong response", lines(good(0, response="x" * (MAX_RESPONSE_CHARS + 1))), "line 1: response has"),
    ("unknown persona", lines(good(0, persona_id="nobody")), "line 1: unknown (persona_id, task_id) pair"),
    ("unknown task", lines(good(0, task_id="poem")), "line 1: unknown (persona_id, task_id) pair"),
    ("duplicate pair", lines(None, good(0)), "line 2: duplicate (persona_id, task_id) pair"),
    ("missing pairs", b"\n".join(lines().splitlines()[:3]), "missing 3 (persona, task) pair(s)"),
    ("failed status", lines(good(0, status="error", error="timeout")), "line 1: response for ('seed_001'"),
    ("self-audit not object", lines(good(0, self_audit="yes")), "line 1: self_audit must be an object"),
    ("self-audit claims not list", lines(good(0, self_audit={"claims": 3})), "line 1: self_audit must hold"),
    (
        "self-audit bad category",
        lines(good(0, self_audit={"claims": [{"claim": "c", "category": "MAYBE"}]})),
        "line 1: self_audit claim 0: category 'MAYBE'",
    ),
    (
        "self-audit huge category",
        lines(good(0, self_audit={"claims": [{"claim": "c", "category": "Z" * 10_000}]})),
        "(10,000 characters) is not one of",
    ),
    ("huge persona id", lines(good(0, persona_id="p" * 10_000)), "(10,000 characters)"),
    ("too many lines", ("\n".join([json.dumps(good(0))] * 40)).encode(), "the file has 40 lines"),
]


@pytest.mark.parametrize(("name", "data", "expected"), FILE_CASES, ids=[c[0] for c in FILE_CASES])
def test_hostile_file_is_refused_with_a_precise_message(name: str, data: bytes, expected: str) -> None:
    with pytest.raises(SubmissionError) as info:
        validate_responses_bytes(data, pairs=PAIRS)
    problems = info.value.problems
    assert any(expected in p for p in problems), problems
    assert all(len(p) <= MAX_MESSAGE for p in problems), [len(p) for p in problems]


OK_CASES: list[tuple[str, bytes]] = [
    ("tab newline and CR inside a response", lines(good(0, response="Line one\n\tLine two\r\n"))),
    ("U+2028 inside a response is not a line break", lines(good(0, response="one\u2028two\u0085three"))),
    ("CRLF line endings", lines().replace(b"\n", b"\r\n")),
    ("UTF-8 byte-order mark", b"\xef\xbb\xbf" + lines()),
    ("unknown extra fields", lines(good(0, extra={"a": [1, 2, {"b": None}]}))),
]


@pytest.mark.parametrize(("name", "data"), OK_CASES, ids=[c[0] for c in OK_CASES])
def test_unusual_but_valid_files_are_accepted(name: str, data: bytes) -> None:
    upload = validate_responses_bytes(data, pairs=PAIRS)
    assert len(upload.records) == len(PAIRS)


def test_the_problem_header_matches_what_is_listed() -> None:
    rows = [json.dumps({"persona_id": f"x{i}", "task_id": "apartment", "response": "r"}) for i in range(900)]
    pairs = {(f"x{i}", "apartment") for i in range(900)}
    with pytest.raises(SubmissionError) as info:
        validate_responses_bytes(("\n".join(["not json"] * 900)).encode(), pairs=pairs)
    err = info.value
    assert err.total == 901 and err.shown == 50  # 900 bad lines + "missing 900 pairs"
    assert err.header == "901 problems (showing the first 50)"
    assert err.problems[-1] == "... and 851 more problem(s)"
    assert rows  # the valid shape above is what the 900 lines should have been
    small = SubmissionError(["a", "b"])
    assert small.header == "2 problem(s)" and small.shown == 2


META_CASES: list[tuple[str, dict, str]] = [
    ("path traversal", {"model_name": "x/../../../../evil"}, "must not contain '..'"),
    ("two slashes", {"model_name": "a/b/c"}, "at most one '/'"),
    ("leading slash", {"model_name": "org/"}, "at most one '/'"),
    ("backslash", {"model_name": "org\\name"}, "may hold only letters"),
    ("spaces", {"model_name": "my model"}, "may hold only letters"),
    ("10,000-character name", {"model_name": "n" * 10_000}, "(10,000 characters)"),
    ("revision traversal", {"revision": "../main"}, "revision '../main'"),
    ("revision with two slashes", {"revision": "refs/pr/1/x"}, "at most one '/'"),
    ("NUL in family", {"family": "Fam\u0000ily"}, "family holds control character(s) U+0000"),
    ("10,000-character contact", {"contact": "c" * 10_000}, "contact has 10,000 characters"),
    ("javascript link", {"link": "javascript:alert(1)"}, "must be an http(s) URL"),
    ("empty fields", {"model_name": " ", "family": "", "contact": ""}, "model name is required"),
]


@pytest.mark.parametrize(("name", "changes", "expected"), META_CASES, ids=[c[0] for c in META_CASES])
def test_hostile_metadata_is_refused_with_a_short_message(name: str, changes: dict, expected: str) -> None:
    fields = {"model_name": "org/model", "family": "F", "contact": "a@b.c", **changes}
    problems = Metadata(**fields).problems()
    assert any(expected in p for p in problems), problems
    assert all(len(p) <= MAX_MESSAGE for p in problems)
    assert all("n" * (MAX_ECHO_CHARS + 1) not in p for p in problems)


def test_fine_names_and_revisions_pass() -> None:
    for name, rev in (("org/model-7b", "main"), ("model.v2", "v1.0"), ("org/m@x", "refs/pr")):
        assert Metadata(model_name=name, family="F", contact="a@b.c", revision=rev).problems() == []


def test_the_store_refuses_hostile_input_and_saves_nothing(tmp_path: Path) -> None:
    store = SubmissionStore(tmp_path)
    for data in (lines(raw={0: DEEP}), lines(good(0, response="x\u0000"))):
        with pytest.raises(SubmissionError) as info:
            store.submit_file(data, Metadata("x/../../evil", "F", "a@b.c"), pairs=PAIRS)
        assert any("must not contain '..'" in p for p in info.value.problems)
        assert any(p.startswith("line 1:") for p in info.value.problems)
    files = [p for p in tmp_path.rglob("*") if p.is_file() and not p.name.endswith(".lock")]
    assert files == []


def test_hostile_endpoint_fields_are_refused_with_short_messages(tmp_path: Path) -> None:
    store = SubmissionStore(tmp_path)
    meta = Metadata("org/model", "F", "a@b.c")
    for url, model, expected in (
        ("ftp://" + "h" * 10_000, "m", "(10,006 characters) must start with http"),
        ("http://10.0.0.5:8000/v1", "m" * 5_000, "must be one word of at most 200 characters"),
        ("http://10.0.0.5:8000/v1", "two words", "must be one word"),
    ):
        with pytest.raises(SubmissionError) as info:
            store.submit_endpoint(url, model, meta)
        assert any(expected in p for p in info.value.problems), info.value.problems
        assert all(len(p) <= MAX_MESSAGE for p in info.value.problems)
    assert store.list_requests() == []


def test_the_submit_command_prints_the_true_problem_count_and_the_flags(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from mirage_bench.cli import app
    from mirage_bench.personas import load_personas
    from mirage_bench.tasks import TASK_IDS

    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(["not json"] * 120) + "\n")
    args = ["--store", str(tmp_path / "store"), "--family", "F", "--contact", "a@b.c"]
    result = CliRunner().invoke(app, ["submit", str(bad), "--model-name", "org/bad", *args])
    assert result.exit_code == 2
    assert "not queued: 121 problems (showing the first 50)" in result.output  # 120 lines + missing pairs
    assert "... and 71 more problem(s)" in result.output and "Traceback" not in result.output
    same = tmp_path / "same.jsonl"
    same.write_text(
        "\n".join(
            json.dumps({"persona_id": p.persona_id, "task_id": t, "response": "Sure, happy to help!"})
            for p in load_personas()
            for t in TASK_IDS
        )
        + "\n"
    )
    result = CliRunner().invoke(app, ["submit", str(same), "--model-name", "org/same", *args])
    assert result.exit_code == 0, result.output
    assert "flagged: near_duplicate: 100% of responses" in result.output
    assert "flagged: near_empty: 100% of responses are nearly empty" in result.output
