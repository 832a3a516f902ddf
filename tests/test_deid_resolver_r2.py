"""Placeholder consistency of the de-identifier, round 2: one placeholder per entity.

Organisations that hold another entity, names the texts tie together, run-on spans, inflected
places and codes, IDs and units. Every sentence here is invented for the test.
"""

from __future__ import annotations

import pytest

from dataset_builder.deidentify import deidentify_records
from dataset_builder.detectors import Entity
from dataset_builder.resolver import (
    _attached,
    _code_of,
    _longer_form,
    _span_pieces,
    _trim_lead,
    _trim_run_on,
    canonical,
    tied_names,
    user_names,
)
from tests.helpers_deid import FixedNer
from tests.helpers_deid import learnt_redactor as _redactor
from tests.helpers_records import raw_preference_record


def _span(text: str, surface: str, kind: str = "PERSON", source: str = "ner") -> Entity:
    start = text.index(surface)
    return Entity(start, start + len(surface), kind, surface, source)


# names the texts tie together


def test_bracketed_full_name_ties_a_nickname() -> None:
    t = "my landlord is zazza (sharlene quist), ugh"
    assert tied_names(t, [_span(t, "zazza"), _span(t, "sharlene quist")]) == [("zazza", "sharlene quist")]


def test_bracketed_role_ties_nothing() -> None:
    t = "see you Friday! – Marit (Secretary)"
    assert tied_names(t, [_span(t, "Marit")]) == []


def test_nicknamed_and_calls_her_tie_names() -> None:
    t = "User's cousin Tobiah Renn, nicknamed El Flaco, visits in May."
    found = [_span(t, "Tobiah Renn"), _span(t, "El Flaco", "ORGANIZATION")]
    assert tied_names(t, found) == [("el flaco", "tobiah renn")]
    t = "user's full name Oyinda Falade-Roe; friends call her Oyi"
    assert tied_names(t, [_span(t, "Oyinda Falade-Roe")]) == [("oyi", "oyinda falade-roe")]


def test_calls_her_of_the_user_needs_a_known_name_in_lowercase() -> None:
    t = "user's sisters call her bibs."
    assert tied_names(t, [], "marta quell", {"bibs"}) == [("bibs", "marta quell")]
    assert tied_names(t, [], "marta quell") == []  # "bibs" named nowhere else: no tie
    t = "user's sisters call her lazy."
    assert tied_names(t, [], "marta quell") == []


def test_quoted_nickname_inside_a_lowercase_name() -> None:
    t = "user's son is ishan 'pintu' varde, age 6."
    found = [_span(t, "ishan 'pintu' varde", "ORGANIZATION")]
    assert tied_names(t, found) == [("pintu", "ishan varde")]
    t = "we watched 'dune' tonight"
    assert tied_names(t, []) == []


def test_user_names() -> None:
    t = "user's name is orla brennock."
    assert user_names(t, [_span(t, "orla brennock", "ORGANIZATION")]) == ["orla brennock"]
    t = "user's friend is orla brennock."
    assert user_names(t, [_span(t, "orla brennock")]) == []


def test_tied_nickname_gets_the_full_names_placeholder() -> None:
    records = [
        raw_preference_record(
            record_id="n-1",
            participant_id="np",
            query="my landlord is zazza (sharlene quist), how do i ask for a repair?",
            retrieved_memories=["user rents a flat"],
            response_with_memory="Write to Zazza with photos of the damage.",
            response_without_memory="Write to your landlord with photos.",
        )
    ]
    ner = FixedNer({"zazza": "PERSON", "sharlene quist": "PERSON", "Zazza": "PERSON"})
    (result,) = deidentify_records(records, ner)
    placeholders = {rep.replacement for rep in result.replacements}
    assert placeholders == {"[PERSON_1]"}


# run-on and relation-word spans


@pytest.mark.parametrize(
    ("text", "surface", "expected"),
    [
        ("next time i'm in petrova lol, how long", "petrova lol", "petrova"),
        ("user's husband dapo handles the bills", "dapo handles", "dapo"),
        ("from verlo living in odesk now", "verlo living", "verlo"),
        ("helping my friend zainab fix her visa", "zainab fix", "zainab"),
        ("kemi adisa says hi", "kemi adisa", "kemi adisa"),
        ("give ana lu bello her keys", "ana lu bello", "ana lu bello"),
        ("Dapo Handles the bills", "Dapo Handles", "Dapo Handles"),
    ],
)
def test_run_on_word_is_trimmed(text: str, surface: str, expected: str) -> None:
    kind = "LOCATION" if "petrova" in surface or "verlo" in surface else "PERSON"
    assert _trim_run_on(_span(text, surface, kind), text).text == expected


@pytest.mark.parametrize(
    ("text", "surface", "kind", "expected"),
    [
        (
            "it shows the address, but call Brackwood Academy first",
            "but call Brackwood Academy",
            "ORGANIZATION",
            "Brackwood Academy",
        ),
        ("ask de Souza", "de Souza", "PERSON", "de Souza"),
        (
            "her school brackwood academy wants a form",
            "school brackwood academy",
            "ORGANIZATION",
            "brackwood academy",
        ),
        ("she works at brackwood school", "brackwood school", "ORGANIZATION", "brackwood school"),
    ],
)
def test_leading_lowercase_words_are_trimmed(text: str, surface: str, kind: str, expected: str) -> None:
    assert _trim_lead(_span(text, surface, kind)).text == expected


def test_span_pieces_cut_quotes_and_a_relation_word() -> None:
    t = "user's gran Wilma 'Nana Wil' Ostrander lives nearby"
    assert [p.text for p in _span_pieces(_span(t, "Wil' Ostrander"), t)] == ["Wil", "Ostrander"]
    t = "joss's mum greta turns 70"
    assert [p.text for p in _span_pieces(_span(t, "mum greta"), t)] == ["greta"]
    t = "Mum Greta turns 70"  # capitalised: a name that may hold the word, left to the resolver
    assert [p.text for p in _span_pieces(_span(t, "Mum Greta"), t)] == ["Mum Greta"]
    assert canonical("PERSON", "mother greta") == "greta"
    assert canonical("PERSON", "greta sister") == "greta sister"


# organisations that hold another entity


def _decomposed(ner: dict[str, str], texts: list[str]) -> list[str]:
    records = [
        raw_preference_record(
            record_id=f"o-{i}",
            participant_id="op",
            query=text,
            retrieved_memories=["user asked"],
            response_with_memory="ok",
            response_without_memory="fine",
        )
        for i, text in enumerate(texts)
    ]
    return [r.fields["query"] for r in deidentify_records(records, FixedNer(ner))]


def test_organisation_holding_a_place_keeps_both_placeholders() -> None:
    out = _decomposed(
        {"Dunmore": "LOCATION", "Ferrow Labs": "ORGANIZATION", "Ferrow Labs Dunmore": "ORGANIZATION"},
        ["user lives in Dunmore", "user works at Ferrow Labs", "should i email Ferrow Labs Dunmore today"],
    )
    assert out[2] == "should i email [ORGANIZATION_1] [LOCATION_1] today"
    assert out[0].endswith("[LOCATION_1]") and out[1].endswith("[ORGANIZATION_1]")


def test_place_that_starts_or_ends_an_organisation_name_stays_in_it() -> None:
    out = _decomposed(
        {
            "Dunmore": "LOCATION",
            "Dunmore City Council": "ORGANIZATION",
            "Royal Infirmary of Dunmore": "ORGANIZATION",
        },
        ["user lives in Dunmore", "pay Dunmore City Council or the Royal Infirmary of Dunmore first?"],
    )
    assert out[1] == "pay [ORGANIZATION_1] or the [ORGANIZATION_2] first?"


def test_place_inside_an_organisation_only_counts_when_named_alone() -> None:
    redactor = _redactor(
        [("clune", "LOCATION", "ner"), ("Clune Bikes", "ORGANIZATION", "ner")],
        ["bought it from clune bikes", "Clune Bikes can check"],
    )
    text, _ = redactor.redact("Clune Bikes can check", [Entity(0, 11, "ORGANIZATION", "Clune Bikes", "ner")])
    assert text == "[ORGANIZATION_1] can check"


def test_possessive_person_before_a_known_organisation() -> None:
    texts = ["user's husband ravi works at velnor", "Ravi's Velnor team likes quizzes"]
    redactor = _redactor(
        [
            ("ravi", "PERSON", "relation"),
            ("velnor", "ORGANIZATION", "workplace"),
            ("Ravi's Velnor", "ORGANIZATION", "ner"),
        ],
        texts,
    )
    text, _ = redactor.redact(texts[1], [_span(texts[1], "Ravi's Velnor", "ORGANIZATION")])
    assert text == "[PERSON_1]'s [ORGANIZATION_1] team likes quizzes"


# kinds settled across the participant's texts


def test_person_that_begins_an_organisation_is_it() -> None:
    redactor = _redactor([("brackle", "PERSON", "ner"), ("Brackle Studios", "ORGANIZATION", "ner")])
    a, _ = redactor.redact("my brackle job", [_span("my brackle job", "brackle")])
    b, _ = redactor.redact(
        "at Brackle Studios", [_span("at Brackle Studios", "Brackle Studios", "ORGANIZATION")]
    )
    assert a == "my [ORGANIZATION_1] job" and b == "at [ORGANIZATION_1]"


def test_double_barrelled_family_name_is_the_same_person() -> None:
    redactor = _redactor(
        [
            ("tolu adebayo", "PERSON", "ner"),
            ("Tolu Adebayo-Okoro", "LOCATION", "ner"),
            ("Adebayo-Okoro", "LOCATION", "ner"),
            ("femi okoro", "PERSON", "relation"),
        ]
    )
    t = "tolu adebayo is Tolu Adebayo-Okoro, or Adebayo-Okoro; femi okoro too"
    spans = [
        _span(t, "tolu adebayo"),
        _span(t, "Tolu Adebayo-Okoro", "LOCATION"),
        _span(t, "Adebayo-Okoro;", "LOCATION"),
        _span(t, "femi okoro"),
    ]
    spans[2] = Entity(spans[2].start, spans[2].end - 1, "LOCATION", "Adebayo-Okoro", "ner")
    text, _ = redactor.redact(t, spans)
    assert text == "[PERSON_1] is [PERSON_1], or [PERSON_1]; [PERSON_2] too"


def test_named_span_that_is_an_id_number_is_that_id() -> None:
    redactor = _redactor([("QRT-5512", "ID_NUMBER", "pattern"), ("QRT-5512", "LOCATION", "ner")])
    t = "the van (QRT-5512) is insured"
    text, _ = redactor.redact(t, [_span(t, "QRT-5512", "LOCATION")])
    assert text == "the van ([ID_NUMBER_1]) is insured"


def test_phone_written_as_an_id_number_is_the_phone() -> None:
    redactor = _redactor([("+31 6 5550 1234", "PHONE", "pattern"), ("06-55501234", "ID_NUMBER", "pattern")])
    t = "call 06-55501234"
    assert redactor.redact(t, [_span(t, "06-55501234", "ID_NUMBER", "pattern")])[0] == "call [PHONE_1]"
    redactor = _redactor([("+31 6 5550 1234", "PHONE", "pattern"), ("NL-55501234", "ID_NUMBER", "pattern")])
    t = "ref NL-55501234"
    assert redactor.redact(t, [_span(t, "NL-55501234", "ID_NUMBER", "pattern")])[0] == "ref [ID_NUMBER_1]"


def test_possessive_of_a_personal_thing_is_the_person() -> None:
    redactor = _redactor([("Hollis", "PERSON", "relation"), ("hollis", "LOCATION", "places")])
    t = "reply to hollis's email today"
    text, _ = redactor.redact(t, [])
    assert text == "reply to [PERSON_1]'s email today"
    text, _ = redactor.redact("we drove to hollis today", [])
    assert text == "we drove to [LOCATION_1] today"


def test_place_after_a_place_and_a_comma() -> None:
    redactor = _redactor(
        [("Marrow", "PERSON", "ner"), ("marrow", "LOCATION", "ner"), ("Zarqa", "LOCATION", "ner")]
    )
    text, _ = redactor.redact("they live in Zarqa, Marrow now", [])
    assert text == "they live in [LOCATION_1], [LOCATION_2] now"
    text, _ = redactor.redact("Marrow says hi", [])
    assert text == "[PERSON_1] says hi"


# inflected places, codes, districts, units and states


def test_inflected_place_and_its_code() -> None:
    redactor = _redactor(
        [("Lublin", "LOCATION", "ner"), ("Lublinie", "LOCATION", "ner"), ("LUB", "LOCATION", "ner")]
    )
    t = "Lublin, w Lublinie, LUB"
    spans = [_span(t, "Lublin,", "LOCATION"), _span(t, "Lublinie", "LOCATION"), _span(t, "LUB", "LOCATION")]
    spans[0] = Entity(0, 6, "LOCATION", "Lublin", "ner")
    assert redactor.redact(t, spans)[0] == "[LOCATION_1], w [LOCATION_1], [LOCATION_1]"
    assert _code_of("krk", "krakow") and _code_of("amm", "amman") and _code_of("lbl", "lublin")
    assert not _code_of("kra", "lublin") and not _code_of("kae", "krakow")


def test_phase_of_a_district_is_the_district() -> None:
    assert _longer_form("ikota", "ikota phase 2") and _longer_form("noida", "noida sector 62")
    assert not _longer_form("dublin", "dublin 2") and not _longer_form("ikota", "ikota 2 market")


def test_state_code_and_flat_number_join_their_place() -> None:
    t = "drive to Tarnvale, TX and Apt 9, Mossley Quay, then Tarnvale, Ostby"
    spans = [_span(t, w, "LOCATION") for w in ("Tarnvale", "TX", "Apt 9", "Mossley Quay")]
    assert _attached(spans[0], spans[1], t) and _attached(spans[2], spans[3], t)
    later = t.rindex("Tarnvale")
    town = Entity(later, later + 8, "LOCATION", "Tarnvale", "ner")
    other = _span(t, "Ostby", "LOCATION")
    assert not _attached(town, other, t)
    redactor = _redactor(
        [("Tarnvale", "LOCATION", "ner"), ("Mossley Quay", "LOCATION", "ner"), ("Apt 9", "LOCATION", "home")]
    )
    redactor.note_units(t, spans)
    text, _ = redactor.redact(t, [*spans, town, other])
    assert text == "drive to [LOCATION_1] and [LOCATION_2], then [LOCATION_1], [LOCATION_3]"
    text, _ = redactor.redact(
        "the boiler in Apt 9 broke", [_span("the boiler in Apt 9 broke", "Apt 9", "LOCATION")]
    )
    assert text == "the boiler in [LOCATION_2] broke"  # the street's placeholder


def test_sign_off_name_is_the_participant() -> None:
    t = "Ma, my new number is below. Love, Piko"
    assert tied_names(t, [_span(t, "Piko")], "joaquin reyes lim") == [("piko", "joaquin reyes lim")]
    assert tied_names(t, [_span(t, "Piko")]) == []  # the participant's own name is unknown
    t = "Love, Piko said the cake was great"
    assert tied_names(t, [_span(t, "Piko")], "joaquin reyes lim") == []  # no sign-off: text goes on
    t = "Hi Piko, see you soon"
    assert tied_names(t, [_span(t, "Piko")], "joaquin reyes lim") == []
