"""Context-cued recognizers, public mentions and evidence-weighted entity resolution (issue #16)."""

from __future__ import annotations

import json
from collections.abc import Sequence

import pytest

from dataset_builder.deidentify import ParticipantRedactor, deidentify_records
from dataset_builder.detectors import Entity, SpacyRecognizer, find_patterns
from dataset_builder.entity_cues import (
    find_cued_people,
    find_features,
    find_institutions,
    find_job_organisations,
    find_venues,
)
from dataset_builder.pii_eval import PiiEvaluation, PlantedCorpus, PlantedItem, bar_failures, evaluate_planted
from dataset_builder.public import country_names, media_titles, programming_languages, public_mention
from tests.helpers_deid import FixedNer
from tests.helpers_records import raw_preference_record


def _surfaces(entities: Sequence[Entity]) -> list[tuple[str, str]]:
    return [(e.kind, e.text) for e in entities]


@pytest.mark.parametrize(
    ("text", "surface"),
    [
        ("im a backend dev at stripe in austin", "stripe"),
        ("my colleague is leaving accenture on friday", "accenture"),
        ("a finance lead at DBS in Singapore", "DBS"),
        ("she works for deloitte now", "deloitte"),
        ("he joined Monzo last year", "Monzo"),
        ("how do i congratulate her on her promotion at kaiser?", "kaiser"),
        ("her role at google is new", "google"),  # a public name named as an employer
    ],
)
def test_job_cues_find_employers(text: str, surface: str) -> None:
    assert ("ORGANIZATION", surface) in _surfaces(find_job_organisations(text))


@pytest.mark.parametrize(
    "text",
    [
        "i work from home at the moment",
        "my leaving cert results are out",
        "mature applicants can apply with an older Leaving Cert",
        "lead with the chart",
        "what should i cook for josé?",
        "she is leaving early tomorrow",
        "i work at night mostly",
    ],
)
def test_job_cues_leave_everyday_phrases_alone(text: str) -> None:
    assert find_job_organisations(text) == []


@pytest.mark.parametrize(
    ("text", "surface"),
    [
        ("so suggest Siobhán meets you on Capel Street", "Siobhán"),
        ("Wish Lan luck with the move", "Lan"),
        ("Since Ji-woo loves K-dramas, try a drama tour", "Ji-woo"),
        ("Priyanka says the mehndi moved", "Priyanka"),
    ],
)
def test_social_and_reporting_verbs_mark_capitalised_names(text: str, surface: str) -> None:
    assert ("PERSON", surface) in _surfaces(find_cued_people(text))


@pytest.mark.parametrize(
    "text",
    [
        "Tell me what Netflix says about it",  # pronoun, then a public platform
        "Everyone says the gym is busy",
        "Christmas is coming and Summer is coming too",
        "Remind Mum about the dentist",
        "Call HR tomorrow",
    ],
)
def test_person_cues_skip_pronouns_relations_holidays_and_acronyms(text: str) -> None:
    assert find_cued_people(text) == []


def test_venues_features_and_institutions() -> None:
    assert _surfaces(find_venues("user climbs at the Depot with a friend")) == [("ORGANIZATION", "Depot")]
    assert find_venues("see you at the NHS walk-in or at the Monday market") == []
    assert _surfaces(find_features("runs along the grand canal most days")) == [("LOCATION", "grand canal")]
    assert find_features("we walked along the local park and the botanic gardens") == []
    assert _surfaces(find_institutions("does trinity college dublin accept it?")) == [
        ("ORGANIZATION", "trinity college dublin")
    ]
    assert find_institutions("she goes to the local community college") == []


@pytest.mark.parametrize(
    ("text", "kind", "surface"),
    [
        ("email chan [at] chanlaw [dot] com [dot] hk today", "EMAIL", "chan [at] chanlaw [dot] com [dot] hk"),
        ("user lives at 88 E Queen St, Toronto, ON M5C 1S1.", "LOCATION", "M5C 1S1"),
        ("post it to 0/1 22 dumbarton road please", "LOCATION", "0/1 22 dumbarton road"),
        ("user's brother-in-law rohan iyer lives nearby", "PERSON", "rohan iyer"),
        ("my step-mum linda says hi", "PERSON", "linda"),
    ],
)
def test_new_formats_and_relation_words(text: str, kind: str, surface: str) -> None:
    assert (kind, surface) in _surfaces(find_patterns(text))


@pytest.mark.parametrize(
    "text",
    [
        "my sister's wedding is soon",  # a possessive relation is followed by a thing
        "remind me about parent night",  # a relation word without "my …" before a lowercase word
        "a registered nurse doing bank shifts",
        "my dentist appointment moved",
        "about my car, plate LKM492",  # "plate" is a town in the gazetteer, but not after a comma here
        "Since you already write Ruby and Go at Stripe, Rust is a good next step",
        "i was in reading the paper",  # a gerund after a place preposition
    ],
)
def test_relation_and_place_cues_leave_everyday_words_alone(text: str) -> None:
    named = [e for e in find_patterns(text) if e.kind in ("PERSON", "LOCATION")]
    assert named == []


@pytest.mark.parametrize(
    ("text", "surface", "public"),
    [
        ("She plays Stardew Valley on Fridays.", "Stardew Valley", True),
        ("Hades is an action game.", "Hades", True),
        ("Abbott Elementary is a mockumentary like The Office.", "Abbott Elementary", True),
        ("Both are comedies like The Office.", "The Office", True),
        ("On St Patrick's Day the parade passes by.", "St Patrick", True),
        ("You already write Ruby and Go at work.", "Ruby", True),
        ("I drive a 2015 Mazda 3 to work.", "Mazda", True),
        ("Have your PIN ready for NMC Online.", "NMC Online", True),
        ("Priya is a drama teacher.", "Priya", False),  # a media noun that names her job
        ("My daughter Ruby starts school.", "Ruby", False),  # no programming context
        ("Sam's day was rough.", "Sam", False),
        ("I am reading Priya's essay.", "Priya", False),  # a possessive after a media verb
        ("My friend Ford is visiting.", "Ford", False),  # a make without a determiner or model number
        ("She works at Notion now.", "Notion", False),  # a public app named as an employer
    ],
)
def test_public_mentions_in_context(text: str, surface: str, public: bool) -> None:
    start = text.index(surface)
    assert public_mention(surface, text, start, start + len(surface)) is public


def test_lexicons_come_from_installed_packages() -> None:
    countries = country_names()
    assert {"france", "jordan", "new zealand"} <= countries and "singapore" not in countries
    assert {"ruby", "rust", "go", "python"} <= programming_languages()
    assert media_titles("she watches the great british bake off every week") == ["great british bake off"]
    assert media_titles("watching my sister's kids tonight") == []


def _record(rid: str = "r1", pid: str = "p1", **texts: object):  # noqa: ANN202
    return raw_preference_record(record_id=rid, participant_id=pid, **texts)


def test_countries_are_kept_unless_home_or_shared_with_a_name() -> None:
    trip = _record("a", query="tips for a trip to France in May?", retrieved_memories=["user likes art."])
    home = _record("b", pid="p2", query="i live in France, is it cold?", retrieved_memories=["x"])
    name = _record(
        "c",
        pid="p3",
        query="a trip to jordan in march with my friend Jordan Ellis?",
        retrieved_memories=["Jordan might come."],
    )
    ner = FixedNer({"France": "LOCATION", "Jordan Ellis": "PERSON", "Jordan": "PERSON"})
    a, b, c = deidentify_records([trip, home, name], ner)
    assert "France" in a.fields["query"]
    assert "France" not in b.fields["query"]
    assert c.fields["query"] == "a trip to [LOCATION_1] in march with my friend [PERSON_1]?"


def test_a_public_title_elsewhere_keeps_its_parts() -> None:
    record = _record(
        retrieved_memories=["sharma watches the great british bake off every week."],
        response_with_memory="A Bake Off baking kit would land well.",
    )
    (result,) = deidentify_records([record], FixedNer({"Bake Off": "ORGANIZATION"}))
    assert "Bake Off" in result.fields["response_with_memory"]
    assert "great british bake off" in result.fields["retrieved_memories"][0]


def test_cue_evidence_outweighs_a_second_ner_label() -> None:
    records = [
        _record("a", query="bus from headingley to leeds station?", retrieved_memories=["lives in Leeds."]),
        _record("b", query="is Leeds busy?", retrieved_memories=["user's sister Sofía Ibarra visits."]),
        _record("c", query="a message to Sofía", retrieved_memories=["works nights at tesco"]),
        _record("d", query="is the Tesco Extra open late?", retrieved_memories=["x"]),
    ]
    labels = {"Leeds": "PERSON", "Sofía Ibarra": "ORGANIZATION", "Sofía": "LOCATION"}
    ner = FixedNer({**labels, "the Tesco Extra": "LOCATION"})
    results = {r.record.record_id: r for r in deidentify_records(records, ner)}
    assert results["a"].fields["query"] == "bus from headingley to [LOCATION_1] station?"
    assert results["b"].fields["query"] == "is [LOCATION_1] busy?"
    sister = results["b"].fields["retrieved_memories"][0]
    assert sister == "user's sister [PERSON_1] visits."
    assert results["c"].fields["query"] == "a message to [PERSON_1]"
    tesco = results["c"].fields["retrieved_memories"][0]
    assert tesco == "works nights at [ORGANIZATION_1]"
    assert results["d"].fields["query"] == "is [ORGANIZATION_1] open late?"


def test_person_and_place_with_one_name_stay_apart_by_context() -> None:
    record = _record(
        query="my coworker paris hendricks wants tips for her trip to paris in may",
        retrieved_memories=["user's coworker Paris Hendricks has never been to France."],
        response_with_memory="Tell Paris that Paris is lovely in May.",
    )
    ner = FixedNer({"paris": "LOCATION", "Paris Hendricks": "ORGANIZATION", "Paris": "LOCATION"})
    (result,) = deidentify_records([record], ner)
    assert result.fields["query"] == "my coworker [PERSON_1] wants tips for her trip to [LOCATION_1] in may"
    assert result.fields["response_with_memory"] == "Tell [PERSON_1] that [LOCATION_1] is lovely in May."


def test_resolver_labels_by_evidence() -> None:
    r = ParticipantRedactor()
    r.learn([Entity(0, 5, "PERSON", "Leeds", "ner"), Entity(0, 5, "LOCATION", "leeds", "places")])
    r.resolve()
    assert set(r.surfaces["leeds"]) == {("LOCATION", "leeds")}
    both = ParticipantRedactor()
    both.learn(
        [Entity(0, 6, "LOCATION", "jordan", "places"), Entity(0, 12, "PERSON", "Jordan Ellis", "relation")]
    )
    both.resolve()
    assert {kind for kind, _ in both.surfaces["jordan"]} == {"LOCATION", "PERSON"}


def test_lowercase_ner_spans_in_cased_text_are_dropped() -> None:
    ner = SpacyRecognizer()
    try:
        ner.load()
    except RuntimeError:
        pytest.skip("spaCy model not installed")
    (found,) = ner(["For José, try jackfruit al pastor tacos."])
    assert ("ORGANIZATION", "al pastor tacos") not in _surfaces(found)
    (merged,) = ner(["user is a nurse doing bank shifts at the Royal Infirmary of Edinburgh."])
    assert ("ORGANIZATION", "Royal Infirmary of Edinburgh") in _surfaces(merged)  # the article stays outside


def test_the_leak_check_keeps_the_case_of_a_context_located_item() -> None:
    record = _record(
        query="call me if Will wants to join",
        response_with_memory="Will usually hosts; I will remind you.",
        retrieved_memories=["user's roommate Will Harper hosts."],
    )
    items = [
        PlantedItem("PERSON", "Will", "w", "if Will wants"),
        PlantedItem("PERSON", "Will", "w", "Will usually"),
        PlantedItem("PERSON", "Will Harper", "w"),
    ]
    corpus = PlantedCorpus([record], {"r1": [(i.kind, i.text) for i in items]}, {"r1": items}, {"r1": []})
    evaluation = evaluate_planted(corpus, FixedNer({"Will Harper": "PERSON", "Will": "PERSON"}))
    assert evaluation.per_kind["PERSON"]["caught"] == 3 and evaluation.leaks_in_published == 0
    published = json.dumps(deidentify_records([record], FixedNer({"Will Harper": "PERSON"}))[0].fields)
    assert "I will remind" in published


def test_bar_failures_name_every_unmet_part() -> None:
    ok = PiiEvaluation({"EMAIL": {"planted": 2, "caught": 2, "recall": 1.0}}, [], 0, 10, 9, 1, 0, "x")
    assert bar_failures(ok) == []
    bad = PiiEvaluation(
        {"PERSON": {"planted": 20, "caught": 18, "recall": 0.9}},
        [],
        1,
        10,
        7,
        3,
        0,
        "x",
        over_redaction={"must_keep": 100, "lost": 6, "rate": 0.06},
        consistency={"entities": 5, "split": 1, "merged_placeholders": 0},
    )
    assert bar_failures(bad) == [
        "PERSON recall 0.90",
        "1 planted identifiers published",
        "70% published",
        "over-redaction 6.0%",
        "1 split / 0 merged",
    ]


@pytest.mark.parametrize(
    ("text", "kind", "surface"),
    [
        ("user's girlfriend Chiamaka Eze studies at the university of salford.", "PERSON", "Chiamaka Eze"),
        (
            "user's girlfriend Chiamaka Eze studies at the university of salford.",
            "ORGANIZATION",
            "university of salford",
        ),
        ("user's friend Siobhán Ní Bhriain lives in Stoneybatter", "PERSON", "Siobhán Ní Bhriain"),
        ("my friend Ngozi de Souza is visiting", "PERSON", "Ngozi de Souza"),
        ("works at the BBC in salford quays.", "LOCATION", "salford quays"),
        ("a pharmacist at boots in leicester.", "ORGANIZATION", "boots"),
        ("my partner is a chef at nando's.", "ORGANIZATION", "nando's"),
        ("my best mate lives in peckham and works nearby", "LOCATION", "peckham"),
        ("Grace, my neighbour, recommended it", "PERSON", "Grace"),
        ("hotpot in manchester's chinatown", "LOCATION", "manchester"),
    ],
)
def test_name_boundaries_and_more_cues(text: str, kind: str, surface: str) -> None:
    assert (kind, surface) in _surfaces(find_patterns(text))


@pytest.mark.parametrize(
    "text",
    [
        "Ask your manager early.",  # an adverb after a relation word
        "user's nan Grace Adeyemi makes jollof every Sunday.",  # "makes" ends the name
        "she lives in a flat in the city centre",
    ],
)
def test_words_after_names_and_homes_are_kept(text: str) -> None:
    surfaces = {e.text.lower() for e in find_patterns(text)}
    assert not surfaces & {"early", "grace adeyemi makes", "makes", "jollof", "flat"}


def test_titles_split_on_or_and_keep_of() -> None:
    assert media_titles("should i watch the last of us or shogun next") == ["last of us", "shogun"]


def test_events_after_a_time_preposition_need_an_organisation_or_place_label() -> None:
    text = "Try a course before Matariki?"
    start = text.index("Matariki")
    assert public_mention("Matariki", text, start, start + 8, kind="ORGANIZATION")
    note = "Here's a text for Aroha: see you at 5"
    start = note.index("Aroha")
    assert not public_mention("Aroha", note, start, start + 5, kind="PERSON")


def test_ner_names_the_responses_write_in_lowercase_are_common_words() -> None:
    record = _record(
        query="recipe for jollof rice like my nan's",
        retrieved_memories=["user's nan Grace Adeyemi makes jollof every Sunday."],
        response_with_memory="Your nan's jollof likely uses a tomato base; Grace would approve.",
        response_without_memory="Jollof starts with a tomato base.",
    )
    (result,) = deidentify_records([record], FixedNer({"Jollof": "PERSON", "Grace Adeyemi": "PERSON"}))
    assert "jollof" in result.fields["query"] and result.fields["response_without_memory"].startswith(
        "Jollof"
    )
    assert "Grace" not in json.dumps(result.fields) and "Adeyemi" not in json.dumps(result.fields)


def test_everyday_word_names_after_a_social_verb_and_house_numbers() -> None:
    record = _record(
        query="Will it rain? planning a picnic with mark",
        retrieved_memories=["user's flatmate Mark Sullivan lives at 1188 Grand Concourse, Bronx."],
        response_with_memory="Mark could bring a blanket; I will check the forecast and mark it.",
    )
    (result,) = deidentify_records([record], FixedNer({"Grand Concourse": "LOCATION"}))
    assert result.fields["query"] == "Will it rain? planning a picnic with [PERSON_1]"
    assert (
        "mark it" in result.fields["response_with_memory"]
        and "I will" in result.fields["response_with_memory"]
    )
    assert "1188" not in result.fields["retrieved_memories"][0]


@pytest.mark.parametrize(
    ("text", "surface"),
    [
        ("user lives at Karl-Heine-Straße 42, 04229 Leipzig.", "Karl-Heine-Straße 42"),
        # a five-digit postcode and its town are two places (two entities) since 2026-12-01
        ("user lives at Karl-Heine-Straße 42, 04229 Leipzig.", "04229"),
        ("user lives at Karl-Heine-Straße 42, 04229 Leipzig.", "Leipzig"),
        ("we live at 12 rue de la Paix, 75002 Paris", "12 rue de la Paix"),
        ("Prinsengracht 263, 1016 GV Amsterdam", "1016 GV"),
        ("meet me at Calle Mayor 5 tonight", "Calle Mayor 5"),
    ],
)
def test_continental_addresses_and_postcodes(text: str, surface: str) -> None:
    assert ("LOCATION", surface) in _surfaces(find_patterns(text))


@pytest.mark.parametrize(
    "text",
    [
        "what to cook for oksana",
        "ideas for how to bath a dog",
        "send it via email please",
        "in 2022 Toyota won",
    ],
)
def test_infinitives_and_english_words_are_no_addresses_or_towns(text: str) -> None:
    assert [e for e in find_patterns(text) if e.kind == "LOCATION"] == []


@pytest.mark.parametrize(
    ("text", "surface", "public"),
    [
        ("He would love Tears of the Kingdom.", "Kingdom", True),
        ("We binge Game of Thrones.", "Thrones", True),
        ("a nurse at the Royal Infirmary of Edinburgh", "Edinburgh", False),  # "the" before the head
        ("she studies at the University of Leeds", "Leeds", False),  # an institution's head word
        ("Worked late with Jonah Park on the Nike pitch.", "Nike", False),  # "on the" is no title
        ("Don't share your Aadhaar or PAN on WhatsApp.", "Aadhaar", True),  # an ID scheme's name
    ],
)
def test_title_heads_and_id_schemes(text: str, surface: str, public: bool) -> None:
    start = text.index(surface)
    assert public_mention(surface, text, start, start + len(surface), kind="LOCATION") is public


def test_a_street_named_without_its_number_joins_the_address() -> None:
    record = _record(
        retrieved_memories=["user lives at Karl-Heine-Straße 42, 04229 Leipzig."],
        response_with_memory="Karl-Heine-Straße has a tram stop too.",
    )
    (result,) = deidentify_records([record], FixedNer({"Karl-Heine-Straße": "PERSON"}))
    memory = result.fields["retrieved_memories"][0]
    assert memory.startswith("user lives at [LOCATION_1], ")
    assert result.fields["response_with_memory"] == "[LOCATION_1] has a tram stop too."


def test_holidays_titles_and_relation_cued_everyday_names() -> None:
    text = "ideas for Mother's Day for my mum"
    start = text.index("Day")
    assert public_mention("Day", text, start, start + 3)
    satire = "The White Lotus is sharper satire."
    assert public_mention("The White Lotus", satire, 0, 15)
    records = [
        _record("a", query="Will Hanukkah overlap with Christmas?", retrieved_memories=["x"]),
        _record("b", query="a gift for my mum june? and is it warm in june?", retrieved_memories=["x"]),
        _record(
            "c",
            query="is ted lasso or the white lotus better?",
            retrieved_memories=["x"],
            response_with_memory="The White Lotus is sharper satire.",
        ),
    ]
    ner = FixedNer({"Will Hanukkah": "PERSON", "lotus": "ORGANIZATION", "The White Lotus": "ORGANIZATION"})
    a, b, c = deidentify_records(records, ner)
    assert a.fields["query"] == "Will Hanukkah overlap with Christmas?"
    assert b.fields["query"] == "a gift for my mum [PERSON_1]? and is it warm in june?"
    assert c.fields["query"] == "is ted lasso or the white lotus better?"


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("what to cook for oksana's birthday", ["oksana"]),
        ("ideas for kwame's 30th", ["kwame"]),
        ("me and bongani are driving", ["bongani"]),
        ("my dog's birthday is soon", []),
        ("the user's flat is damp", []),
        ("me and my mum went", []),
        ("me and the kids went", []),
        ("a cake for the team's party", []),
    ],
)
def test_lowercase_people_before_a_personal_possessive_or_after_me_and(text: str, found: list[str]) -> None:
    from dataset_builder.entity_cues import find_lowercase_people

    assert [e.text for e in find_lowercase_people(text)] == found


def test_a_family_home_country_is_redacted() -> None:
    home = _record(query="flights to see my parents in poland at christmas?", retrieved_memories=["x"])
    (result,) = deidentify_records([home], FixedNer({"poland": "LOCATION"}))
    assert "poland" not in result.fields["query"]


@pytest.mark.parametrize(
    "text",
    [
        "the client's CPU is the limit",  # an acronym after a relation word
        "the comparison leaves identifiers in published rows",
        "it uses Anthropic Message Batches for the judge",  # a capitalised verb inside a name
    ],
)
def test_technical_prose_is_not_a_person_or_employer(text: str) -> None:
    assert [e for e in find_patterns(text) if e.kind in ("PERSON", "ORGANIZATION")] == []
