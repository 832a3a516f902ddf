"""Recall, round 2: short forms, names with a suffix, places after "in", quoted group names, streets
without a house number or with one after, a town's compass side, and the recognizer's vocabulary.

Every sentence and every name here is invented for the test.
"""

from __future__ import annotations

import pytest

from dataset_builder.deidentify import deidentify_records
from dataset_builder.detectors import Entity, SpacyRecognizer, find_patterns
from dataset_builder.entity_cues import extend_place_parts, find_address_parts, find_called_organisations
from dataset_builder.lexical import extend_known_names, find_cued_places, find_short_names, rare_word_test
from dataset_builder.resolver import _plausible_name
from tests.helpers_deid import FixedNer, RareVocab, VocabNer, rare
from tests.helpers_records import raw_preference_record


def _texts(found: list[Entity]) -> list[tuple[str, str]]:
    return [(e.kind, e.text) for e in found]


# --- the recognizer's vocabulary -----------------------------------------------------------------


def test_spacy_recognizer_vocab_is_none_until_loaded_then_the_pipelines() -> None:
    spacy = pytest.importorskip("spacy")
    recognizer = SpacyRecognizer("not-loaded")
    assert recognizer.vocab is None
    nlp = spacy.blank("en")
    recognizer._nlp = nlp  # what load() sets
    assert recognizer.vocab is nlp.vocab


def test_spacy_recognizer_vocab_is_read_only() -> None:
    with pytest.raises(AttributeError):
        SpacyRecognizer("not-loaded").vocab = object()  # type: ignore[misc]


class _PrivateOnly(FixedNer):
    """A recognizer with a pipeline only behind a private attribute: not read."""

    def __init__(self) -> None:
        super().__init__({})

        class _Nlp:
            vocab = RareVocab()

        self._nlp = _Nlp()


def test_rare_word_test_does_not_read_a_private_pipeline() -> None:
    # (reading the public ``vocab`` is tested in test_deid_lowercase.py)
    assert rare_word_test(_PrivateOnly()) is None


# --- a capitalised place after "in" that NER left unlabelled ---------------------------------------


def test_a_rare_capitalised_word_after_in_is_a_place() -> None:
    text = "user climbs at Brenzow Loft in Drevnik twice a week"
    taken = [Entity(15, 26, "LOCATION", "Brenzow Loft", "ner")]
    assert _texts(find_cued_places(text, [], rare, taken=taken)) == [("LOCATION", "Drevnik")]


def test_a_common_capitalised_word_after_in_needs_a_home_before() -> None:
    assert find_cued_places("She is fluent in Spanish and French.", [], rare) == []
    assert find_cued_places("He works in Marketing now.", [], rare) == []  # a field, not a place
    found = find_cued_places("User runs a baking business from home in Vell.", [], rare)
    assert _texts(found) == [("LOCATION", "Vell")]
    assert _texts(find_cued_places("our flat in Kitchen Hill is small", [], None)) == [
        ("LOCATION", "Kitchen Hill")
    ]


def test_a_labelled_public_capitalised_or_stop_word_after_in_is_not_this_rules() -> None:
    text = "we met in Drevnik"
    assert find_cued_places(text, [], rare, taken=[Entity(10, 17, "PUBLIC", "Drevnik", "ner")]) == []
    assert find_cued_places(text, [], rare, public={"drevnik"}) == []
    assert find_cued_places("my home in HR files", [], rare) == []  # an acronym
    assert find_cued_places("i live in The", [], rare, stop=frozenset({"the"})) == []


def test_a_place_after_in_in_the_participants_words_reaches_the_response() -> None:
    record = raw_preference_record(
        query="is it ok to mention the gym?",
        retrieved_memories=["user trains at a gym in Drevnik 3x a week"],
        response_with_memory="Regulars at a Drevnik gym may recognise you.",
        response_without_memory="Naming a gym narrows down who you are.",
    )
    (result,) = deidentify_records([record], VocabNer({}))
    assert "Drevnik" not in str(result.fields)
    record = raw_preference_record(
        query="any tips?",
        retrieved_memories=["user trains hard."],
        response_with_memory="Try a week in Drevnik for a reset.",  # a response alone: no ground
        response_without_memory="Rest more.",
    )
    (result,) = deidentify_records([record], VocabNer({}))
    assert "Drevnik" in str(result.fields["response_with_memory"])


# --- short forms and names with a lowercase suffix --------------------------------------------------


def test_a_short_form_ner_found_is_the_known_person() -> None:
    known = {"anika vos"}
    found = find_short_names("Ani, here is a plan.", [], [Entity(0, 3, "LOCATION", "Ani", "ner")], known)
    assert _texts(found) == [("PERSON", "Ani")]


def test_a_short_form_needs_a_capital_a_known_first_name_and_two_letters_less() -> None:
    known = {"anika vos"}
    assert find_short_names("Anik left.", [], [Entity(0, 4, "PERSON", "Anik", "ner")], known) == []
    assert find_short_names("ani left.", [], [Entity(0, 3, "PERSON", "ani", "ner")], known) == []
    assert find_short_names("Vo left.", [], [Entity(0, 2, "PERSON", "Vo", "ner")], known) == []
    assert find_short_names("Bob left.", [], [Entity(0, 3, "PERSON", "Bob", "ner")], known) == []


def test_a_known_name_with_a_lowercase_suffix_is_that_person() -> None:
    text = "For Zarutho-ji from the coast, take the train."
    ner = Entity(4, 11, "LOCATION", "Zarutho", "ner")
    found = find_short_names(text, [ner], [ner], {"zarutho qorlasi"})
    assert _texts(found) == [("PERSON", "Zarutho")]
    other = "For Zarutho-Ville, take the train."  # a capitalised second part: a name of its own
    ner = Entity(4, 11, "LOCATION", "Zarutho", "ner")
    assert _texts(find_short_names(other, [ner], [ner], {"zarutho qorlasi"})) == [("LOCATION", "Zarutho")]


def test_a_name_before_a_lowercase_hyphen_suffix_is_plausible_a_compound_title_is_not() -> None:
    text = "For Zarutho-ji from the coast"
    assert _plausible_name("Zarutho", text, 4, 11, "PERSON")
    text = "We watched Spider-Verse again"
    assert not _plausible_name("Spider", text, 11, 17, "PERSON")
    text = "we love vimbeku stew cook-offs"  # a lowercase span: a compound word, not a suffix
    assert not _plausible_name("vimbeku stew cook", text, 8, 25, "PERSON")


def test_an_everyday_word_name_before_a_personal_noun_is_the_person() -> None:
    records = [
        raw_preference_record(
            record_id="r1",
            query="what should i get my sister?",
            retrieved_memories=["user's sister holly is an art student.", "holly's portfolio is online"],
            response_with_memory="A sketchbook.",
            response_without_memory="A book.",
        ),
        raw_preference_record(
            record_id="r2",
            query="holly's leaves are turning brown, tips?",
            response_with_memory="Stay in the shade.",
            response_without_memory="Drink water.",
        ),
    ]
    first, second = deidentify_records(records, None)
    assert "holly's portfolio" not in str(first.fields["retrieved_memories"])
    assert second.fields["query"] == "holly's leaves are turning brown, tips?"


# --- group names in quotes, streets, a town's compass side -----------------------------------------


def test_a_quoted_name_after_a_group_noun_is_an_organisation() -> None:
    found = find_called_organisations("user sings alto in the choir 'die brenzow finken'.")
    assert _texts(found) == [("ORGANIZATION", "die brenzow finken")]
    assert _texts(find_called_organisations('our band "The Qorlasi Five" plays friday')) == [
        ("ORGANIZATION", "The Qorlasi Five")
    ]
    assert find_called_organisations("the choir 'the' is a typo") == []  # a stop word alone
    assert find_called_organisations("the choir sang 'ave maria' well") == []  # not right after


def test_a_lowercase_street_between_commas_takes_the_flat_number_before_it() -> None:
    found = find_address_parts("user lives at apartment C7, vimbeku road, okalanga.")
    assert _texts(found) == [("LOCATION", "apartment C7, vimbeku road")]
    assert _texts(find_address_parts("flat 3, okalanga street, drevnik")) == [
        ("LOCATION", "flat 3, okalanga street")
    ]
    assert find_address_parts("we crossed the road, then left") == []
    assert find_address_parts("turn at the vimbeku road junction") == []


def test_a_street_takes_the_house_number_after_it() -> None:
    text = "address Brenzower Str. 31, 04229 Drevnik"
    street = Entity(8, 21, "PERSON", "Brenzower Str", "ner")  # NER calls some streets people
    assert _texts(extend_place_parts(text, [street])) == [("LOCATION", "Brenzower Str. 31")]
    text = "Okalanga 12 times a year"
    town = Entity(0, 8, "LOCATION", "Okalanga", "ner")
    assert _texts(extend_place_parts(text, [town])) == [("LOCATION", "Okalanga")]


def test_a_compass_side_of_a_found_place_is_a_place() -> None:
    text = "user lives in a flat in the west end of drevnik."
    town = Entity(40, 47, "LOCATION", "drevnik", "ner")
    assert _texts(extend_place_parts(text, [town])) == [("LOCATION", "west end"), ("LOCATION", "drevnik")]
    text = "the west end of the table is free"
    assert extend_place_parts(text, []) == []


# --- a day and month without a year after "day", "date" or "deadline" -------------------------------


def test_a_day_and_month_after_a_date_noun_is_a_date() -> None:
    found = [(e.kind, e.text) for e in find_patterns("my notice is in, last day 7/18") if e.kind == "DATE"]
    assert found == [("DATE", "7/18")]
    found = [(e.kind, e.text) for e in find_patterns("deadline: 28/02 for the forms") if e.kind == "DATE"]
    assert found == [("DATE", "28/02")]
    assert not [e for e in find_patterns("day 2/3 of the trek was hard") if e.kind == "DATE"]
    assert not [e for e in find_patterns("one day 3/4 cup of oats") if e.kind == "DATE"]


# --- a known name followed by several rare words -----------------------------------------------------


def test_a_known_name_takes_every_rare_word_after_it_up_to_a_possessive() -> None:
    found = extend_known_names("ask denise okalanga vimbeku today", [], {"denise"}, rare)
    assert [e.text for e in found] == ["denise okalanga vimbeku"]
    found = extend_known_names("denise okalanga's vimbeku stall", [], {"denise"}, rare)
    assert [e.text for e in found] == ["denise okalanga"]
    found = extend_known_names("denise okalanga makes tea", [], {"denise"}, rare)
    assert [e.text for e in found] == ["denise okalanga"]


def test_a_union_reads_the_first_members_vocabulary_with_vectors() -> None:
    from dataset_builder.detectors import UnionRecognizer

    with_vectors = VocabNer({})
    assert UnionRecognizer(FixedNer({}), with_vectors).vocab is with_vectors.vocab
    assert UnionRecognizer(FixedNer({}), FixedNer({})).vocab is None
    rare_test = rare_word_test(UnionRecognizer(FixedNer({}), with_vectors))
    assert rare_test is not None and rare_test("drevnik") and not rare_test("kitchen")
