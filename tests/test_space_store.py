"""The submission store: validation messages, queueing, duplicates, rate limit, concurrency, labels."""

from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from pathlib import Path

import pytest

from mirage_bench.leaderboard.store import (
    Metadata,
    Status,
    SubmissionError,
    SubmissionStore,
    validate_responses_bytes,
)

FIXTURES = Path(__file__).parent / "fixtures" / "space"
PAIRS = {(p, t) for p in ("seed_001", "seed_002", "seed_003") for t in ("apartment", "birthday_gift")}


def responses_bytes(pairs=PAIRS, **extra) -> bytes:
    lines = [
        json.dumps({"persona_id": p, "task_id": t, "response": f"Answer for {p} {t}.", **extra})
        for p, t in sorted(pairs)
    ]
    return ("\n".join(lines) + "\n").encode()


def meta(name: str = "org/model-a", contact: str = "a@example.org", **kw) -> Metadata:
    return Metadata(model_name=name, family="Fixture", contact=contact, **kw)


def test_valid_file_is_normalized() -> None:
    upload = validate_responses_bytes(responses_bytes(), pairs=PAIRS)
    assert len(upload.records) == len(PAIRS)
    assert set(upload.records[0]) == {"persona_id", "task_id", "response", "self_audit"}


def test_malformed_fixture_lists_every_problem_precisely() -> None:
    data = (FIXTURES / "malformed_responses.jsonl").read_bytes()
    with pytest.raises(SubmissionError) as info:
        validate_responses_bytes(
            data,
            pairs={
                ("seed_001", "apartment"),
                ("seed_002", "apartment"),
                ("seed_003", "apartment"),
                ("seed_004", "apartment"),
            },
        )
    problems = info.value.problems
    assert (
        "line 2: duplicate (persona_id, task_id) pair ('seed_001', 'apartment') (first on line 1)" in problems
    )
    assert "line 3: unknown (persona_id, task_id) pair ('nobody_999', 'apartment')" in problems
    assert "line 4: missing field 'response'" in problems
    assert any(p.startswith("line 5: not valid JSON") for p in problems)
    assert any(p.startswith("line 6: self_audit claim 0: category 'MAYBE'") for p in problems)
    assert any(p.startswith("missing 2 (persona, task) pair(s)") for p in problems)


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"", "the file is empty"),
        (b'{"persona_id": "seed_001"}\n\xff\xfe', "line 2: not valid UTF-8"),
        (b"[1, 2]", "line 1: expected a JSON object, got list"),
    ],
)
def test_encoding_and_shape_errors(data: bytes, expected: str) -> None:
    with pytest.raises(SubmissionError) as info:
        validate_responses_bytes(data, pairs=PAIRS)
    assert any(p.startswith(expected) for p in info.value.problems), info.value.problems


def test_size_limit() -> None:
    with pytest.raises(SubmissionError, match="the limit is 100 bytes"):
        validate_responses_bytes(responses_bytes(), pairs=PAIRS, max_bytes=100)


def test_metadata_problems() -> None:
    bad = Metadata(model_name="no spaces allowed", family="", contact="", link="ftp://x")
    problems = bad.problems()
    assert len(problems) == 4
    assert any("family is required" in p for p in problems)


def test_rejected_submission_changes_nothing(tmp_path: Path) -> None:
    store = SubmissionStore(tmp_path)
    with pytest.raises(SubmissionError):
        store.submit_file((FIXTURES / "malformed_responses.jsonl").read_bytes(), meta(), pairs=PAIRS)
    files = [p for p in tmp_path.rglob("*") if p.is_file() and not p.name.endswith(".lock")]
    assert files == []


def test_queue_duplicate_and_claim(tmp_path: Path) -> None:
    store = SubmissionStore(tmp_path)
    req = store.submit_file(responses_bytes(), meta(), pairs=PAIRS)
    assert req.status == Status.PENDING and req.n_responses == len(PAIRS)
    with pytest.raises(SubmissionError, match="already on the board or in the queue"):
        store.submit_file(responses_bytes(), meta(contact="b@example.org"), pairs=PAIRS)
    # another revision of the same model is fine
    store.submit_file(responses_bytes(), meta(contact="b@example.org", revision="v2"), pairs=PAIRS)
    claimed = store.claim_next()
    assert claimed is not None and claimed.submission_id == req.submission_id
    assert store.get(req.submission_id).status == Status.RUNNING
    assert [r["status"] for r in store.queue_rows()] == ["PENDING", "RUNNING"]
    assert "a@example.org" not in json.dumps(store.queue_rows())
    # a FAILED submission frees the name for a new attempt
    store.update(req.submission_id, status=Status.FAILED, reason="boom")
    store.submit_file(responses_bytes(), meta(contact="c@example.org"), pairs=PAIRS)


def test_rate_limit_per_submitter(tmp_path: Path) -> None:
    store = SubmissionStore(tmp_path, rate_limit=2, rate_window=timedelta(hours=1))
    for i in range(2):
        store.submit_file(responses_bytes(), meta(name=f"m{i}"), pairs=PAIRS)
    with pytest.raises(SubmissionError, match="rate limit"):
        store.submit_file(responses_bytes(), meta(name="m9"), pairs=PAIRS)
    store.submit_file(responses_bytes(), meta(name="m9", contact="other@example.org"), pairs=PAIRS)


def test_concurrent_submissions_lose_nothing(tmp_path: Path) -> None:
    store = SubmissionStore(tmp_path, rate_limit=100)
    barrier = threading.Barrier(8)

    def one(i: int) -> str:
        barrier.wait()
        # each thread has its own store object, as two Space workers or processes would
        return (
            SubmissionStore(tmp_path, rate_limit=100)
            .submit_file(responses_bytes(), meta(name=f"model-{i}", contact=f"u{i}@x.org"), pairs=PAIRS)
            .submission_id
        )

    with ThreadPoolExecutor(8) as pool:
        ids = list(pool.map(one, range(8)))
    assert len(set(ids)) == 8
    assert sorted(r.submission_id for r in store.list_requests()) == sorted(ids)


def test_concurrent_duplicates_only_one_wins(tmp_path: Path) -> None:
    barrier = threading.Barrier(6)

    def one(i: int) -> bool:
        barrier.wait()
        try:
            SubmissionStore(tmp_path).submit_file(responses_bytes(), meta(contact=f"u{i}@x.org"), pairs=PAIRS)
            return True
        except SubmissionError:
            return False

    with ThreadPoolExecutor(6) as pool:
        assert sum(pool.map(one, range(6))) == 1


def test_two_annotators_at_once_lose_nothing(tmp_path: Path) -> None:
    store = SubmissionStore(tmp_path)

    def label(args: tuple[str, int]) -> None:
        annotator, i = args
        store.append_label("s", annotator, {"item_id": f"item-{i}", "human_label": "GROUNDED"})

    work = [(a, i) for i in range(25) for a in ("ann1", "ann2")]
    with ThreadPoolExecutor(6) as pool:
        list(pool.map(label, work))
    for annotator in ("ann1", "ann2"):
        assert sorted(r["item_id"] for r in store.read_labels("s", annotator)) == sorted(
            f"item-{i}" for i in range(25)
        )
    # relabelling an item replaces the earlier label instead of duplicating it
    store.append_label("s", "ann1", {"item_id": "item-0", "human_label": "FABRICATED"})
    rows = store.read_labels("s", "ann1")
    assert len(rows) == 25 and rows[-1]["human_label"] == "FABRICATED"


def test_an_unreadable_request_is_logged_not_silently_skipped(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = SubmissionStore(tmp_path)
    sid = store.submit_file(responses_bytes(), meta(), pairs=PAIRS).submission_id
    bad = tmp_path / "requests" / "broken.json"
    bad.write_text('{"submission_id": "broken"')
    with caplog.at_level("WARNING", logger="mirage_bench.leaderboard.store"):
        listed = store.list_requests()
    assert [r.submission_id for r in listed] == [sid]
    assert bad.exists() and str(bad) in caplog.text and "skipped" in caplog.text
