"""Over-redaction of the de-identifier, round 3: the memories' subject, accented holidays,
acronyms a memory-free response spells out.

Every sentence here is invented for the test.
"""

from __future__ import annotations

import pytest

from dataset_builder.deidentify import deidentify_records
from dataset_builder.evidence import spelled_acronyms
from dataset_builder.public import public_mention
from tests.helpers_deid import FixedNer
from tests.helpers_records import raw_preference_record


def test_the_memories_subject_is_never_an_organisation() -> None:
    record = raw_preference_record(
        query="how do i renew my permit?",
        retrieved_memories=["user's permit number is 4471 2210", "user rents a flat in Dravnik"],
        response_with_memory="Renew it online.",
        response_without_memory="Renew it online.",
    )
    ner = FixedNer({"user": "ORGANIZATION", "Dravnik": "LOCATION"})
    (result,) = deidentify_records([record], ner)
    memories = result.fields["retrieved_memories"]
    assert memories[1].startswith("user rents a flat in [LOCATION_")
    assert "ORGANIZATION" not in " ".join(memories)


def test_a_user_inside_a_name_is_still_redacted() -> None:
    record = raw_preference_record(
        query="my friend is at Userwerk Studio",
        retrieved_memories=["user likes Userwerk Studio"],
        response_with_memory="Userwerk Studio sounds fun.",
        response_without_memory="Sounds fun.",
    )
    (result,) = deidentify_records([record], FixedNer({"Userwerk Studio": "ORGANIZATION"}))
    assert "Userwerk" not in result.published_fields()["query"]


@pytest.mark.parametrize(
    ("surface", "text", "expected"),
    [
        ("Tết", "A box of sweets for Tết is a classic.", True),
        ("Día de Muertos", "For Día de Muertos build an altar.", True),
        ("Tèo", "Ask Tèo about it.", False),
    ],
)
def test_accented_holidays_are_public(surface: str, text: str, expected: bool) -> None:
    start = text.index(surface)
    assert public_mention(surface, text, start, start + len(surface), kind="PERSON") is expected


@pytest.mark.parametrize(
    ("own", "unaware", "expected"),
    [
        (["is kvz or dorna cheaper"], ["Neither KVZ nor Dorna is always cheaper."], {"kvz"}),
        (["when do bxce results come out"], ["BXCE results come out in August."], {"bxce"}),
        # the participant writes it in capitals too: an airport or a code of theirs
        (["we land in QRX on friday", "qrx at 5"], ["We land in QRX on Friday."], set()),
        # beside another capitalised word: a family name written in capitals
        (["cv for tamura aiko"], ['Write "TAMURA Aiko" on the CV.'], set()),
        # tied to the participant's work
        (["i work at kvz now"], ["KVZ is a big firm."], set()),
        (["my mum is at kvz"], ["KVZ is a big firm."], set()),
        # only the response that saw the memories spells it: no evidence
        (["is kvz cheaper"], ["Compare prices online."], set()),
    ],
)
def test_spelled_acronyms(own: list[str], unaware: list[str], expected: set[str]) -> None:
    assert spelled_acronyms(own, unaware, [*own, *unaware]) == expected


def test_lowercase_acronym_the_memory_free_response_spells_is_kept() -> None:
    record = raw_preference_record(
        query="my car cover ends soon, is kvz or dorna cheaper?",
        retrieved_memories=["user drives a small hatchback"],
        response_with_memory="KVZ has more branches; compare quotes.",
        response_without_memory="Neither KVZ nor Dorna is always cheaper; compare quotes.",
    )
    (result,) = deidentify_records([record], FixedNer({"kvz": "LOCATION", "KVZ": "LOCATION"}))
    published = result.published_fields()
    assert "kvz or dorna" in published["query"]
    assert "KVZ" in published["response_without_memory"]


def test_lowercase_acronym_of_an_employer_is_redacted() -> None:
    record = raw_preference_record(
        query="i work nights at kvz, can i swap a shift?",
        retrieved_memories=["user works at kvz"],
        response_with_memory="Ask your KVZ manager.",
        response_without_memory="Ask KVZ HR about it.",
    )
    (result,) = deidentify_records([record], FixedNer({"kvz": "ORGANIZATION", "KVZ": "ORGANIZATION"}))
    assert "kvz" not in result.published_fields()["query"]


def _landmarks(texts: list[str], keys: list[str]) -> set[str]:
    from dataset_builder.public import _fold_same_length, landmarks

    return landmarks([(_fold_same_length(t), t) for t in texts], keys)


@pytest.mark.parametrize(
    ("texts", "keys", "expected"),
    [
        (["a picnic in Brask Park", "Brask Park has benches"], ["brask park"], {"brask park"}),
        (["hike Mount Quorra in July"], ["mount quorra"], {"mount quorra"}),
        (["the Estadio Velmar is near the metro"], ["estadio velmar"], {"estadio velmar"}),
        (["walk the Tolven Coast Way"], ["tolven coast way"], {"tolven coast way"}),
        (["tourists going to the cliffs of dravno", "the Cliffs of Dravno"], ["dravno"], {"dravno"}),
        # near a home, family or work
        (["we live next to Brask Park"], ["brask park"], set()),
        (["my parents in Brask Park"], ["brask park"], set()),
        # after a house number: a street address
        (["send it to 12 Fenmore Way"], ["fenmore way"], set()),
        # another of the participant's places is a word of it: it names their town
        (
            ["lost my wallet near velmora station", "user lives in velmora"],
            ["velmora station", "velmora"],
            set(),
        ),
        # no landmark noun: a town
        (["a week in Dravno"], ["dravno"], set()),
        # "of" without a landmark noun before it every time
        (["the cliffs of dravno", "lives in dravno"], ["dravno"], set()),
        # streets, hills and markets are where people live and work
        (["meet at Brask Market", "Tollen Hill at dawn"], ["brask market", "tollen hill"], set()),
    ],
)
def test_landmarks(texts: list[str], keys: list[str], expected: set[str]) -> None:
    assert _landmarks(texts, keys) == expected


def test_landmark_in_a_response_is_kept_and_the_home_town_redacted() -> None:
    record = raw_preference_record(
        query="what can my parents do in velmora with little walking?",
        retrieved_memories=["user lives in velmora"],
        response_with_memory="In Velmora, Brask Park has benches and the Tollen Museum is flat.",
        response_without_memory="Brask Park has lots of benches.",
    )
    ner = FixedNer({"velmora": "LOCATION", "Velmora": "LOCATION", "Brask Park": "LOCATION"})
    (result,) = deidentify_records([record], ner)
    published = result.published_fields()
    assert "Brask Park" in published["response_with_memory"]
    assert "Brask Park" in published["response_without_memory"]
    assert "velmora" not in published["query"].lower()
    assert "Velmora" not in published["response_with_memory"]


@pytest.mark.parametrize(
    ("surface", "expected"),
    [
        ("Brask Park", True),
        ("Mount Quorra", True),
        ("Estadio Velmar", True),
        ("Park Jiwoo", False),  # a family name first
        ("brask park", False),  # not written as a name
        ("Tollen Hill", False),  # hills are where people live
        ("Brask", False),
    ],
)
def test_landmark_name(surface: str, expected: bool) -> None:
    from dataset_builder.public import landmark_name

    assert landmark_name(surface) is expected


def test_a_sight_the_response_names_near_the_participants_town_is_kept() -> None:
    record = raw_preference_record(
        query="my parents visit in may, ideas with little walking?",
        retrieved_memories=["user lives in Tollenberg"],
        response_with_memory="Near Tollenberg, Quorrenuma Park has benches.",
        response_without_memory="Parks with benches are best.",
    )
    ner = FixedNer({"Tollenberg": "LOCATION", "Quorrenuma Park": "PERSON"})
    (result,) = deidentify_records([record], ner)
    published = result.published_fields()["response_with_memory"]
    assert "Quorrenuma Park" in published
    assert "Tollenberg" not in published


def test_a_person_the_response_names_near_the_participants_town_is_still_redacted() -> None:
    record = raw_preference_record(
        query="my parents visit in may, ideas with little walking?",
        retrieved_memories=["user lives in Tollenberg"],
        response_with_memory="Near Tollenberg, Quorrenuma Parkes runs tours.",
        response_without_memory="Tours are best.",
    )
    ner = FixedNer({"Tollenberg": "LOCATION", "Quorrenuma Parkes": "PERSON"})
    (result,) = deidentify_records([record], ner)
    assert "Quorrenuma" not in result.published_fields()["response_with_memory"]


def _platform_record(query: str) -> object:
    return raw_preference_record(
        query=query,
        retrieved_memories=["user sells soup from home"],
        response_with_memory="Sign up on the Lyft Parcels merchant page.",
        response_without_memory="Use the Lyft Parcels merchant page.",
    )


def test_a_platforms_own_product_is_public() -> None:
    record = _platform_record("how do i get my soup on lyft parcels?")
    (result,) = deidentify_records([record], FixedNer({"Lyft Parcels": "ORGANIZATION"}))
    assert "Lyft Parcels" in result.published_fields()["response_without_memory"]


def test_a_platforms_product_is_redacted_for_someone_who_works_there() -> None:
    record = _platform_record("i work shifts at lyft parcels, can i swap one?")
    (result,) = deidentify_records([record], FixedNer({"Lyft Parcels": "ORGANIZATION"}))
    assert "Lyft Parcels" not in result.published_fields()["response_without_memory"]


@pytest.mark.parametrize(
    ("text", "surface", "kind", "expected"),
    [
        ("Pair it with a nicer box of Velka Mints from the shop.", "Velka Mints", "PERSON", True),
        ("Bring two bottles of Tollen for the party.", "Tollen", "ORGANIZATION", True),
        ("Give the box to Velka Brand.", "Velka Brand", "PERSON", False),
        ("She sells knitted hats on Quorra and at fairs.", "Quorra", "PERSON", True),
        ("user sells cakes at the market, listed on brask", "brask", "ORGANIZATION", True),
        ("He sold the flat on Dravnik Road.", "Dravnik", "LOCATION", False),  # a street
        ("She sells hats on Quorra Street.", "Quorra", "PERSON", False),  # part of a longer name
        ("He sat on Quorra's lap.", "Quorra", "PERSON", False),  # no selling
        ("An official Brask United jersey with his name.", "Brask United", "PERSON", True),
        ("Use a seasoning like Tollen's and order ahead.", "Tollen", "PERSON", True),
        ("Ask Tollen about the seasoning.", "Tollen", "PERSON", False),
    ],
)
def test_products_and_marketplaces(text: str, surface: str, kind: str, expected: bool) -> None:
    start = text.index(surface)
    assert public_mention(surface, text, start, start + len(surface), kind=kind) is expected


def test_a_place_named_for_a_hostel_twice_is_a_trip_destination() -> None:
    from dataset_builder.public import trip_places

    texts = ["book a hostel in dravno for two", "Hostels in Dravno fill up fast."]
    assert trip_places(texts, ["dravno"]) == {"dravno"}
    # a hotel where someone works ties it to them
    assert trip_places(["she works at a hotel in dravno", "Dravno is far"], ["dravno"]) == set()


@pytest.mark.parametrize(
    ("own", "unaware", "expected"),
    [
        # the capital of a sentence's first word is no name beside the acronym
        (["me piden el kvx"], ["El KVX se escribe con puntos."], {"kvx"}),
        (["me piden el kvx"], ["Pide a Tomas KVX el papel."], set()),
        # a site the memory-free response names by itself
        (["para inscribirme en dorvasa"], ["En dorvasa.cl puedes hacerlo."], {"dorvasa"}),
        # a site the participant wrote: the response only repeats it
        (["book at dorvasa.cl, dorvasa rocks"], ["Book at dorvasa.cl today."], set()),
    ],
)
def test_spelled_acronyms_sentence_starts_and_sites(
    own: list[str], unaware: list[str], expected: set[str]
) -> None:
    assert spelled_acronyms(own, unaware, [*own, *unaware]) == expected


def test_an_article_before_a_common_word_does_not_make_a_name() -> None:
    record = raw_preference_record(
        query="me piden el kvx, esta bien escrito?",
        retrieved_memories=["user is a nurse"],
        response_with_memory="Si, esta bien.",
        response_without_memory="El KVX se escribe con puntos y guion.",
    )
    (result,) = deidentify_records([record], FixedNer({"el kvx": "ORGANIZATION", "El KVX": "ORGANIZATION"}))
    published = result.published_fields()
    assert "el kvx" in published["query"]
    assert "El KVX" in published["response_without_memory"]


@pytest.mark.parametrize(
    ("surface", "expected"),
    [
        ("Meisterprüfung", True),
        ("krankmeldung", True),
        ("Mitgliedschaft", True),
        ("Kaohsiung", False),  # "-ung" after a vowel
        ("Jung", False),  # short: a name
        ("Hans Jung", False),  # two words
        ("Dravnikova", False),
    ],
)
def test_derived_noun(surface: str, expected: bool) -> None:
    from dataset_builder.evidence import derived_noun

    assert derived_noun(surface) is expected


def test_a_german_derived_noun_is_never_a_place() -> None:
    record = raw_preference_record(
        query="my boss says i should do the gesellenbefragung next year, worth it?",
        retrieved_memories=["user is a carpenter in Dravnik"],
        response_with_memory="The Gesellenbefragung helps if you stay in Dravnik.",
        response_without_memory="The Gesellenbefragung usually pays off.",
    )
    ner = FixedNer({"gesellenbefragung": "LOCATION", "Gesellenbefragung": "LOCATION", "Dravnik": "LOCATION"})
    (result,) = deidentify_records([record], ner)
    published = result.published_fields()
    assert "gesellenbefragung" in published["query"]
    assert "Dravnik" not in published["response_with_memory"]


@pytest.mark.parametrize(
    ("own", "unaware", "expected"),
    [
        (["we live in dravnik"], ["Near Dravnik, a houseboat in Quorrakom is calm."], {"quorrakom"}),
        # an inflected form of the participant's word is theirs
        (["we land in velmora"], ["In Velmorach the trams are cheap."], set()),
        # all capitals and stop words are left to other rules
        (["my number card"], ["Ring the KVZ line; The office opens at 9."], {"ring"}),
    ],
)
def test_unaware_names(own: list[str], unaware: list[str], expected: set[str]) -> None:
    from dataset_builder.evidence import unaware_names

    assert unaware_names(own, unaware) - {"in", "near"} == expected


def test_a_place_only_the_memory_free_response_knows_is_kept_beside_their_town() -> None:
    record = raw_preference_record(
        query="weekend ideas near dravnik for our anniversary?",
        retrieved_memories=["user lives in dravnik", "user's wife loves boats"],
        response_with_memory="Since she loves boats, a houseboat night in Quorrakom near Dravnik is special.",
        response_without_memory="Near Dravnik: Quorrakom for a houseboat, or the hills.",
    )
    ner = FixedNer({"dravnik": "LOCATION", "Dravnik": "LOCATION", "Quorrakom": "PERSON"})
    (result,) = deidentify_records([record], ner)
    published = result.published_fields()
    assert "Quorrakom" in published["response_with_memory"]
    assert "Dravnik" not in published["response_with_memory"]


def test_a_name_only_the_memory_aware_response_uses_beside_their_town_is_redacted() -> None:
    record = raw_preference_record(
        query="weekend ideas for our anniversary?",
        retrieved_memories=["user lives in Dravnik"],
        response_with_memory="In Dravnik, Quorrakom Lane has a boat hire.",
        response_without_memory="Try a boat trip.",
    )
    ner = FixedNer({"Dravnik": "LOCATION", "Quorrakom Lane": "PERSON"})
    (result,) = deidentify_records([record], ner)
    assert "Quorrakom" not in result.published_fields()["response_with_memory"]


@pytest.mark.parametrize(
    ("texts", "expected"),
    [
        (["is kvz or dorna cheaper?"], {"dorna"}),
        (["Dorna vs KVZ: which?"], {"dorna"}),
        (["neither KVZ nor Dorna is cheap"], {"dorna"}),
        (["is kvz or dorna cheaper?", "my sister works at dorna"], set()),  # tied to work
        (["is kvz or dorna cheaper?", "my mum lives with dorna"], set()),  # tied to family
        (["kvz and dorna came over"], set()),  # "and" joins people as well
        (["is kvz or it cheaper?"], set()),  # a stop word
    ],
)
def test_alternatives_to_a_public_name(texts: list[str], expected: set[str]) -> None:
    from dataset_builder.public import alternatives

    assert alternatives(texts, ["kvz"]) == expected


def test_a_rival_of_a_public_platform_is_kept() -> None:
    record = raw_preference_record(
        query="should i sell on ebay or krelly?",
        retrieved_memories=["user sews dresses"],
        response_with_memory="Krelly takes lower fees for handmade dresses.",
        response_without_memory="Both work; compare the fees.",
    )
    (result,) = deidentify_records([record], FixedNer({"krelly": "PERSON", "Krelly": "PERSON"}))
    published = result.published_fields()
    assert "krelly" in published["query"]
    assert "Krelly" in published["response_with_memory"]


@pytest.mark.parametrize(
    ("texts", "expected"),
    [
        (
            ["a trip to quorria in july. dravno 4 days itinerary?", "Dravno in 4 days: the old town"],
            {"dravno"},
        ),
        (["dravno itinerary please", "Dravno for three nights"], {"dravno"}),
        # a working week, not a stay
        (["i commute to dravno 3 days a week", "Dravno 3 days a week"], set()),
        # a stay with family
        (["dravno 4 days with mum", "Dravno in 4 days"], set()),
    ],
)
def test_a_stays_length_after_a_place_makes_it_a_destination(texts: list[str], expected: set[str]) -> None:
    from dataset_builder.public import trip_places

    assert trip_places(texts, ["dravno"]) == expected


@pytest.mark.parametrize(
    ("text", "surface", "kind", "expected"),
    [
        ("For a Velwood theme, try a retro saree.", "Velwood", "LOCATION", True),
        ("the party is Velwood themed", "Velwood", "LOCATION", True),
        ("Velwood is where we live", "Velwood", "LOCATION", False),
        ("Data Analyst | SQL | dashboards", "Data Analyst", "ORGANIZATION", True),
        ("Priya Raghu | Data Analyst", "Priya Raghu", "PERSON", False),  # no role noun
        ("Data Analyst and more", "Data Analyst", "ORGANIZATION", False),
    ],
)
def test_themes_and_headline_roles(text: str, surface: str, kind: str, expected: bool) -> None:
    start = text.index(surface)
    assert public_mention(surface, text, start, start + len(surface), kind=kind) is expected


@pytest.mark.parametrize(
    ("unaware", "everything", "expected"),
    [
        (["Any garage can do the Prickerl in a day."], ["prickerl is due"], {"prickerl"}),
        (["The Quellgeld is paid monthly."], ["quellgeld?"], {"quellgeld"}),
        (["For a Kinderfest with toddlers, keep it short."], ["any kinderfest ideas"], {"kinderfest"}),
        (["Ask a Velmora Tours guide."], ["velmora tours"], set()),  # part of a longer name
        (["Ask the Velmora Clinic."], ["velmora clinic"], set()),  # part of a longer name
        (["Go to the Velmora's desk."], ["velmora"], set()),  # a possessive
        (["Ask at the Brasko."], ["i work at the brasko"], set()),  # an employer
        (["Ask at the Brasko."], ["my mum lives near brasko"], set()),  # near family
    ],
)
def test_articled_by_unaware(unaware: list[str], everything: list[str], expected: set[str]) -> None:
    from dataset_builder.evidence import articled_by_unaware

    assert articled_by_unaware(unaware, [*everything, *unaware]) == expected


def test_a_word_the_memory_free_response_writes_after_the_is_kept() -> None:
    record = raw_preference_record(
        query="prickerl is due for my car, where can i do it?",
        retrieved_memories=["user drives a small hatchback"],
        response_with_memory="Book the Prickerl at any garage.",
        response_without_memory="Any authorised garage can do the Prickerl in a day.",
    )
    (result,) = deidentify_records(
        [record], FixedNer({"prickerl": "ORGANIZATION", "Prickerl": "ORGANIZATION"})
    )
    published = result.published_fields()
    assert published["query"].startswith("prickerl is due")
    assert "Prickerl" in published["response_with_memory"]


@pytest.mark.parametrize(
    ("texts", "expected"),
    [
        (["book us something nice in dravno", "In Dravno, a night by the river"], {"dravno"}),
        (["booked a hotel in Dravno", "Dravno at night"], {"dravno"}),
        # booked where they live
        (["book a table in dravno", "user lives in dravno"], set()),
        # once only: a visit the text leaves unsaid
        (["book us something nice in dravno"], set()),
    ],
)
def test_booking_in_a_place_makes_it_a_destination(texts: list[str], expected: set[str]) -> None:
    from dataset_builder.public import trip_places

    assert trip_places(texts, ["dravno"]) == expected


def test_a_name_before_portal_is_a_public_service() -> None:
    text = "Apply on the Velmora Transit portal early."
    start = text.index("Velmora Transit")
    assert public_mention("Velmora Transit", text, start, start + 15, kind="ORGANIZATION")
    text = "Velmora Transit runs late."
    assert not public_mention("Velmora Transit", text, 0, 15, kind="ORGANIZATION")
