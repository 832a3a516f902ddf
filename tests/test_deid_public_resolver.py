"""Over-redaction and placeholder consistency of the de-identifier: public names and run-on spans.

Every sentence here is invented for the test.
"""

from __future__ import annotations

import pytest

from dataset_builder.deidentify import deidentify_records
from dataset_builder.detectors import Entity
from dataset_builder.public import possessive_title_tail, public_mention, trip_destination
from dataset_builder.resolver import (
    ParticipantRedactor,
    _abbreviates,
    _longer_form,
    _plausible_name,
    _span_pieces,
    canonical,
)
from tests.helpers_deid import FixedNer
from tests.helpers_records import raw_preference_record


def _ner(text: str, surface: str, kind: str) -> Entity:
    start = text.index(surface)
    return Entity(start, start + len(surface), kind, surface, "ner")


@pytest.mark.parametrize(
    ("text", "surface", "kind", "expected"),
    [
        ("City: Lisbon\nPhone: 555", "Lisbon\nPhone", "ORGANIZATION", ["Lisbon", "Phone"]),
        ("at Kestrel | CPA | open to work", "Kestrel | CPA | open", "ORGANIZATION", ["Kestrel", "CPA"]),
        ("we deliver across Marlow & Bexley today", "Marlow & Bexley", "LOCATION", ["Marlow", "Bexley"]),
        ("tomek und ich wollen am samstag", "tomek und ich wollen am", "ORGANIZATION", ["tomek"]),
        ("a ana quer viajar pra Lagos", "a ana quer viajar pra Lagos", "ORGANIZATION", ["ana"]),
        ("Wiktor nas odbiera z dworca.", "Wiktor nas odbiera z dworca", "PERSON", ["Wiktor"]),
        ("kids: Bram 9, Lotte 4", "Bram 9", "PERSON", ["Bram"]),
        ("swapped shifts w tariq again", "w tariq", "ORGANIZATION", ["tariq"]),
    ],
)
def test_run_on_span_is_cut(text: str, surface: str, kind: str, expected: list[str]) -> None:
    assert [p.text for p in _span_pieces(_ner(text, surface, kind), text)] == expected


@pytest.mark.parametrize(
    ("text", "surface", "kind"),
    [
        ("we walked round Lagoa da Conceição at dusk", "Lagoa da Conceição", "LOCATION"),
        ("she banks with Bank of Leith", "Bank of Leith", "ORGANIZATION"),
        ("lunch at Marks and Sparks", "Marks and Sparks", "ORGANIZATION"),
        ("a trip to Frankfurt am Main", "Frankfurt am Main", "LOCATION"),
        ("the form says C.P. 04411 for the office", "C.P. 04411", "LOCATION"),
        ("i met hana kovac there", "hana kovac", "PERSON"),
        ("ask Rasa Petraitytė", "Rasa Petraitytė", "PERSON"),
    ],
)
def test_whole_name_span_stays_whole(text: str, surface: str, kind: str) -> None:
    assert [p.text for p in _span_pieces(_ner(text, surface, kind), text)] == [surface]


def test_only_ner_spans_are_cut() -> None:
    text = "City: Lisbon\nPhone: 555"
    cued = Entity(6, 18, "LOCATION", "Lisbon\nPhone", "places")
    assert _span_pieces(cued, text) == [cued]


@pytest.mark.parametrize(
    ("text", "surface", "kind", "public"),
    [
        ("we might set up an LLC for the candles", "LLC", "ORGANIZATION", True),
        ("open the LLC's bank account first", "LLC", "ORGANIZATION", True),
        ("an Idaho LLC costs little", "Idaho LLC", "ORGANIZATION", True),
        ("she runs Brindle Candles LLC from home", "Brindle Candles LLC", "ORGANIZATION", False),
        ("flights before Eid al-Fitr get pricey", "Eid al-Fitr", "ORGANIZATION", True),
        ("should I watch Fenwick's Harbour tonight?", "Fenwick", "PERSON", True),
        ("Fenwick's Harbour is a sitcom about a port", "Fenwick", "PERSON", True),
        ("should I watch Tom's recital tonight?", "Tom", "PERSON", False),
        ("Fenwick's Harbour is closed today", "Fenwick", "PERSON", False),
    ],
)
def test_public_mention_legal_forms_holidays_titles(text: str, surface: str, kind: str, public: bool) -> None:
    start = text.index(surface)
    assert public_mention(surface, text, start, start + len(surface), kind=kind) is public


def test_saint_day_is_no_person() -> None:
    text = "her party falls on Sant Ermengol this year"
    start = text.index("Sant Ermengol")
    assert not _plausible_name("Sant Ermengol", text, start, start + 13, "PERSON")
    assert _plausible_name("Ermengol", "ask Ermengol", 4, 12, "PERSON")


def test_possessive_title_tail() -> None:
    assert possessive_title_tail("Fenwick", "'s Harbour is on") == "'s Harbour"
    assert possessive_title_tail("Fenwick's", " Harbour is on") == " Harbour"
    assert possessive_title_tail("Tom", "'s recital") == ""


def test_title_named_publicly_keeps_its_possessive_head() -> None:
    records = [
        raw_preference_record(
            record_id="t-1",
            participant_id="tp",
            query="should i watch Fenwick's Harbour or something else?",
            retrieved_memories=["user likes slow comedies"],
            response_with_memory="Fenwick's Harbour suits a slow evening.",
            response_without_memory="Try Fenwick's Harbour.",
        )
    ]
    result = deidentify_records(records, FixedNer({"Fenwick": "PERSON"}))[0]
    assert "Fenwick's Harbour" in result.published_fields()["response_with_memory"]


@pytest.mark.parametrize(
    ("text", "surface", "kind", "public"),
    [
        ("turn it off in Pixelgram settings", "Pixelgram", "PERSON", True),
        ("freeze your Kestrelbank cards now", "Kestrelbank", "ORGANIZATION", True),
        ("top up the Voxa line first", "Voxa", "LOCATION", True),
        ("user banks with Kestrelbank", "Kestrelbank", "ORGANIZATION", True),
        ("i work at Kestrelbank, cards team", "Kestrelbank", "ORGANIZATION", False),
        ("dinner with Kestrel tonight", "Kestrel", "PERSON", False),
        ("i ride a Brennick to work", "Brennick", "ORGANIZATION", True),
        ("don't mention the Corvana X5 rig", "Corvana", "PERSON", True),
        ("the flat near Lindow M20 3ED", "Lindow", "ORGANIZATION", False),
        ("ask Corvana tomorrow", "Corvana", "PERSON", False),
    ],
)
def test_public_mention_customer_and_product_context(
    text: str, surface: str, kind: str, public: bool
) -> None:
    start = text.index(surface)
    assert public_mention(surface, text, start, start + len(surface), kind=kind) is public


@pytest.mark.parametrize(
    ("key", "longer", "same"),
    [
        ("elm rd", "14 elm rd", True),
        ("cebu", "cebu city", True),
        ("oranmore", "city of oranmore", True),
        ("marlow", "marlow west", True),
        ("montreuil", "mairie de montreuil", True),
        ("amman", "jabal amman", False),  # a known town inside a bigger name
        ("dublin", "dublin 2", False),  # a postal district after the town
        ("hopfengasse", "hopfengasse 7", True),  # a street and its house number
    ],
)
def test_place_joins_its_longer_form_only(key: str, longer: str, same: bool) -> None:
    assert _longer_form(key, longer) is same


def test_abbreviated_organisation() -> None:
    assert _abbreviates("kestrel prep", "kestrel preparatory school")
    assert not _abbreviates("kestrel prep", "kestrel prep")
    assert not _abbreviates("falcon prep", "kestrel preparatory school")


def test_resolver_joins_abbreviation_and_keeps_postal_district_apart() -> None:
    r = ParticipantRedactor()
    r.learn(
        [
            Entity(0, 26, "ORGANIZATION", "Kestrel Preparatory School", "ner"),
            Entity(0, 12, "ORGANIZATION", "Kestrel Prep", "ner"),
            Entity(0, 6, "LOCATION", "Dublin", "ner"),
            Entity(0, 8, "LOCATION", "Dublin 4", "ner"),
        ]
    )
    text = "Kestrel Prep is Kestrel Preparatory School; Dublin 4 is in Dublin."
    out = r.redact(text, [])[0]
    assert out.count("[ORGANIZATION_1]") == 2
    assert "[LOCATION_1]" in out and "[LOCATION_2]" in out


def test_town_and_postcode_span_is_two_places() -> None:
    text = "ship to Brakpan 01422 please"
    pieces = _span_pieces(_ner(text, "Brakpan 01422", "LOCATION"), text)
    assert [p.text for p in pieces] == ["Brakpan"]


def _one_placeholder(r: ParticipantRedactor, text: str, surfaces: list[str]) -> set[str]:
    out, applied = r.redact(text, [])
    return {rep for span, rep in applied if span.text in surfaces}


def test_honorific_suffix_makes_a_person_whatever_ner_said() -> None:
    r = ParticipantRedactor()
    r.learn([Entity(0, 12, "PERSON", "sato kenichi", "ner"), Entity(0, 8, "ORGANIZATION", "sato-san", "ner")])
    assert _one_placeholder(r, "sato-san and sato kenichi", ["sato-san", "sato kenichi"]) == {"[PERSON_1]"}


def test_lowercase_org_span_that_starts_with_a_known_person_is_that_person() -> None:
    r = ParticipantRedactor()
    r.learn([Entity(0, 4, "PERSON", "Obi", "ner"), Entity(0, 10, "ORGANIZATION", "obi nwosu", "ner")])
    out = r.redact("obi nwosu is Obi", [])[0]
    assert out == "[PERSON_1] is [PERSON_1]"
    capitalised = ParticipantRedactor()
    capitalised.learn(
        [Entity(0, 3, "PERSON", "Obi", "ner"), Entity(0, 12, "LOCATION", "Obi Crossing", "ner")]
    )
    assert capitalised.redact("Obi Crossing", [])[0] == "[LOCATION_1]"


def test_ner_majority_label_wins_over_a_lone_organisation() -> None:
    r = ParticipantRedactor()
    r.learn([Entity(0, 5, "PERSON", "Tiago", "ner")] * 3 + [Entity(0, 5, "ORGANIZATION", "tiago", "ner")])
    out = r.redact("tiago and Tiago", [Entity(0, 5, "ORGANIZATION", "tiago", "ner")])[0]
    assert out == "[PERSON_1] and [PERSON_1]"


def test_shortened_first_name_with_the_same_family_name_is_one_person() -> None:
    r = ParticipantRedactor()
    r.learn([Entity(0, 14, "PERSON", "Marisol Vance", "ner"), Entity(0, 9, "PERSON", "Mari Vance", "ner")])
    assert r.redact("Mari Vance, Marisol Vance", [])[0] == "[PERSON_1], [PERSON_1]"
    other = ParticipantRedactor()
    other.learn(
        [Entity(0, 14, "PERSON", "Marisol Vance", "ner"), Entity(0, 9, "PERSON", "Mari Quinn", "ner")]
    )
    assert other.redact("Mari Quinn, Marisol Vance", [])[0] == "[PERSON_1], [PERSON_2]"


@pytest.mark.parametrize(
    ("text", "place", "destination"),
    [
        ("we want a trip to Korvath in May", "Korvath", True),
        ("plan 2 days in Korvath and a night at the camp", "Korvath", True),
        ("is it cheaper to go through Korvath?", "Korvath", True),
        ("a trip home to Korvath to see my parents", "Korvath", False),
        ("my parents live in Korvath", "Korvath", False),
        ("the in-laws are visiting Korvath", "Korvath", False),
    ],
)
def test_trip_destination(text: str, place: str, destination: bool) -> None:
    start = text.index(place)
    assert trip_destination(text, start, start + len(place)) is destination


def _trip_records(memory: str) -> list:
    return [
        raw_preference_record(
            record_id="trip-1",
            participant_id="tq",
            query="how many days do we need for a trip to Korvath?",
            retrieved_memories=[memory],
            response_with_memory="Two days in Korvath is enough; Korvath is busy in May.",
            response_without_memory="Korvath needs two days.",
        )
    ]


def test_a_place_named_only_as_a_destination_is_kept() -> None:
    (result,) = deidentify_records(_trip_records("user likes hiking"), FixedNer({"Korvath": "LOCATION"}))
    assert "Korvath is busy" in result.published_fields()["response_with_memory"]


def test_a_destination_that_a_text_ties_to_home_is_redacted() -> None:
    records = _trip_records("user's sister lives in Korvath")
    (result,) = deidentify_records(records, FixedNer({"Korvath": "LOCATION"}))
    assert "Korvath" not in " ".join(map(str, result.published_fields().values()))


def test_a_destination_named_once_is_redacted() -> None:
    record = raw_preference_record(
        record_id="trip-2",
        participant_id="tr",
        query="what to pack for a trip to Velmora?",
        retrieved_memories=["user likes hiking"],
        response_with_memory="Pack layers.",
        response_without_memory="Pack light.",
    )
    (result,) = deidentify_records([record], FixedNer({"Velmora": "LOCATION"}))
    assert "Velmora" not in result.published_fields()["query"]


@pytest.mark.parametrize(
    ("text", "surface", "kind", "public"),
    [
        ("you can apply to the Rental Tribunal next", "Rental Tribunal", "ORGANIZATION", True),
        ("at 65 she gets the SilverFern Card", "SilverFern Card", "ORGANIZATION", True),
        ("the Osaka Visitor Pass covers buses", "Osaka Visitor Pass", "ORGANIZATION", False),  # a town
        ("he works as a Data Analyst now", "Data Analyst", "ORGANIZATION", True),
        ("Audit Senior at Kestrel | open to roles", "Audit Senior", "ORGANIZATION", True),
        ("ask the Senior team", "Senior", "ORGANIZATION", False),
        ("the Medicare Safety Net lowers costs", "Medicare Safety Net", "ORGANIZATION", True),
        ("she is leaving accenture soon", "leaving accenture", "ORGANIZATION", False),
    ],
)
def test_public_mention_programmes_and_roles(text: str, surface: str, kind: str, public: bool) -> None:
    start = text.index(surface)
    assert public_mention(surface, text, start, start + len(surface), kind=kind) is public


def test_form_label_is_no_name() -> None:
    form = "Nombre: Lucía Prat\nTeléfono: 555 0101\nAllergies: none\n"
    start = form.index("Allergies")
    assert not _plausible_name("Allergies", form, start, start + 9, "PERSON")
    chat = "Ines: are you in?\nMarta: yes\nInes: great\n"
    assert _plausible_name("Ines", chat, 0, 4, "PERSON")  # a speaker who labels two lines
    short = "Allergies: none"
    assert _plausible_name("Allergies", short, 0, 9, "PERSON")  # no form of three labels


@pytest.mark.parametrize(
    ("text", "surface", "public"),
    [
        ("a remittance center like Kwikpay is only worth it for cash", "Kwikpay", True),
        ("apps such as Pixelgram show your number", "Pixelgram", True),
        ("a friend like Kwame would know", "Kwame", False),
    ],
)
def test_public_mention_service_examples(text: str, surface: str, public: bool) -> None:
    start = text.index(surface)
    assert public_mention(surface, text, start, start + len(surface), kind="ORGANIZATION") is public


def test_acronym_joins_the_one_name_it_abbreviates() -> None:
    r = ParticipantRedactor()
    r.learn(
        [
            Entity(0, 22, "ORGANIZATION", "Kings Vale Hospital", "ner"),
            Entity(0, 3, "ORGANIZATION", "KVH", "ner"),
            Entity(0, 8, "LOCATION", "Lorwick", "ner"),
            Entity(0, 3, "LOCATION", "LOR", "ner"),
            Entity(0, 3, "ORGANIZATION", "ABC", "ner"),
        ]
    )
    out = r.redact("KVH is Kings Vale Hospital; LOR is Lorwick; ABC is other.", [])[0]
    assert (
        out
        == "[ORGANIZATION_1] is [ORGANIZATION_1]; [LOCATION_1] is [LOCATION_1]; [ORGANIZATION_2] is other."
    )


def test_lowercase_word_is_no_acronym() -> None:
    r = ParticipantRedactor()
    r.learn([Entity(0, 9, "LOCATION", "Sandhurst", "ner"), Entity(0, 3, "ORGANIZATION", "sa", "ner")])
    out = r.redact("sa and Sandhurst", [])[0]
    assert out == "[ORGANIZATION_1] and [LOCATION_1]"


def test_street_type_abbreviation_without_number_is_one_street() -> None:
    assert canonical("LOCATION", "tolley rd") == canonical("LOCATION", "tolley road") == "tolley road"
    assert canonical("LOCATION", "st albans") == "st albans"  # "St" first is a saint, not a street
    assert canonical("LOCATION", "mill st") == "mill st"  # without a number "st" may be a saint


def test_postal_district_labelled_a_person_keeps_its_number() -> None:
    text = "we live at Quay Road, Dublin 8 now"
    assert [p.text for p in _span_pieces(_ner(text, "Dublin 8", "PERSON"), text)] == ["Dublin 8"]


@pytest.mark.parametrize(
    ("text", "surface", "public"),
    [
        ("she needs a Nordhaven visa for the trip", "Nordhaven", True),
        ("the Young Riders' Bus Travel scheme covers teens", "Young Riders' Bus Travel", True),
        ("she lives in Nordhaven with her visa sorted", "Nordhaven", False),
    ],
)
def test_public_mention_visa_and_scheme(text: str, surface: str, public: bool) -> None:
    start = text.index(surface)
    assert public_mention(surface, text, start, start + len(surface), kind="LOCATION") is public
