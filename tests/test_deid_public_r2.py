"""Over-redaction of the de-identifier, round 2: names a response builds on one of the
participant's words, trip destinations, sentence bounds.

Every sentence here is invented for the test.
"""

from __future__ import annotations

import pytest

from dataset_builder.deidentify import deidentify_records
from dataset_builder.evidence import grounded_name, modifies_noun, own_words, sentence_bounds
from dataset_builder.public import articled_words, near_anchor, public_mention, trip_places
from tests.helpers_deid import FixedNer
from tests.helpers_records import raw_preference_record


@pytest.mark.parametrize(
    ("surface", "own", "expected"),
    [
        ("Quorra Alliance", ["my quorra alliance card"], True),
        ("Quorra Alliance", ["an alliance badge"], False),  # one word of two: the response's own
        ("Tolvik-dong", ["we live in marsen-dong"], False),  # a shared hyphen suffix
        ("Marsen-dong", ["we live in marsen-dong"], True),
        ("El Brivo", ["my cousin el chato"], False),  # "el" is a Spanish stop word
        ("Brivo", ["lunch at brivo"], True),
        ("Velka Road Runners", ["i run with velka road runners"], True),
        ("Oskarby Tenancy Hub", ["tenancy question"], False),
    ],
)
def test_grounded_name_needs_most_words(surface: str, own: list[str], expected: bool) -> None:
    assert grounded_name(surface, own_words(own)) is expected


def test_response_name_built_on_one_word_is_kept() -> None:
    record = raw_preference_record(
        query="my landlord wants more rent, what are my tenancy rights?",
        retrieved_memories=["user rents a flat with a gold star energy rating"],
        response_with_memory="Quorvia Tenancy has a rent tool.",
        response_without_memory="Check the rules first.",
    )
    (result,) = deidentify_records([record], FixedNer({"Quorvia Tenancy": "ORGANIZATION"}))
    assert "Quorvia Tenancy" in result.published_fields()["response_with_memory"]


def test_response_name_the_participant_wrote_is_redacted() -> None:
    record = raw_preference_record(
        query="gift ideas for my colleague at quorvia tenancy?",
        retrieved_memories=["user works at Quorvia Tenancy"],
        response_with_memory="Quorvia Tenancy staff might like a mug.",
        response_without_memory="A mug.",
    )
    (result,) = deidentify_records([record], FixedNer({"Quorvia Tenancy": "ORGANIZATION"}))
    assert "Quorvia" not in result.published_fields()["response_with_memory"]


@pytest.mark.parametrize(
    ("text", "surface", "expected"),
    [
        (
            "Hi. Velmora is great; try Brask Market. Or Tollen.",
            "Brask Market",
            " Velmora is great; try Brask Market.",
        ),
        (
            "Col. Brava Hill, C.P. 04100, Ciudad de Tollen",
            "Ciudad de Tollen",
            " Brava Hill, C.P. 04100, Ciudad de Tollen",
        ),
        ("It was fine. then we saw Velmora", "Velmora", "It was fine. then we saw Velmora"),
    ],
)
def test_sentence_bounds_skip_initials(text: str, surface: str, expected: str) -> None:
    start = text.index(surface)
    assert text[slice(*sentence_bounds(text, start, start + len(surface)))] == expected


@pytest.mark.parametrize(
    ("text", "surface", "expected"),
    [
        ("From your parents' place it's about 3 hours to Velmora.", "Velmora", False),
        ("my parents in Velmora are fine", "Velmora", True),
        ("a trip to Velmora to see mum", "Velmora", True),
        ("we live in Brask, Velmora", "Velmora", True),
        ("a trip to Velmora with friends", "Velmora", True),
        ("two days for Velmora then Brask", "Velmora", False),
    ],
)
def test_near_anchor(text: str, surface: str, expected: bool) -> None:
    start = text.index(surface)
    assert near_anchor(text, start, start + len(surface)) is expected


def test_trip_places() -> None:
    texts = ["a trip to velmora in may?", "Velmora is hot in May.", "Two days for Velmora."]
    assert trip_places(texts, ["velmora"]) == {"velmora"}
    assert trip_places(texts[:1], ["velmora"]) == set()  # named once: maybe a family visit
    assert trip_places([*texts, "my sister lives in Velmora"], ["velmora"]) == set()
    assert trip_places(["Velmora is hot.", "Velmora again.", "Velmora!"], ["velmora"]) == set()
    assert trip_places(["a trip to france", "France", "France"], ["france"]) == set()  # countries: own rule


def test_trip_destination_kept_in_every_field() -> None:
    record = raw_preference_record(
        query="we want a trip to velmora in may, how many days?",
        retrieved_memories=["user lives in Brask with her husband"],
        response_with_memory="From Brask, plan 2 days for Velmora.",
        response_without_memory="Velmora needs 2 days.",
    )
    (result,) = deidentify_records([record], FixedNer({"Velmora": "LOCATION", "Brask": "LOCATION"}))
    published = result.published_fields()
    assert "velmora" in published["query"]
    assert "Velmora" in published["response_without_memory"]
    assert "Brask" not in published["response_with_memory"]


def test_trip_place_named_as_a_person_is_redacted() -> None:
    record = raw_preference_record(
        query="a trip to velmora in may with velmora kent?",
        retrieved_memories=["user's friend is Velmora Kent"],
        response_with_memory="Velmora would enjoy it.",
        response_without_memory="Velmora is nice in May.",
    )
    ner = FixedNer({"Velmora Kent": "PERSON", "velmora": "LOCATION", "Velmora": "LOCATION"})
    (result,) = deidentify_records([record], ner)
    assert "Velmora" not in result.published_fields()["retrieved_memories[0]"]


@pytest.mark.parametrize(
    ("texts", "key", "expected"),
    [
        (["the Quellgeld form is due"], "quellgeld", True),
        (["mein Sohn hat die Brennkrankheit"], "brennkrankheit", True),  # a German article
        (["we could get a tovka for the kids"], "tovka", True),  # any case
        (["ask Priya about it", "Priya said no"], "priya", False),
        (["get the Priya Pass online"], "priya", False),  # part of a longer capitalised name
        (["dinner with La Toya", "La Toya again"], "toya", False),  # "la" is a name particle
        (["the priyanka"], "priya", False),  # whole words only
    ],
)
def test_articled_words(texts: list[str], key: str, expected: bool) -> None:
    assert (key in articled_words(texts, [key])) is expected


def test_articled_person_is_kept_everywhere() -> None:
    record = raw_preference_record(
        query="the office wants my tax id for the quellgeld thing, which one is it?",
        retrieved_memories=["user has a daughter"],
        response_with_memory="Quellgeld forms ask for the tax id.",
        response_without_memory="Quellgeld is paid monthly.",
    )
    # NER labels only the capitalised mentions, none after an article
    (result,) = deidentify_records([record], FixedNer({"Quellgeld": "PERSON"}))
    published = result.published_fields()
    assert "quellgeld thing" in published["query"]
    assert "Quellgeld" in published["response_with_memory"]


def test_articled_word_a_cue_names_a_person_is_redacted() -> None:
    record = raw_preference_record(
        query="my daughter Tovka wants a Tovka costume, ideas?",
        retrieved_memories=["user's daughter is Tovka"],
        response_with_memory="Tovka would love a cape.",
        response_without_memory="A cape is easy.",
    )
    (result,) = deidentify_records([record], FixedNer({"Tovka": "PERSON"}))
    assert "Tovka" not in result.published_fields()["response_with_memory"]


@pytest.mark.parametrize(
    ("after", "expected"),
    [
        (" work is taxed", True),
        (" funding ended", True),
        (" to Perth", False),
        (", then", False),
        ("", False),
    ],
)
def test_modifies_noun(after: str, expected: bool) -> None:
    assert modifies_noun(after) is expected


def test_acronym_after_from_before_a_noun_is_kept() -> None:
    record = raw_preference_record(
        query="how do i declare income from QXT work and a side gig?",
        retrieved_memories=["user is a nurse"],
        response_with_memory="Income from QXT work is reported by the employer.",
        response_without_memory="Salary from QXT work is pre-filled.",
    )
    (result,) = deidentify_records([record], FixedNer({"QXT": "ORGANIZATION"}))
    assert "from QXT work" in result.published_fields()["response_with_memory"]


def test_acronym_after_from_before_a_preposition_is_a_place() -> None:
    record = raw_preference_record(
        query="the drive from QXT to the coast, how long?",
        retrieved_memories=["user lives in QXT"],
        response_with_memory="From QXT to the coast is two hours.",
        response_without_memory="About two hours.",
    )
    (result,) = deidentify_records([record], FixedNer({"QXT": "ORGANIZATION"}))
    assert "QXT" not in result.published_fields()["query"]


def test_trip_places_joined_hike_and_next_sentence() -> None:
    texts = ["a trip to velmora + brask gorge?", "Velmora and Brask Gorge in 3 days.", "Brask Gorge at dawn."]
    assert trip_places(texts, ["brask gorge", "velmora"]) == {"velmora", "brask gorge"}
    # a hike is also a day out near home
    assert trip_places(["went hiking at Brask Gorge", "Brask Gorge again"], ["brask gorge"]) == set()
    # an anchor word in the next sentence anchors nothing
    assert trip_places(["a trip to Velmora. My mum says hi", "Velmora"], ["velmora"]) == {"velmora"}


@pytest.mark.parametrize(
    ("text", "surface", "kind", "expected"),
    [
        ("my bday falls on sant tovi this year (23 april)", "sant tovi", "LOCATION", True),
        ("For Sant Tovi the tradition is a rose and a book.", "Sant Tovi", "LOCATION", True),
        ("we are celebrating in San Tovi this May 3", "San Tovi", "LOCATION", False),  # a town
        ("my parents in San Tovi celebrate on 3 May", "San Tovi", "LOCATION", False),
        ("San Tovi has good tacos", "San Tovi", "LOCATION", False),  # no feast in the sentence
        ("gravel addict on a Brennix 🚲", "Brennix", "ORGANIZATION", True),
        ("she drives for a Brennix supplier", "Brennix", "ORGANIZATION", False),
        ("works nights at a Brennix.", "Brennix", "ORGANIZATION", False),  # an employer
    ],
)
def test_saint_day_and_indefinite_product(text: str, surface: str, kind: str, expected: bool) -> None:
    start = text.index(surface)
    assert public_mention(surface, text, start, start + len(surface), kind=kind) is expected


@pytest.mark.parametrize(
    ("text", "surface", "kind", "expected"),
    [
        ("Meet at the bar and take the Brask Line to the stadium.", "Brask Line", "ORGANIZATION", True),
        ("transfer to the Brask Line, which stops at the stadium", "Brask Line", "ORGANIZATION", True),
        ("take the Brask kids home", "Brask", "PERSON", False),
        ("take the Brask Line home", "Brask Line", "ORGANIZATION", False),  # no destination after
    ],
)
def test_transit_line(text: str, surface: str, kind: str, expected: bool) -> None:
    start = text.index(surface)
    assert public_mention(surface, text, start, start + len(surface), kind=kind) is expected


def test_trip_places_other_languages_and_sights_in_town() -> None:
    texts = ["o joão quer viajar pra Velmora no carnaval", "Brask Lagoon in Velmora is lively."]
    assert trip_places(texts, ["velmora"]) == {"velmora"}
    # a numbered address in the town anchors it
    assert trip_places(["viajar pra Velmora", "we rent at 12 Brask in Velmora"], ["velmora"]) == set()
    assert trip_places(["Reise nach Velmora im Mai", "Velmora im Mai"], ["velmora"]) == {"velmora"}


def test_trip_place_inside_a_run_on_organisation_is_kept() -> None:
    record = raw_preference_record(
        query="o ana quer viajar pra Velmora no carnaval, qual bairro?",
        retrieved_memories=["user's partner is Ana"],
        response_with_memory="Ana might enjoy Brask Lagoon in Velmora.",
        response_without_memory="In Velmora, Brask Lagoon is lively.",
    )
    ner = FixedNer({"o ana quer viajar pra Velmora": "ORGANIZATION", "Velmora": "LOCATION", "Ana": "PERSON"})
    (result,) = deidentify_records([record], ner)
    assert "Velmora" in result.published_fields()["response_without_memory"]


def test_ungrounded_place_on_an_address_line_is_redacted() -> None:
    record = raw_preference_record(
        query="fill the form: 12 Brask Street. Tollen West",
        retrieved_memories=["user has a son"],
        response_with_memory="Address: 12 Brask Street. Vellan Heights\nPhone: none",
        response_without_memory="Address: [street]\nPhone: [phone]",
    )
    (result,) = deidentify_records([record], FixedNer({"Vellan Heights": "PERSON"}))
    assert "Vellan" not in result.published_fields()["response_with_memory"]


def test_ungrounded_place_off_the_address_line_is_kept() -> None:
    record = raw_preference_record(
        query="fill the form: 12 Brask Street. Tollen West",
        retrieved_memories=["user has a son"],
        response_with_memory="Address: 12 Brask Street\nTry the Vellan Heights lookout on Sunday.",
        response_without_memory="Address: [street]",
    )
    (result,) = deidentify_records([record], FixedNer({"Vellan Heights": "LOCATION"}))
    assert "Vellan Heights" in result.published_fields()["response_with_memory"]


def test_ungrounded_place_far_along_an_address_line_is_kept() -> None:
    record = raw_preference_record(
        query="fill the form: 12 Brask Street. Tollen West",
        retrieved_memories=["user has a son"],
        response_with_memory=(
            "Your form has 12 Brask Street filled in and the rest is done, and for the weekend "
            "try the Vellan Heights lookout."
        ),
        response_without_memory="Address: [street]",
    )
    (result,) = deidentify_records([record], FixedNer({"Vellan Heights": "LOCATION"}))
    assert "Vellan Heights" in result.published_fields()["response_with_memory"]
