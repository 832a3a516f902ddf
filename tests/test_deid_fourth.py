"""Mechanisms added after the fourth held-out corpus was demoted to tuning (2026-12-01).

Obfuscated e-mails with a bracketed "at" and a dotted domain, days after "the" before more
words, plates after a vehicle word, medical practices, floor-and-door, Korean road and Singapore
block addresses, names alone on a message's last line. Every behaviour has a negative beside it.
No sentence here is taken from a corpus.
"""

from __future__ import annotations

import pytest

from dataset_builder.detectors import Entity, find_patterns, find_typed_organisations
from dataset_builder.entity_cues import find_signed_people


def _found(text: str, kind: str) -> list[str]:
    return [e.text for e in find_patterns(text) if e.kind == kind]


@pytest.mark.parametrize(
    ("text", "email"),
    [
        ("write to office[at]lakeside-school.org.uk today", "office[at]lakeside-school.org.uk"),
        ("reach me at tomas.k88 (at) seznam.cz, thanks", "tomas.k88 (at) seznam.cz"),
        ("cc bea_m( at )web.de please", "bea_m( at )web.de"),
    ],
)
def test_bracketed_at_with_a_dotted_domain_is_an_email(text: str, email: str) -> None:
    assert _found(text, "EMAIL") == [email]


@pytest.mark.parametrize(
    "text", ["i work at shop.com now", "see you (at) home. ok", "meet [at] 5.30 sharp", "lunch at 12.30"]
)
def test_a_bare_at_before_a_host_or_a_bracketed_at_before_no_host_is_no_email(text: str) -> None:
    assert _found(text, "EMAIL") == []


@pytest.mark.parametrize(
    ("text", "date"),
    [
        ("can i take the 14th off next month", "the 14th"),
        ("booked on the 3rd about the boiler", "the 3rd"),
        ("stay until the 21st until we know", "the 21st"),
    ],
)
def test_a_day_after_the_before_off_about_until(text: str, date: str) -> None:
    assert _found(text, "DATE") == [date]


@pytest.mark.parametrize(
    "text", ["that was the 3rd time about it", "the 2nd floor off the stairs", "the 18th century about"]
)
def test_ordinals_before_a_noun_are_no_date(text: str) -> None:
    assert _found(text, "DATE") == []


@pytest.mark.parametrize(
    ("text", "plate"),
    [
        ("my car is AB 123 CD (a small one)", "AB 123 CD"),
        ("van insurance for KXY 903J is due", "KXY 903J"),
        ("new tyres for the Fiesta, reg LM-4821-Q", "LM-4821-Q"),
    ],
)
def test_a_plate_after_a_vehicle_word(text: str, plate: str) -> None:
    assert _found(text, "ID_NUMBER") == [plate]


@pytest.mark.parametrize("text", ["my new GPU is an RTX 4090 TI", "the exam code is ABC 123 D"])
def test_letters_digits_letters_without_a_vehicle_word_are_no_plate(text: str) -> None:
    assert _found(text, "ID_NUMBER") == []


def test_a_medical_practice_after_a_place_word_is_an_organisation() -> None:
    found = [e.text for e in find_typed_organisations("seen at brookfield medical practice today")]
    assert found == ["brookfield medical practice"]
    assert find_typed_organisations("she works in general medical practice") == []
    assert find_typed_organisations("he is in private dental practice now") == []
    assert find_typed_organisations("the practice at my gp practice") == []


@pytest.mark.parametrize(
    ("text", "address"),
    [
        ("ship to Calle Olmo 8, 3º 2ª please", "Calle Olmo 8, 3º 2ª"),
        ("ship to Carrer Nou 12, 1r 2a now", "Carrer Nou 12, 1r 2a"),
        ("deliver to 51 Yeonhui-ro 8-gil, Seoul", "51 Yeonhui-ro 8-gil"),
        ("office on Jong-ro 33 floor", "Jong-ro 33"),
        ("flat at Blk 23 Bedok North Ave 3 #04-17 ok", "Blk 23 Bedok North Ave 3 #04-17"),
    ],
)
def test_floor_door_korean_road_and_block_addresses(text: str, address: str) -> None:
    assert address in _found(text, "LOCATION")


@pytest.mark.parametrize(
    "text",
    ["ship to Calle Olmo 8, 2 boxes", "Block 2 of the course", "a follow-up call", "we did a k-pop class"],
)
def test_no_address_in_counts_course_blocks_or_hyphenated_words(text: str) -> None:
    assert not any(a.endswith(("boxes", "course")) for a in _found(text, "LOCATION"))
    assert all("-" not in a or a.startswith("Calle") for a in _found(text, "LOCATION"))
    if text != "ship to Calle Olmo 8, 2 boxes":
        assert _found(text, "LOCATION") == []


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("let me know if anything changes.\n\nGroetjes,\nMarieke", "Marieke"),
        ("I'll bring the cake.\n\nSoledad", "Soledad"),
        ("Can't wait to see you all - 서연\"", "서연"),
    ],
)
def test_a_name_alone_on_the_last_line_is_a_signature(text: str, name: str) -> None:
    assert [e.text for e in find_signed_people(text)] == [name]


@pytest.mark.parametrize(
    "text",
    [
        "Hej Marieke,\nI wanted to ask about Friday",
        "Have fun!\n\nCheers",
        "Have a great trip.\n\nEnjoy",
        "it costs 20 - 30",
        "that's all for now\n\nBoxing Day",
    ],
)
def test_no_signature_in_greetings_closings_or_public_names(text: str) -> None:
    assert find_signed_people(text) == []


# --- public agencies, ID schemes and services; employers; kinship words; decimals -----------------


def _published(records: list, ner: object) -> dict[str, dict]:
    from dataset_builder.deidentify import deidentify_records

    return {r.record.record_id: r.fields for r in deidentify_records(records, ner)}


def test_agencies_and_id_schemes_are_public_the_number_is_not() -> None:
    from tests.helpers_deid import FixedNer
    from tests.test_dataset_deid_measure import _record

    record = _record(
        "a",
        query="the Finanzamt wants my Steuer-ID, and Kela sent a letter to Ritva Laine",
        response_with_memory="Kela letters are routine; ask Ritva Laine.",
        response_without_memory="Kela letters are routine.",
    )
    ner = FixedNer({"Kela": "ORGANIZATION", "Ritva Laine": "PERSON", "Finanzamt": "ORGANIZATION"})
    fields = _published([record], ner)["a"]
    assert "Kela" in fields["query"] and "Finanzamt" in fields["query"]
    assert "Ritva Laine" not in fields["query"]


def test_a_service_is_public_unless_the_participant_works_there() -> None:
    from tests.helpers_deid import FixedNer
    from tests.test_dataset_deid_measure import _record

    ner = FixedNer({"Deliveroo": "ORGANIZATION", "deliveroo": "ORGANIZATION", "Lidl": "ORGANIZATION"})
    shopper = _record("s", "p1", query="is Lidl or Deliveroo cheaper for a weekly shop?")
    worker = _record(
        "w",
        "p2",
        query="i work lates at deliveroo, tips to wind down?",
        response_with_memory="After a late at Deliveroo, try a warm shower.",
    )
    contact = _record("c", "p3", query="tom from Lidl asked for my cv, and is Lidl hiring?")
    published = _published([shopper, worker, contact], ner)
    assert "Lidl" in published["s"]["query"] and "Deliveroo" in published["s"]["query"]
    assert "deliveroo" not in published["w"]["query"]
    assert "Deliveroo" not in published["w"]["response_with_memory"]  # the same name everywhere
    assert "Lidl" not in published["c"]["query"]


def test_work_context() -> None:
    from dataset_builder.public import work_context

    text = "my shift at lidl ends late"
    assert work_context(text, 12, 16)
    text = "ana from lidl asked me"
    assert work_context(text, 9, 13)
    text = "cheaper from lidl than aldi"
    assert not work_context(text, 13, 17)


def test_a_kinship_word_before_a_name_makes_a_person_of_any_ner_label() -> None:
    from tests.helpers_deid import FixedNer
    from tests.test_dataset_deid_measure import _record

    record = _record("k", query="what to cook for Oma Griet and a trip to Don Benito?")
    ner = FixedNer({"Oma Griet": "LOCATION", "Don Benito": "LOCATION"})
    query = _published([record], ner)["k"]["query"]
    assert "Oma [PERSON_1]" in query  # the kinship word stays, the name goes, as a person
    assert "Don" not in query  # a place that starts with an honorific stays a whole place


def test_a_decimal_after_at_is_no_handle() -> None:
    assert _found("at 38.5 give her fluids", "HANDLE") == []
    assert _found("find me at jo.bakes on there", "HANDLE") == ["jo.bakes"]


# --- greetings, saints, and the exact-text check beside a must-keep phrase ---------------------


def test_a_greeting_or_closing_is_no_name_and_leaves_the_name_after_it() -> None:
    from tests.helpers_deid import FixedNer
    from tests.test_dataset_deid_measure import _record

    record = _record(
        "g",
        query="write a note to maple leaves, the nursery",
        response_with_memory="Hola Maple Leaves!\n\nWe are away on Friday.\n\nSaludos,\nIrene",
    )
    ner = FixedNer({"Hola Maple Leaves": "PERSON", "Saludos": "PERSON", "Irene": "PERSON"})
    text = _published([record], ner)["g"]["response_with_memory"]
    assert text.startswith("Hola [PERSON_")
    assert "Saludos," in text and "Irene" not in text


def test_a_name_after_a_saints_title_is_the_saint() -> None:
    from tests.helpers_deid import FixedNer
    from tests.test_dataset_deid_measure import _record

    record = _record("s", query="pia's bday falls on santa pia week, and pia loves roses")
    text = _published([record], FixedNer({"pia": "PERSON"}))["s"]["query"]
    assert text == "[PERSON_1]'s bday falls on santa pia week, and [PERSON_1] loves roses"


def test_the_exact_text_check_skips_a_context_items_text_inside_a_must_keep_phrase() -> None:
    from dataset_builder.pii_eval import PlantedItem, evaluate_planted
    from tests.helpers_deid import FixedNer
    from tests.test_dataset_deid_measure import _corpus, _record

    record = _record("s", query="pia's bday falls on santa pia week")
    item = PlantedItem("PERSON", "pia", "pia", "pia's bday")
    kept = evaluate_planted(_corpus(record, [item], ["santa pia"]), FixedNer({"pia": "PERSON"}))
    assert kept.leaks_in_published == 0 and kept.over_redaction["lost"] == 0
    # without the must-keep phrase the corpus does not say "santa pia" is no identifier: a leak
    bare = evaluate_planted(_corpus(record, [item]), FixedNer({"pia": "PERSON"}))
    assert bare.leaks_in_published == 1


# --- glosses, countries, common nouns after "the", public names with chat words ----------------


def test_a_lowercase_gloss_in_brackets_after_with_is_no_nickname() -> None:
    from dataset_builder.entity_cues import find_nicknames

    assert find_nicknames("kids with measles (mazelen) stay home") == []
    assert find_nicknames("lunch with Ana Sousa (Nini) later") == [("Nini", "Ana Sousa")]


def test_short_and_long_country_names_are_countries() -> None:
    from dataset_builder.public import country_names

    names = country_names()
    assert {"us", "uae", "republic of korea", "republic of ireland"} <= names
    assert "seoul" not in names and "singapore" not in names


def test_a_lowercase_place_name_after_the_is_a_common_noun() -> None:
    from dataset_builder.detectors import find_places

    assert find_places("i wrote to the council about it") == []
    assert [e.text for e in find_places("we moved to council bluffs")] == ["council bluffs"]


def test_a_public_name_with_chat_words_or_a_my_page_is_public() -> None:
    from tests.helpers_deid import FixedNer
    from tests.test_dataset_deid_measure import _record

    record = _record(
        "p",
        query="lidl pls or aldi? and log in to Mijn DigiD for Ria Bos",
        response_with_memory="Lidl is fine.",
    )
    ner = FixedNer({"lidl pls": "PERSON", "Mijn DigiD": "ORGANIZATION", "Ria Bos": "PERSON"})
    query = _published([record], ner)["p"]["query"]
    assert query.startswith("lidl pls or aldi?") and "Mijn DigiD" in query
    assert "Ria Bos" not in query
    # a name and a capitalised word after it is no chat word: "Ria Bos" stays a name
    other = _record("q", "p9", query="ask Lidl Bos about it")
    assert "Lidl Bos" not in _published([other], FixedNer({"Lidl Bos": "PERSON"}))["q"]["query"]


def test_a_date_only_the_memory_free_response_and_general_knowledge_carry_is_kept() -> None:
    from tests.helpers_deid import FixedNer
    from tests.test_dataset_deid_measure import _record

    general = _record(
        "g",
        query="how do i file my taxes online?",
        response_with_memory="Use the portal; the deadline is 31 July.",
        response_without_memory="File on the portal. The deadline is 31 July.",
    )
    personal = _record(
        "h",
        "p2",
        query="my bday is 31 July, party ideas?",
        response_with_memory="For 31 July, a picnic.",
        response_without_memory="Summer parties suit 31 July well.",
    )
    published = _published([general, personal], FixedNer({}))
    assert "31 July" in published["g"]["response_with_memory"]
    assert "31 July" in published["g"]["response_without_memory"]
    # the participant wrote the date: it is theirs, in every field
    assert "31 July" not in published["h"]["response_with_memory"]
    assert "31 July" not in published["h"]["response_without_memory"]


# --- agency sites, programmes, short acronyms ----------------------------------------------------


@pytest.mark.parametrize(
    ("url", "public"),
    [
        ("ameli.fr", True),
        ("www.gov.uk/council-tax", True),
        ("impots.gouv.fr", True),
        ("instagram.com", True),
        ("instagram.com/ana.bakes", False),  # a platform page with a path names its owner
        ("anabakes.co.uk", False),
        ("linktr.ee/ana", False),
    ],
)
def test_agency_government_and_platform_home_sites_are_public(url: str, public: bool) -> None:
    from dataset_builder.deidentify import _public_url

    assert _public_url(url) is public


def test_an_agencys_programme_is_public_and_a_short_acronym_only_in_capitals() -> None:
    from dataset_builder.public import public_mention

    text = "claim through the Kela Family Benefit, and ask NAV or Nav Singh"
    assert public_mention("Kela Family Benefit", text, 18, 37, kind="ORGANIZATION")
    assert public_mention("NAV", text, 47, 50)
    assert not public_mention("Nav Singh", text, 54, 63, kind="PERSON")
    assert not public_mention("Nav", text, 54, 57, kind="PERSON")


# --- emoji, phone spellings, more country domains, holidays of many countries -------------------


def test_an_emoji_ends_a_ner_span() -> None:
    from dataset_builder.detectors import _split_at_symbols

    entity = Entity(0, 16, "ORGANIZATION", "Diwali 🎉 Roshni", "ner")
    assert [e.text for e in _split_at_symbols(entity)] == ["Diwali", "Roshni"]
    plain = Entity(0, 10, "ORGANIZATION", "Acme Foods", "ner")
    assert _split_at_symbols(plain) == [plain]


def test_a_phone_with_and_without_its_country_code_is_one_number() -> None:
    from dataset_builder.resolver import canonical

    assert canonical("PHONE", "+65 8123 4567") == canonical("PHONE", "8123 4567")
    assert canonical("PHONE", "8123 4567") != canonical("PHONE", "8123 4568")


@pytest.mark.parametrize(
    ("text", "url"), [("my site joanvila.cat has it", "joanvila.cat"), ("see shop.co.za", "shop.co.za")]
)
def test_more_country_domains_are_urls(text: str, url: str) -> None:
    assert _found(text, "URL") == [url]


@pytest.mark.parametrize("text", ["see README.md and main.py", "it is.", "look at.be careful"])
def test_file_names_and_words_are_no_urls(text: str) -> None:
    assert _found(text, "URL") == []


def test_festivals_of_many_countries_are_public_but_a_first_name_is_not() -> None:
    from dataset_builder.public import public_mention

    text = "we go home for songkran and koningsdag with Holi Park"
    assert public_mention("songkran", text, 16, 24, kind="ORGANIZATION")
    assert public_mention("koningsdag", text, 29, 39, kind="ORGANIZATION")
    assert not public_mention("Holi Park", text, 45, 54, kind="PERSON")


@pytest.mark.parametrize(
    ("text", "town"),
    [
        ("Calle Luna 3, Centro, C.P. 29000, OAX. tel 1", "OAX"),
        ("Ringstraße, Innere Stadt, 1010, Wien", "Wien"),
    ],
)
def test_the_town_after_a_postcode_at_an_address_end(text: str, town: str) -> None:
    assert town in _found(text, "LOCATION")


@pytest.mark.parametrize(
    "text", ["order 12, 04100, Friday.", "it costs 1,2000, Really.", "see room, 2040, Monday"]
)
def test_no_town_after_a_number_that_is_no_postcode(text: str) -> None:
    assert _found(text, "LOCATION") == []


def test_a_school_year_is_no_name_and_a_verb_before_college_is_no_name_word() -> None:
    from dataset_builder.entity_cues import find_institutions
    from dataset_builder.resolver import _plausible_name

    text = "her son is in Grade 4 at Hillview"
    assert not _plausible_name("Grade 4", text, 14, 21, "LOCATION")
    assert _plausible_name("Hillview", text, 25, 33, "ORGANIZATION")
    assert find_institutions("she is starting college in March") == []
    assert find_institutions("he left college early") == []
    assert [e.text for e in find_institutions("mateo attends kingsway college")] == ["kingsway college"]


def test_a_lowercase_preposition_between_names_splits_a_ner_span() -> None:
    from dataset_builder.detectors import _split_at_prepositions

    run_on = Entity(0, 19, "ORGANIZATION", "Corolla to Acme's", "ner")
    assert [e.text for e in _split_at_prepositions(run_on)] == ["Corolla", "Acme"]
    for name in ("Bank of America", "Casa de Campo", "Acme Foods", "Drive to work"):
        entity = Entity(0, len(name), "ORGANIZATION", name, "ner")
        assert _split_at_prepositions(entity) == [entity]
