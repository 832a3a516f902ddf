"""Recall, round 3: names after titles and forms of address, everyday-word names after "is",
street addresses in lowercase or foreign order, towns and postcodes after an address, day.month
dates after a date word, small businesses and places in lowercase.

Every sentence and every name here is invented for the test.
"""

from __future__ import annotations

import pytest

from dataset_builder.detectors import Entity, find_patterns, find_relation_names
from dataset_builder.entity_cues import find_titled_people


def _texts(found: list[Entity]) -> list[tuple[str, str]]:
    return [(e.kind, e.text) for e in found]


# --- names after a title or a form of address ------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("user's landlord is mr tendai moyo", "tendai moyo"),
        ("ask frau brunnhuber about the keys", "brunnhuber"),
        ("opa wendel turns 90 in may", "wendel"),
        ("reverend ossie said the hall is free", "ossie"),
        ("prof. amadi wants the draft friday", "amadi"),
    ],
)
def test_a_lowercase_name_after_a_title_is_a_person(text: str, name: str) -> None:
    assert [e.text for e in find_titled_people(text)] == [name]


def test_an_everyday_word_name_after_a_title_needs_a_verb_it_cannot_take() -> None:
    assert [e.text for e in find_titled_people("pastor will asked me to bake")] == ["will"]
    assert find_titled_people("the pastor will lead the service") == []
    assert find_titled_people("uncle will and i went fishing") == []


@pytest.mark.parametrize(
    "text",
    [
        "dr appointment on monday",
        "we had tacos al pastor again",
        "mi tía en valdoria vive sola",  # a function word of another language ends the name
        "i ate pizza with mr",
        "Mr Okafor said yes",  # a capitalised name is the NER model's
    ],
)
def test_no_name_after_a_title(text: str) -> None:
    assert find_titled_people(text) == []


def test_titled_people_run_in_the_patterns() -> None:
    assert ("PERSON", "zoltanek") in _texts(find_patterns("please write to frau zoltanek today"))


# --- an everyday-word name after "<relation> is" ---------------------------------------------------


def test_an_everyday_word_name_after_relation_is() -> None:
    assert [e.text for e in find_relation_names("user's pastor is will dellacourt at the chapel")] == [
        "will dellacourt"
    ]
    assert [e.text for e in find_relation_names("my coach is grace obinwe")] == ["grace obinwe"]


@pytest.mark.parametrize(
    "text", ["my boss is may be late", "user's friend is tired today", "my sister is will"]
)
def test_no_everyday_word_name_after_relation_is(text: str) -> None:
    assert find_relation_names(text) == []
