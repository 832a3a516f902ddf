"""Identity: the rate limit is keyed on the HF username of a logged-in submitter, and the Space
requires a login only where it should (on a Space, or when told to)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mirage_bench.leaderboard.store import Metadata, SubmissionError, SubmissionStore

PAIRS = {(p, t) for p in ("seed_001", "seed_002") for t in ("apartment", "birthday_gift")}


def _data() -> bytes:
    return "\n".join(
        json.dumps({"persona_id": p, "task_id": t, "response": f"Hi {p} {t}"}) for p, t in sorted(PAIRS)
    ).encode()


def test_rate_limit_counts_per_hf_user_whatever_the_contact(tmp_path: Path) -> None:
    store = SubmissionStore(tmp_path, rate_limit=2)
    for i in range(2):
        meta = Metadata(model_name=f"org/m{i}", family="F", contact=f"alias{i}@x.org", hf_user="alice")
        store.submit_file(_data(), meta, pairs=PAIRS)
    with pytest.raises(SubmissionError) as err:
        store.submit_file(_data(), Metadata(model_name="org/m9", family="F", contact="new@x.org",
                                            hf_user="Alice"), pairs=PAIRS)
    assert any("rate limit: 'Alice' already submitted 2 time(s)" in p for p in err.value.problems)
    # another HF user, and an anonymous local submitter with the same contact, are not limited by alice's
    bob_meta = Metadata(model_name="org/b1", family="F", contact="", hf_user="bob")
    store.submit_file(_data(), bob_meta, pairs=PAIRS)
    store.submit_file(_data(), Metadata(model_name="org/c1", family="F", contact="alias0@x.org"), pairs=PAIRS)
    bob = next(r for r in store.list_requests() if r.model_name == "org/b1")
    assert bob.hf_user == "bob" and bob.contact == "bob"  # the username stands in for the contact


def test_contact_is_required_only_without_a_login() -> None:
    assert "contact (submitter e-mail or Hub user) is required" in Metadata("org/m", "F", "").problems()
    assert Metadata("org/m", "F", "", hf_user="alice").problems() == []


def test_login_is_required_on_a_space_or_when_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    from space.identity import login_required

    monkeypatch.delenv("SPACE_ID", raising=False)
    monkeypatch.delenv("MIRAGE_REQUIRE_LOGIN", raising=False)
    assert login_required() is False  # local: the contact field is the fallback
    monkeypatch.setenv("SPACE_ID", "org/miragebench")
    assert login_required() is True
    monkeypatch.setenv("MIRAGE_REQUIRE_LOGIN", "0")
    assert login_required() is False
    assert login_required(True) is True
