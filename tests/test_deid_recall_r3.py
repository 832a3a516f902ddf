"""Recall, round 3: names after titles and forms of address, everyday-word names after "is",
street addresses in lowercase or foreign order, towns and postcodes after an address, day.month
dates after a date word, small businesses and places in lowercase.

Every sentence and every name here is invented for the test.
"""

from __future__ import annotations

import pytest

from dataset_builder.detectors import Entity, find_patterns, find_relation_names
from dataset_builder.entity_cues import (
    extend_place_parts,
    find_address_lines,
    find_called_organisations,
    find_greeted_people,
    find_nicknames,
    find_practices,
    find_titled_people,
)


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
        "my uncle bought a car",  # a relation word and a verb
        "auntie cooked jollof",  # a past tense
        "nonna baked bread for us",
        "nonna made pasta",  # a kinship title takes one word, then what ends a name
        "dr fixed my knee",
        "yes sir thanks a lot",
    ],
)
def test_no_name_after_a_title(text: str) -> None:
    assert find_titled_people(text) == []


def test_no_title_inside_a_web_address() -> None:
    assert find_titled_people("log in to your portal.dr account and check") == []


def test_a_postcode_in_capitals_ends_an_address_piece() -> None:
    text = "user lives at 9 wren close, dunmore  DN4 7QT with her sister."
    assert [e.text for e in find_address_lines(text)] == ["9 wren close", "dunmore"]


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


# --- day.month dates after a date word -------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "date"),
    [
        ("user has a dentist visit booked for 7.09", "7.09"),
        ("grandpa turns 90 on 21.11, a sunday", "21.11"),
        ("the viewing was moved to 2.03", "2.03"),
        ("rent is due 1.10 every year", "1.10"),
    ],
)
def test_day_month_with_a_dot_after_a_date_word_is_a_date(text: str, date: str) -> None:
    assert ("DATE", date) in _texts(find_patterns(text))


@pytest.mark.parametrize(
    "text",
    [
        "the tea costs 3.04 at the kiosk",
        "i paid for 3.04 litres",
        "my script runs on 3.12 now",
        "we got the kernel update on 6.12 yesterday",
        "the ratio was 2.45 on average",
        "tickets from 3.10 £ each",
        "a flat white from 2.10 eur at the kiosk",
    ],
)
def test_no_day_month_date_in_a_price_a_version_or_a_measure(text: str) -> None:
    assert not [e for e in find_patterns(text) if e.kind == "DATE"]


# --- street addresses with the street type first, and addresses given as such ------------------------


@pytest.mark.parametrize(
    ("text", "street"),
    [
        ("she lives at ul. wierzbowa 17, nowe pole", "ul. wierzbowa 17"),
        ("the office is on al. Lipowa 4/2 now", "al. Lipowa 4/2"),
        ("meet me at c/ olmeda 9 tonight", "c/ olmeda 9"),
        ("flat on strada Merilor 23", "strada Merilor 23"),
    ],
)
def test_a_street_type_written_first_and_a_house_number_is_a_street(text: str, street: str) -> None:
    assert ("LOCATION", street) in _texts(find_patterns(text))


@pytest.mark.parametrize(
    "text", ["see Velmorin et al. Kessler 2019 for this", "pl. 3 items left", "the str. 5 rule"]
)
def test_no_street_without_a_name_and_a_number(text: str) -> None:
    assert not [e for e in find_patterns(text) if e.kind == "LOCATION"]


def test_a_known_street_without_its_type_is_that_street() -> None:
    text = "there is a park near Wierzbowa 17 in town"
    found = extend_place_parts(text, [], {"ul. wierzbowa 17"})
    assert _texts(found) == [("LOCATION", "Wierzbowa 17")]
    assert extend_place_parts(text, [], {"wierzbowa"}) == []  # no street type: nothing to drop


@pytest.mark.parametrize(
    ("text", "parts"),
    [
        (
            "user's address is 9 mill lane, dromkeen, V42 K7P1",
            ["9 mill lane", "dromkeen"],
        ),  # the Eircode: the patterns'
        ("user lives at os. jasne 4, zielonka-las", ["os. jasne 4", "zielonka-las"]),
        ("user rents a room at hauptgasse 12, 4711 kleinort", ["hauptgasse 12", "4711", "kleinort"]),
        ("a bakery at 31 phố hàng vải, đống thủy", ["31 phố hàng vải", "đống thủy"]),
    ],
)
def test_the_pieces_of_an_address_given_as_one_are_places(text: str, parts: list[str]) -> None:
    assert [e.text for e in find_address_lines(text)] == parts


@pytest.mark.parametrize(
    "text",
    [
        "she lives at home with her mum, in town",
        "we stay at 5 star hotels when we travel, always",
        "my email address is on the card",
        "user lives at 14 Elm Rd, Oakfield",  # capitalised: the NER model's and the patterns'
        "the cafe at the corner, near the bank",
        "his address is 4-chōme 2-1, minami",  # a block address keeps "chōme" (a word readers need)
        "Either works; the newer address is safer.",  # one word and no number
        "the shop opens at 9 am, then closes",  # a time
        "her studio is at 20% off, for now",  # an amount
    ],
)
def test_no_address_pieces(text: str) -> None:
    assert find_address_lines(text) == []


def test_a_flat_number_keeps_its_unit_word() -> None:
    text = "user lives at apartment C7, koru lane, westvale."
    span = Entity(text.index("C7"), text.index(", westvale"), "LOCATION", "C7, koru lane", "home")
    assert _texts(extend_place_parts(text, [span])) == [("LOCATION", "apartment C7, koru lane")]


@pytest.mark.parametrize("text", ["room in my flat 2/1, 9 Ash St", "near my flat, 9 ash st"])
def test_no_unit_word_before_what_is_no_flat_number(text: str) -> None:
    start = next(i for i, c in enumerate(text) if c.isdigit())
    span = Entity(start, len(text), "LOCATION", text[start:], "home")
    assert extend_place_parts(text, [span]) == [span]


# --- a nickname after "name is", a closing in another language -------------------------------------


def test_a_nickname_in_brackets_after_a_persons_name_is() -> None:
    assert find_nicknames("user's name is dorotea vall ibarz (dori)") == [("dori", "dorotea vall ibarz")]
    assert find_nicknames("my full name is Kasimir Tembeko (Kas)") == [("Kas", "Kasimir Tembeko")]


@pytest.mark.parametrize("text", ["the app name is Plonk (beta)", "the dog's name is rex (short)"])
def test_no_nickname_after_a_things_name_is(text: str) -> None:
    assert find_nicknames(text) == []


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ('Can you fix it this week? Danke, Jonas Trebel"\n\nSend it by SMS.', "Jonas Trebel"),
        ("See you at eight. Pozdrawiam, Ola", "Ola"),
        ("Merci, Anouk", "Anouk"),
    ],
)
def test_the_name_after_a_closing_in_another_language(text: str, name: str) -> None:
    assert [e.text for e in find_greeted_people(text)] == [name]


def test_no_name_after_a_closing_inside_a_sentence() -> None:
    assert find_greeted_people("I said danke, Mama and Papa were there too, and left") == []


# --- a conjunction inside a business's name -----------------------------------------------------


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("she takes classes at a studio called kamyk i trawa in town", "kamyk i trawa"),
        ("a shop called Pan y Brasa opened", "Pan y Brasa"),
        ("a restaurant called Sal e Pepe is new", "Sal e Pepe"),
    ],
)
def test_a_conjunction_between_two_words_of_a_called_name(text: str, name: str) -> None:
    assert [e.text for e in find_called_organisations(text)] == [name]


def test_no_conjunction_before_an_everyday_word() -> None:
    assert [e.text for e in find_called_organisations("a band called zorvik and we loved it")] == ["zorvik"]


# --- the practice after "<someone's doctor> is at" --------------------------------------------------


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("user's gp is at ośrodek zdrowia pod lipami", "ośrodek zdrowia pod lipami"),
        ("my dentist is at Kellerby Dental, in the old mill", "Kellerby Dental"),
        ("her vet is at tarrow paws in brenzow", "tarrow paws"),
    ],
)
def test_the_practice_after_someones_doctor_is_at(text: str, name: str) -> None:
    assert [e.text for e in find_practices(text)] == [name]


@pytest.mark.parametrize(
    "text", ["the vet is at lunch now", "user's doctor is at the health centre", "my gp is at home today"]
)
def test_no_practice_without_an_own_doctor_or_after_an_article(text: str) -> None:
    assert find_practices(text) == []
