"""Over-redaction, round 4: named routes, emoji that end a sentence, sites the memory-free
response names by itself.

Every sentence and every name here is invented for the test.
"""

from __future__ import annotations

import pytest

from dataset_builder.deidentify import deidentify_records, host_written, url_host
from dataset_builder.detectors import emoji_as_stops, route_names
from tests.helpers_deid import FixedNer
from tests.helpers_records import raw_preference_record

# --- named routes ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "route"),
    [
        ("we want to walk the Corran Ridge Way in june", "Corran Ridge Way"),
        ("The Tollmere Coast Way is best by bike!", "Tollmere Coast Way"),
        ("halfway along the Brisket Hill Trail we stopped", "Brisket Hill Trail"),
        ("on the Ostvald Path's last stage", "Ostvald Path"),
    ],
)
def test_a_named_way_after_the_is_a_route(text: str, route: str) -> None:
    assert route_names(text) == [route]


@pytest.mark.parametrize(
    "text",
    [
        "she lives at 14 Corran Way",  # a street: a house number, no article
        "she lives on Corran Way",
        "flat 3, the Corran Way",  # a number just before: an address line
        "he runs with the Brisket Hill Trail Runners",  # the head of a longer name
        "the same way as before",  # no name
    ],
)
def test_a_street_or_a_longer_name_is_no_route(text: str) -> None:
    assert route_names(text) == []


def _record(**fields: object):
    return raw_preference_record(record_id="r1", participant_id="p1", **fields)


def test_a_route_is_kept_in_every_field_a_numbered_street_is_redacted() -> None:
    record = _record(
        query="we plan to do the Corran Ridge Way in june, what do we pack",
        retrieved_memories=["user lives at 14 Fennick Way."],
        response_with_memory="For the Corran Ridge Way, pack a jacket. Corran Ridge Way huts fill early.",
        response_without_memory="On the Corran Ridge Way, bring layers.",
    )
    (result,) = deidentify_records([record], FixedNer({"Corran Ridge Way": "LOCATION"}))
    fields = result.published_fields()
    assert "Corran Ridge Way huts" in fields["response_with_memory"]
    assert "the Corran Ridge Way in june" in fields["query"]
    assert "Fennick" not in fields["retrieved_memories[0]"]


def test_a_named_way_without_the_is_still_a_street() -> None:
    record = _record(
        query="is rent near Corran Ridge Way ok?",
        retrieved_memories=["user lives on Corran Ridge Way."],
        response_with_memory="Rents near Corran Ridge Way are fair.",
        response_without_memory="It depends on the area.",
    )
    (result,) = deidentify_records([record], None)
    assert "Corran" not in "\n".join(result.published_fields().values())


# --- emoji that end a sentence -----------------------------------------------------------------


def test_an_emoji_between_words_reads_as_a_full_stop_of_the_same_length() -> None:
    text = "done \u2705 Sprint prep is on \U0001f3c3\U0001f3fe\u200d\u2640\ufe0f #tag"
    copy = emoji_as_stops(text)
    assert len(copy) == len(text)
    assert copy.startswith("done . Sprint prep is on .")
    assert copy.endswith(" #tag")


@pytest.mark.parametrize("text", ["\U0001f389 Party time", "great run \u2705", "no emoji here."])
def test_an_emoji_at_an_edge_or_no_emoji_changes_nothing(text: str) -> None:
    assert emoji_as_stops(text) == text


def test_the_spacy_recognizer_reads_an_emoji_as_a_sentence_end() -> None:
    spacy = pytest.importorskip("spacy")
    from dataset_builder.detectors import SpacyRecognizer

    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    ruler = nlp.add_pipe("entity_ruler")
    # a "model" that calls a capitalised word a person only where no full stop stands before it
    ruler.add_patterns([{"label": "PERSON", "pattern": [{"TEXT": {"NOT_IN": ["."]}}, {"TEXT": "Sprint"}]}])
    recognizer = SpacyRecognizer("blank-ruler")
    recognizer._nlp = nlp
    (found,) = recognizer(["done \u2705 Sprint prep is on"])
    assert [e.text for e in found if e.kind == "PERSON"] == []
    (found,) = recognizer(["done with Sprint prep"])
    assert [e.text for e in found if e.kind == "PERSON"] == ["with Sprint"]


# --- sites the memory-free response names by itself ----------------------------------------------


def test_url_host() -> None:
    assert url_host("https://www.Shop.Example.com/menu") == "shop.example.com"
    assert url_host("Rentfinder.com") == "rentfinder.com"


def test_host_written_needs_the_whole_host() -> None:
    assert host_written("rentfinder.com", "see www.rentfinder.com/listings for me")
    assert not host_written("rentfinder.com", "my rentfinder login broke")
    assert not host_written("finder.com", "see rentfinder.com")


def test_a_site_the_memory_free_response_introduces_is_kept() -> None:
    record = _record(
        query="need to sign up with kelvora health, what do they want",
        retrieved_memories=["user's shop site is kelvorabakes.com."],
        response_with_memory="Kelvora needs your ID; your kelvorabakes.com page is unrelated.",
        response_without_memory="On kelvora.org you can register online.",
    )
    (result,) = deidentify_records([record], None)
    fields = result.published_fields()
    assert "kelvora.org" in fields["response_without_memory"]
    assert "kelvorabakes.com" not in fields["response_with_memory"]


def test_a_site_the_participant_wrote_is_redacted_in_the_memory_free_response() -> None:
    record = _record(
        query="is my page dunmorecakes.com/menu ok",
        retrieved_memories=["user bakes cakes."],
        response_with_memory="dunmorecakes.com/menu looks fine.",
        response_without_memory="Your dunmorecakes.com page should list prices.",
    )
    (result,) = deidentify_records([record], None)
    assert "dunmorecakes" not in "\n".join(result.published_fields().values())


def test_a_host_named_organisation_of_the_memory_free_response_is_kept() -> None:
    record = _record(
        query="flats near the river under 900?",
        retrieved_memories=["user has a cat."],
        response_with_memory="Look near the river.",
        response_without_memory="Set alerts on Rentfinder.com for flats.",
    )
    (result,) = deidentify_records([record], FixedNer({"Rentfinder.com": "ORGANIZATION"}))
    assert "Rentfinder.com" in result.published_fields()["response_without_memory"]


def test_an_email_domain_writes_its_host() -> None:
    assert host_written("kelvorabakes.com", "mail me at ana@kelvorabakes.com")
    assert not host_written("kelvorabakes.com", "mail me at ana@kelvorabakes.com.au")


def test_a_route_after_a_sentence_that_ends_in_a_number() -> None:
    assert route_names("call 555 0192. The Tollmere Coast Way is lovely") == ["Tollmere Coast Way"]


# --- a town's name in lowercase in a capitalised response ------------------------------------------


def test_a_lowercase_town_name_in_a_capitalised_response_is_the_everyday_word() -> None:
    from dataset_builder.detectors import find_places

    text = "Golden days are busy, so book lunch in advance."
    assert [e.text for e in find_places(text)] == ["advance"]  # the gazetteer alone calls it a town
    record = _record(
        query="where should we eat on the holiday?",
        retrieved_memories=["user likes noodles."],
        response_with_memory=text,
        response_without_memory="Book a table in advance.",
    )
    (result,) = deidentify_records([record], None)
    fields = result.published_fields()
    assert "in advance" in fields["response_with_memory"]
    assert "in advance" in fields["response_without_memory"]


def test_a_lowercase_town_name_in_the_participants_own_words_is_still_a_place() -> None:
    record = _record(
        query="we moved to reading last year, any good schools?",
        retrieved_memories=["user has two kids."],
        response_with_memory="Schools near you are good.",
        response_without_memory="Look at the school reports.",
    )
    (result,) = deidentify_records([record], None)
    assert "reading" not in result.published_fields()["query"]


# --- a town's name inside a longer name ----------------------------------------------------------


def test_a_town_word_inside_a_longer_name_of_a_response_is_no_town() -> None:
    record = _record(
        query="pls write a text to my cousin that i pick him up at the airport",
        retrieved_memories=["user's cousin flies in on friday"],
        response_with_memory="Text: I'll pick you up from Kelso Brannock Airport on Friday!",
        response_without_memory="Try: I'll pick you up from Kelso Brannock Airport, see you soon.",
    )
    (result,) = deidentify_records([record], FixedNer({"Kelso Brannock Airport": "LOCATION"}))
    fields = result.published_fields()
    assert "from Kelso Brannock Airport" in fields["response_with_memory"]
    assert "from Kelso Brannock Airport" in fields["response_without_memory"]


def test_a_town_in_the_participants_words_is_still_redacted() -> None:
    record = _record(
        query="we moved to kelso last spring, any clubs for kids?",
        retrieved_memories=["user has two kids."],
        response_with_memory="Clubs in Kelso are friendly.",
        response_without_memory="Look at the local council site.",
    )
    (result,) = deidentify_records([record], FixedNer({"Kelso": "LOCATION"}))
    assert "kelso" not in "\n".join(result.published_fields().values()).lower()


# --- two names NER ran together across "on" or "in" ---------------------------------------------


def _ruled(label: str, phrase: str):
    spacy = pytest.importorskip("spacy")
    from dataset_builder.detectors import SpacyRecognizer

    nlp = spacy.blank("en")
    nlp.add_pipe("entity_ruler").add_patterns([{"label": label, "pattern": phrase}])
    recognizer = SpacyRecognizer("blank-ruler")
    recognizer._nlp = nlp
    return recognizer


@pytest.mark.parametrize(
    ("phrase", "pieces"),
    [
        ("Tavi Noodle Bar on Quickbite", ["Tavi Noodle Bar", "Quickbite"]),
        ("Moro Bakery in Dellhaven", ["Moro Bakery", "Dellhaven"]),
        ("Bank of Dellhaven", ["Bank of Dellhaven"]),  # "of" stays inside a name
        ("Dellhaven upon Avonmere", ["Dellhaven upon Avonmere"]),  # "upon" is no cut
    ],
)
def test_a_span_splits_at_on_or_in_before_a_capital(phrase: str, pieces: list[str]) -> None:
    recognizer = _ruled("ORG", phrase)
    (found,) = recognizer([f"We listed {phrase} last week."])
    assert [e.text for e in found] == pieces


# --- a sight near a trip's destination --------------------------------------------------------


def _trip_record(memory: str) -> object:
    return _record(
        query="can u translate for a hostel in velmora: 'hola, llegamos el viernes'",
        retrieved_memories=[memory],
        response_with_memory=(
            'Sure: "Hello, we arrive on Friday." If you want to see Tarqa Wenu in October, mention it, '
            "since some hostels in Velmora sell packages."
        ),
        response_without_memory='"Hello, we arrive on Friday." Ask about breakfast in Velmora.',
    )


_TRIP_NER = {"Tarqa Wenu": "LOCATION", "Velmora": "LOCATION", "velmora": "LOCATION"}


def test_a_sight_the_response_names_near_a_trips_destination_is_kept() -> None:
    record = _trip_record("user is travelling to velmora in october with her sister")
    (result,) = deidentify_records([record], FixedNer(_TRIP_NER))
    assert "see Tarqa Wenu in October" in result.published_fields()["response_with_memory"]


def test_a_sight_the_response_names_near_the_participants_home_is_redacted() -> None:
    record = _trip_record("user lives in velmora with her sister")
    (result,) = deidentify_records([record], FixedNer(_TRIP_NER))
    assert "Tarqa" not in result.published_fields()["response_with_memory"]


# --- a street the memory-free response names by itself --------------------------------------------


def test_a_street_the_memory_free_response_names_is_kept_in_both_responses() -> None:
    record = _record(
        query="what should my parents do on their weekend in town?",
        retrieved_memories=["user's parents like jazz."],
        response_with_memory="Your parents love jazz, so try an evening on Calder Street.",
        response_without_memory="Dinner out, then live music on Calder Street.",
    )
    (result,) = deidentify_records([record], None)
    fields = result.published_fields()
    assert "on Calder Street" in fields["response_with_memory"]
    assert "on Calder Street" in fields["response_without_memory"]


def test_a_street_the_participant_wrote_is_redacted_in_both_responses() -> None:
    record = _record(
        query="any cafes near calder street? we just moved there",
        retrieved_memories=["user lives on Calder Street."],
        response_with_memory="Near Calder Street try the corner bakery.",
        response_without_memory="Around Calder Street look for bakeries.",
    )
    (result,) = deidentify_records([record], None)
    assert "calder" not in "\n".join(result.published_fields().values()).lower()
