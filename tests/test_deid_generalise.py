"""Mechanisms added after the third held-out corpus was demoted to tuning (2026-12-01).

Weak NER evidence (ungrounded response spans, acronyms), date / URL / handle / ID formats, the
canonical spellings of one identifier, nicknames and short forms, sign-off and self-introduction
cues. Every behaviour has a negative beside it. No sentence here is taken from a corpus.
"""

from __future__ import annotations

import pytest

from dataset_builder.deidentify import deidentify_records
from dataset_builder.detectors import Entity, find_patterns, generalize_date
from dataset_builder.entity_cues import find_lowercase_people, find_nicknames, find_signed_people
from dataset_builder.evidence import acronym_or_code, grounded, own_words, sentence_bounds
from dataset_builder.resolver import ParticipantRedactor, canonical
from tests.helpers_deid import FixedNer
from tests.test_dataset_deid_measure import _record


def _found(text: str, kind: str) -> list[str]:
    return [e.text for e in find_patterns(text) if e.kind == kind]


# --- weak NER evidence ------------------------------------------------------------------------


def test_grounded_needs_a_word_of_the_participant_or_an_inflection_of_one() -> None:
    words = own_words(["my cousin Marta lives in Gdańsk", "mail t.kowal@example.pl"])
    assert grounded("Gdańska", words)  # an inflected form
    assert grounded("Tomek Kowal", words)  # one word is enough
    assert not grounded("the Baltic Sea", words)
    assert not grounded("Mar", words)  # too short to be a stem


def test_acronym_or_code_is_capitals_or_a_letters_and_digits_code() -> None:
    assert all(acronym_or_code(s) for s in ("KRA", "W-2", "P60", "A-B-C"))
    assert not any(acronym_or_code(s) for s in ("Kra", "Acme Ltd", "I", "McDonald"))


def test_sentence_bounds_stop_at_sentence_ends_only() -> None:
    text = "First. Lyon is near; see Vieux Lyon. Last."
    assert text[slice(*sentence_bounds(text, 25, 35))] == " Lyon is near; see Vieux Lyon."


def test_a_name_only_a_response_adds_is_public_and_a_repeated_one_is_not() -> None:
    ner = FixedNer({"Wanjiru": "PERSON", "Safaricom": "ORGANIZATION", "Nakuru": "LOCATION"})
    record = _record(
        query="what should i cook for my sister's visit?",
        retrieved_memories=["user's sister Wanjiru is vegetarian."],
        response_with_memory="Wanjiru would enjoy a lentil stew; pay the grocer with Safaricom.",
        response_without_memory="A lentil stew is easy.",
    )
    (result,) = deidentify_records([record], ner)
    text = result.fields["response_with_memory"]
    assert "Wanjiru" not in text and "Safaricom" in text


def test_an_ungrounded_place_beside_the_participants_own_place_stays_redacted() -> None:
    ner = FixedNer({"Nairobi": "LOCATION", "Karura": "PERSON", "Mombasa": "LOCATION"})
    record = _record(
        query="weekend ideas?",
        retrieved_memories=["user lives in Nairobi."],
        response_with_memory="In Nairobi, walk in Karura. Or take the train to Mombasa one day.",
        response_without_memory="Walk somewhere green.",
    )
    (result,) = deidentify_records([record], ner)
    text = result.fields["response_with_memory"]
    assert "Karura" not in text  # in a sentence that names the participant's city
    assert "Mombasa" in text  # a public place in a sentence of its own


def test_acronyms_ner_calls_organisations_are_kept_except_where_a_place_stands() -> None:
    ner = FixedNer({"KRA": "ORGANIZATION", "TX": "ORGANIZATION"})
    record = _record(
        query="do i file with KRA this year? i moved to Austin, TX",
        retrieved_memories=["user is self-employed."],
        response_with_memory="Yes, file with KRA.",
        response_without_memory="Check the rules.",
    )
    (result,) = deidentify_records([record], ner)
    assert "KRA" in result.fields["query"] and "TX" not in result.fields["query"]


# --- formats ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "date"),
    [
        ("the dentist moved me to the 21st, ugh", "the 21st"),
        ("party on the 2nd and then", "the 2nd"),
        ("her bday 07/04 this year", "07/04"),
        ("dinner is 25/12 at ours", "25/12"),
        ("wir feiern am 09.11. zuhause", "09.11."),
        ("cumple el 14 de febrero", "14 de febrero"),
        ("festa il 3 maggio", "3 maggio"),
        ("verjaardag 12 mei", "12 mei"),
        ("kalas den 6 juni", "6 juni"),
        ("kaarawan sa 8 Hunyo", "8 Hunyo"),
        ("생일은 5월 20일", "5월 20일"),
    ],
)
def test_dates_without_a_year_and_in_other_languages(text: str, date: str) -> None:
    assert _found(text, "DATE") == [date]


@pytest.mark.parametrize(
    "text",
    ["the 2nd time this month", "built in the 19th century", "add 1/2 cup", "open 24/7", "v1.2.3 out"],
)
def test_no_date_in_ordinals_fractions_or_versions(text: str) -> None:
    assert _found(text, "DATE") == []


def test_foreign_and_cjk_dates_generalize_to_the_month() -> None:
    assert generalize_date("14 de febrero") == "February"
    assert generalize_date("3 maggio 2025") == "May 2025"
    assert generalize_date("5월 20일") == "May"
    assert generalize_date("the 21st") == "a date"


@pytest.mark.parametrize(
    ("text", "url"),
    [
        ("shop at mamaskitchen.co.ke now", "mamaskitchen.co.ke"),
        ("see bio.site/jdelacruz for links", "bio.site/jdelacruz"),
        ("my portfolio anaramos.studio is up", "anaramos.studio"),
        ("links on beacons.ai/kimsoo", "beacons.ai/kimsoo"),
    ],
)
def test_urls_under_country_domains_with_paths_or_after_a_site_word(text: str, url: str) -> None:
    assert _found(text, "URL") == [url]


def test_file_names_and_abbreviations_are_no_urls() -> None:
    assert _found("edit main.py and notes.md, e.g. today", "URL") == []


@pytest.mark.parametrize(
    ("text", "handle"),
    [
        ("my tiktok is kim.bakes.daily lol", "kim.bakes.daily"),
        ("username: jdlc_manila everywhere", "jdlc_manila"),
        ("his handle is mvdberg", "mvdberg"),
    ],
)
def test_user_names_after_a_user_name_word_or_a_platform(text: str, handle: str) -> None:
    assert _found(text, "HANDLE") == [handle]


def test_a_user_name_word_before_a_common_word_finds_nothing() -> None:
    assert _found("the username is the same on every site", "HANDLE") == []


@pytest.mark.parametrize(
    ("text", "number"),
    [
        ("pay into NL91 ABNA 0417 1643 00 please", "NL91 ABNA 0417 1643 00"),
        ("my personnummer 19 850 614 2398 7", "19 850 614 2398 7"),
        ("driving licence number 12345/67/890", "12345/67/890"),
        ("his number is 4321-765-098-AB", "4321-765-098-AB"),
    ],
)
def test_ibans_long_digit_runs_slashed_and_suffixed_numbers(text: str, number: str) -> None:
    assert _found(text, "ID_NUMBER") == [number]


def test_phones_and_tax_years_are_no_id_numbers() -> None:
    assert _found("call 0117 496 0123 or +44 20 7946 0958", "ID_NUMBER") == []
    assert _found("my 2024/25 tax return", "ID_NUMBER") == []


# --- entity resolution ------------------------------------------------------------------------


def test_canonical_forms() -> None:
    assert canonical("PHONE", "+27821234567") == canonical("PHONE", "0821234567")
    assert canonical("PHONE", "+27821234567") != canonical("PHONE", "0829999567")
    assert canonical("URL", "https://www.x.co.za/") == canonical("URL", "x.co.za")
    assert canonical("EMAIL", "jo dot ng at mail dot sg") == "jo.ng@mail.sg"
    assert canonical("LOCATION", "12 kloof st") == canonical("LOCATION", "12 Kloof Street".lower())
    assert canonical("LOCATION", "kloof st") == "kloof st"  # no house number: "st" may be a saint
    assert canonical("ID_NUMBER", "dl ab123456") == canonical("ID_NUMBER", "ab123456")
    assert canonical("PERSON", "kim-ssi") == canonical("PERSON", "kim") == "kim"


def _redact(
    entities: list[tuple[str, str, str]], text: str, nicknames: tuple[tuple[str, str], ...] = ()
) -> str:
    r = ParticipantRedactor()
    r.learn([Entity(0, len(surface), kind, surface, source) for kind, surface, source in entities])
    r.learn(find_patterns(text))  # every mention is learnt before the first redaction
    r.nicknames.update(nicknames)
    return r.redact(text, find_patterns(text))[0]


def test_one_placeholder_for_a_phone_in_national_and_international_form() -> None:
    text = "ring +27 82 123 4567 or 082 123 4567; not 082 999 4567"
    assert _redact([], text) == "ring [PHONE_1] or [PHONE_1]; not [PHONE_2]"


def test_names_in_either_order_and_short_forms_join_one_person() -> None:
    people = [
        ("PERSON", "Park Ji-hoon", "ner"),
        ("PERSON", "Ji-hoon Park", "ner"),
        ("PERSON", "Rosalind", "ner"),
    ]
    text = "Park Ji-hoon and Ji-hoon Park; Ros and Rosalind."
    assert (
        _redact([*people, ("PERSON", "Ros", "ner")], text)
        == "[PERSON_1] and [PERSON_1]; [PERSON_2] and [PERSON_2]."
    )


def test_a_short_form_that_begins_two_first_names_stays_apart() -> None:
    people = [("PERSON", "Daniela", "ner"), ("PERSON", "Danilo", "ner"), ("PERSON", "Dani", "ner")]
    out = _redact(people, "Dani, Daniela, Danilo")
    assert len(set(out.replace(",", "").split())) == 3


def test_nicknames_tied_by_the_text() -> None:
    assert find_nicknames("my brother Santiago 'Santi' Ruiz lives there") == [("Santi", "Santiago Ruiz")]
    assert find_nicknames("Lola calls Maria 'Tita Mia'") == [("Tita Mia", "Maria")]
    assert find_nicknames("my son Mateo (teo) is 4") == [("teo", "Mateo")]
    assert find_nicknames("she lives in Cebu (Lahug)") == []
    assert find_nicknames("we loved the 'Best' Burger place") == []


def test_a_nickname_joins_its_name_only_when_the_text_ties_them() -> None:
    people = [("PERSON", "Alejandro Ruiz", "ner"), ("PERSON", "Jano", "ner")]
    text = "Alejandro Ruiz, or Jano, is late."
    tied = _redact(people, text, (("jano", "alejandro ruiz"),))
    assert tied == "[PERSON_1], or [PERSON_1], is late."
    assert _redact(people, text) == "[PERSON_1], or [PERSON_2], is late."


def test_deidentify_ties_a_quoted_nickname_to_the_full_name() -> None:
    ner = FixedNer({"Alejandro": "PERSON", "Ruiz": "PERSON", "Jano": "PERSON"})
    record = _record(
        query="gift for jano?",
        retrieved_memories=["user's friend Alejandro 'Jano' Ruiz likes chess."],
        response_with_memory="Jano likes chess: a travel set.",
        response_without_memory="A book.",
    )
    (result,) = deidentify_records([record], ner)
    assert result.fields["response_with_memory"] == "[PERSON_1] likes chess: a travel set."
    assert result.fields["retrieved_memories"] == [
        "user's friend [PERSON_1] '[PERSON_1]' [PERSON_1] likes chess."
    ]


def test_a_place_ner_also_calls_a_person_is_one_place() -> None:
    r = ParticipantRedactor()
    r.learn([Entity(0, 8, "PERSON", "Jordaan", "ner"), Entity(0, 8, "LOCATION", "Jordaan", "ner")])
    r.placed.add("jordaan")
    out, _ = r.redact("Jordaan is lovely; we stay near Jordaan.", [])
    assert out == "[LOCATION_1] is lovely; we stay near [LOCATION_1]."


# --- cues -------------------------------------------------------------------------------------


def test_sign_offs_and_self_introductions_name_the_writer() -> None:
    assert [e.text for e in find_signed_people("See you then.\n\nCheers,\nJoris")] == ["Joris"]
    assert [e.text for e in find_signed_people("Hi! I'm Siew Ling, a baker")] == ["Siew Ling"]
    assert find_signed_people("Kind regards,\n[Your name]") == []
    assert find_signed_people("I'm sorry, I am late") == []


def test_lowercase_people_before_and_i_and_everyday_word_names_where_the_verb_cannot_stand() -> None:
    assert [e.text for e in find_lowercase_people("tomas and i are going")] == ["tomas"]
    assert [e.text for e in find_lowercase_people("will's 40th is soon")] == ["will"]
    assert find_lowercase_people("you and i are going") == []


def test_an_everyday_word_name_is_kept_as_a_word_before_a_verb() -> None:
    r = ParticipantRedactor()
    r.learn([Entity(0, 4, "PERSON", "Will", "ner")])
    out, _ = r.redact("will works nights. i will call. Will is 30.", [])
    assert out == "[PERSON_1] works nights. i will call. [PERSON_1] is 30."


# --- address parts, institutions, over-redaction guards ---------------------------------------


@pytest.mark.parametrize(
    ("text", "surface"),
    [
        ("my aunt lives in Cebu (Lahug) now", "Lahug"),
        ("we stay in the Kalamaja district", "Kalamaja"),
        ("office in Mapo-gu, Seoul", "Mapo-gu"),
        ("send it to: Unit 7, Bree Street", "Unit 7"),
        ("home is Kelburn, Wellington 6012 since May", "6012"),
        ("she lives in the 5e near the river", "5e"),
    ],
)
def test_address_parts_no_gazetteer_knows(text: str, surface: str) -> None:
    assert surface in _found(text, "LOCATION")


@pytest.mark.parametrize(
    "text",
    [
        "Unit 4 covers fractions",
        "in Leeds, March 2021 was cold",
        "a flat 3 minutes away",
        "the Lake District",
    ],
)
def test_no_address_part_in_course_units_dates_or_distances(text: str) -> None:
    from dataset_builder.entity_cues import find_address_parts

    assert find_address_parts(text) == []


def test_named_nurseries_and_article_less_hospitals_are_organisations() -> None:
    assert _found("Mia attends Little Oaks Kindergarten", "ORGANIZATION") == ["Little Oaks Kindergarten"]
    assert _found("mum had surgery at eastside hospital", "ORGANIZATION") == ["eastside hospital"]
    assert _found("emre's kita is closed", "ORGANIZATION") == []
    assert _found("she was in the hospital for a week", "ORGANIZATION") == []


def test_lowercase_via_is_a_street_only_before_a_house_number() -> None:
    assert _found("we live at via garibaldi 12 now", "LOCATION") == ["via garibaldi 12"]
    assert _found("pay via PayPal or via Istanbul", "LOCATION") == []
    assert _found("flat on Via Roma, 4", "LOCATION") == ["Via Roma, 4"]


def test_honorifics_and_model_years_in_ner_spans() -> None:
    ner = FixedNer({"Nonna Rosa": "PERSON", "nonna": "PERSON", "Corolla": "LOCATION"})
    record = _record(
        query="ideas for nonna's birthday?",
        retrieved_memories=["user's grandmother Nonna Rosa drives a 2015 Corolla."],
        response_with_memory="Take Nonna Rosa for a drive in the Corolla.",
        response_without_memory="A drive.",
    )
    (result,) = deidentify_records([record], ner)
    assert result.fields["response_with_memory"] == "Take Nonna [PERSON_1] for a drive in the Corolla."
    assert result.fields["query"] == "ideas for nonna's birthday?"


def test_inflected_names_and_lone_postcodes_resolve_to_their_entity() -> None:
    r = ParticipantRedactor()
    r.learn([Entity(0, 6, "LOCATION", "Kraków", "ner"), Entity(0, 11, "LOCATION", "29200 Brest", "pattern")])
    out, _ = r.redact("Kraków, w Krakowie, ship to 29200 or 29201.", [])
    assert out == "[LOCATION_1], w [LOCATION_1], ship to [LOCATION_2] or 29201."


def test_function_words_are_no_name_parts() -> None:
    r = ParticipantRedactor()
    r.learn([Entity(0, 12, "PERSON", "My Aunty Ngo", "ner")])
    out, _ = r.redact("I love my family.", [])
    assert out == "I love my family."


def test_a_url_only_a_response_names_is_public() -> None:
    record = _record(
        query="how do i renew my id card?",
        retrieved_memories=["user's blog is kimtravels.blog/about"],
        response_with_memory="Renew on gov.ph and mention kimtravels.blog/about.",
        response_without_memory="Renew on gov.ph.",
    )
    (result,) = deidentify_records([record], None)
    assert result.fields["response_with_memory"] == "Renew on gov.ph and mention [URL_1]."


def test_a_person_label_on_a_word_that_takes_an_article_is_a_common_noun() -> None:
    ner = FixedNer({"Jobcentre": "PERSON", "Anneke": "PERSON"})
    record = _record(
        query="Jobcentre wants my forms, and Anneke says hi",
        retrieved_memories=["user's friend Anneke helps with forms."],
        response_with_memory="Ask Anneke; the Jobcentre can also help.",
        response_without_memory="Call them.",
    )
    (result,) = deidentify_records([record], ner)
    assert result.fields["query"] == "Jobcentre wants my forms, and [PERSON_1] says hi"
    assert result.fields["response_with_memory"] == "Ask [PERSON_1]; the Jobcentre can also help."


def test_a_postcode_and_its_town_are_two_places_but_a_dutch_postcode_is_one() -> None:
    assert _found("lives at 3 rue Haute, 67000 Strasbourg", "LOCATION")[-2:] == ["67000", "Strasbourg"]
    assert _found("Keizersgracht 1, 1015 CJ Amsterdam", "LOCATION") == ["Keizersgracht 1", "1015 CJ"]


def test_ner_spans_split_at_brackets_and_arrows() -> None:
    from dataset_builder.detectors import _split_place

    pieces = [e.text for e in _split_place(Entity(0, 16, "LOCATION", "Cebu (Lahug) MNL→ICN", "ner"))]
    assert pieces[:2] == ["Cebu", "Lahug"]
    assert [e.text for e in _split_place(Entity(0, 7, "LOCATION", "MNL→ICN", "ner"))] == ["MNL", "ICN"]
    assert [e.text for e in _split_place(Entity(0, 9, "LOCATION", "Cape Town", "ner"))] == ["Cape Town"]


def test_a_typed_organisation_starts_after_a_possessive_and_a_school_noun() -> None:
    assert _found("my son's school oakridge academy called", "ORGANIZATION") == ["oakridge academy"]


def test_a_name_with_an_honorific_suffix_joins_the_full_name() -> None:
    people = [("PERSON", "Kim Jisoo", "ner"), ("PERSON", "Kim-ssi", "ner"), ("PERSON", "Lee-ssi", "ner")]
    assert _redact(people, "Kim Jisoo, Kim-ssi, Lee-ssi") == "[PERSON_1], [PERSON_1], [PERSON_2]"


def test_names_listed_with_ages_after_a_plural_relation_word() -> None:
    from dataset_builder.entity_cues import find_listed_people

    assert [e.text for e in find_listed_people("my kids are Lerato (7) and Thabo (4)")] == ["Lerato", "Thabo"]
    assert find_listed_people("kids love Lego 2 days a week") == []


@pytest.mark.parametrize(
    ("text", "number"),
    [
        ("NRIC S7654321J on file", "S7654321J"),
        ("my DNI is 87654321X", "87654321X"),
        ("CURP PEMJ900215MDFRRS03 for the form", "PEMJ900215MDFRRS03"),
        ("codice fiscale VRDLGU80A01H501U", "VRDLGU80A01H501U"),
    ],
)
def test_national_ids_of_letters_and_digits(text: str, number: str) -> None:
    assert number in _found(text, "ID_NUMBER")


def test_model_numbers_and_flights_are_no_ids() -> None:
    assert _found("sony WH1000XM5 or an RTX4090, flight LH2045", "ID_NUMBER") == []


def test_an_eight_digit_number_after_a_phone_word_is_a_phone() -> None:
    assert _found("my hp is 9876 5432 ok", "PHONE") == ["9876 5432"]
    assert _found("order 9876 5432 shipped", "PHONE") == []


def test_hangul_and_kanji_names_after_a_relation_word_po_boxes_and_swedish_postcodes() -> None:
    assert _found("my friend 박서준 is visiting", "PERSON") == ["박서준"]
    assert _found("send to P.O. Box 4321-00200 please", "LOCATION") == ["P.O. Box 4321-00200"]
    assert "413 04" in _found("Vasagatan 3, 413 04 Göteborg", "LOCATION")
    assert _found("the box is 40 cm wide", "LOCATION") == []
