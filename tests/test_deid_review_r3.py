"""Review of round 3 of the de-identifier: equivalences kept by the speed-ups and merges, and the
bugs found on odd input.

Every sentence and every name here is invented for the test.
"""

from __future__ import annotations

import random
import re

import pytest

from dataset_builder.deidentify import deidentify_records
from dataset_builder.entity_cues import find_titled_people
from dataset_builder.evidence import _word_before, spelled_acronyms
from tests.helpers_deid import FixedNer
from tests.helpers_records import raw_preference_record


def test_word_before_finds_what_a_search_of_the_whole_prefix_finds() -> None:
    whole = re.compile(r"([^\W\d_][\w'-]*)[ \t\"'(]*$")
    rng = random.Random(7)
    alphabet = "aB1_'- \t\"(\n.,é)ß²"
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        for end in range(len(text) + 1):
            expected = whole.search(text[:end])
            found = _word_before(text, text[::-1], end)
            assert (found and found.span(1)) == (expected and expected.span(1)), (text, end)


def test_word_before_after_a_long_word_and_a_final_line_break() -> None:
    text = "x" * 3000 + "ab's' \nPZU"
    found = _word_before(text, text[::-1], len(text) - 3)
    assert found is not None and found.group(1) == "x" * 3000 + "ab's'"
    assert _word_before("12 ", " 21", 3) is None


def test_spelled_acronyms_after_a_long_word() -> None:
    unaware = ["q" * 2000 + " Compare" + " PZU or KVZ." * 50]
    assert spelled_acronyms(["is pzu or kvz cheaper"], unaware, ["is pzu or kvz cheaper"]) == {"pzu", "kvz"}


# --- tests whose rule another rule hid (each fails with its rule switched off) --------------------


def test_a_host_named_organisation_is_kept_though_the_participant_writes_its_word() -> None:
    # the participant writes "rentfinder", so only the host rule (not the response-grounding one)
    # keeps the memory-free response's "Rentfinder.com"
    record = raw_preference_record(
        record_id="r1",
        participant_id="p1",
        query="is rentfinder any good for flats near the river?",
        retrieved_memories=["user has a cat."],
        response_with_memory="Look near the river.",
        response_without_memory="Set alerts on Rentfinder.com for flats.",
    )
    (result,) = deidentify_records([record], FixedNer({"Rentfinder.com": "ORGANIZATION"}))
    assert "Rentfinder.com" in result.published_fields()["response_without_memory"]


@pytest.mark.parametrize(
    "text",
    [
        "we had tacos al pastor delicioso last night",  # a title inside a Romance phrase is a noun
        "order the pollo al pastor especial",
        "my uncle ravi",  # after a possessive the kinship word is the relation rule's
    ],
)
def test_no_titled_person_in_a_romance_phrase_or_after_a_possessive(text: str) -> None:
    assert find_titled_people(text) == []


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("my oma liesl turns 85 in may", "liesl"),  # "oma" is no relation word: no other rule finds her
        ("our nonna rosa turns 90 soon", "rosa"),
        ("for my abuela carmen", "carmen"),
    ],
)
def test_a_possessive_before_a_kinship_title_that_is_no_relation_word_keeps_the_name(
    text: str, name: str
) -> None:
    assert [e.text for e in find_titled_people(text)] == [name]


@pytest.mark.parametrize(
    "text",
    ["my abuela cooks every sunday", "my oma loves gardening", "our nonna always says so", "my oma's garden"],
)
def test_a_possessive_kinship_title_and_a_verb_is_no_name(text: str) -> None:
    assert find_titled_people(text) == []
