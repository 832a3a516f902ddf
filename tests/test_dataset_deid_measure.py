"""De-identification on memory-style text: new formats, entity resolution, honest measures, withholding."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dataset_builder.deidentify import (
    REASON_ERASED,
    REASON_GENERALIZED,
    ParticipantRedactor,
    deidentify_records,
)
from dataset_builder.detectors import ENTITY_KINDS, Entity, SpacyRecognizer, find_patterns
from dataset_builder.pii_eval import (
    PlantedCorpus,
    PlantedItem,
    bar_failures,
    distinctive_tokens,
    evaluate_planted,
    load_planted_corpus,
    markdown_table,
)
from dataset_builder.preferences import RawPreferenceRecord
from mirage_bench.cli import app
from tests.helpers_deid import FixedNer
from tests.helpers_records import raw_preference_record

FIX = Path(__file__).parent / "fixtures" / "dataset"
ROOT = FIX.parent.parent.parent
HELDOUT = FIX / "deid_heldout_memories.jsonl"
TUNING = FIX / "deid_tuning_memories.jsonl"
README_CORPORA = (
    "deid_heldout7_memories.jsonl",
    "deid_heldout6_memories.jsonl",
    "deid_heldout5_memories.jsonl",
    "deid_heldout_memories.jsonl",
    "deid_heldout2_memories.jsonl",
    "deid_heldout3_memories.jsonl",
    "deid_heldout4_memories.jsonl",
    "deid_tuning_memories.jsonl",
    "planted_pii_corpus.jsonl",
    "planted_pii_heldout.jsonl",
)
#: The corpora written blind to the code by someone else and later demoted to tuning (the third and
#: fourth on 2026-12-01, the fifth on 2026-12-01 after its misses were read): they meet the recall,
#: leak, publication and over-redaction parts of the bar, not yet one placeholder per entity (see
#: docs/deidentification.md).
BLIND_CORPORA = (
    "deid_heldout3_memories.jsonl",
    "deid_heldout4_memories.jsonl",
    "deid_heldout5_memories.jsonl",
)
#: Written blind by someone else, measured blind, then demoted to tuning (2026-12-02, third
#: session) and tuned on for one round: its figures are regression checks (the README table test
#: pins them), and it does not meet the recall part of the bar yet.
DEMOTED_CORPORA = ("deid_heldout6_memories.jsonl",)
#: Written blind by someone else and never tuned on: kept outside the repository while the detectors
#: changed (2026-12-02, third session) and measured blind at the start and at the end
#: (docs/deidentification.md, "Seventh held-out corpus"). Its column is the honest estimate; the bar
#: is not met on it, and no assertion here may be tuned to it.
HELDOUT_CORPORA = ("deid_heldout7_memories.jsonl",)
BAR_CORPORA = tuple(
    name for name in README_CORPORA if name not in BLIND_CORPORA + DEMOTED_CORPORA + HELDOUT_CORPORA
)


@pytest.fixture(scope="module")
def ner() -> SpacyRecognizer:
    return SpacyRecognizer().load()


def _record(rid: str = "r1", pid: str = "p1", **texts: object) -> RawPreferenceRecord:
    return raw_preference_record(record_id=rid, participant_id=pid, **texts)


@pytest.mark.parametrize(
    ("text", "kind", "surface"),
    [
        ("write to jo at kim dot lee at gmail dot com", "EMAIL", "kim dot lee at gmail dot com"),
        ("mail anna [at] example [dot] org today", "EMAIL", "anna [at] example [dot] org"),
        ("ring me on 07123 456789 later", "PHONE", "07123 456789"),
        ("call 0498 765 432 after lunch", "PHONE", "0498 765 432"),
        ("my rego is XYZ 321 now", "ID_NUMBER", "XYZ 321"),
        ("national insurance number is AB 98 76 54 C", "ID_NUMBER", "AB 98 76 54 C"),
        ("the plate MK21 ABC was towed", "ID_NUMBER", "MK21 ABC"),
        ("my medicare number 3123 45678 9", "ID_NUMBER", "3123 45678 9"),
        ("nmc pin 77C1234X expires", "ID_NUMBER", "77C1234X"),
        ("my discord is catlover_99#1234", "HANDLE", "catlover_99#1234"),
        ("find me at u/night_owl_22", "HANDLE", "u/night_owl_22"),
        ("party on 3/14 at home", "DATE", "3/14"),
        ("her bday is june 3rd", "DATE", "june 3rd"),
        ("landing on the 5th of sept", "DATE", "5th of sept"),
        ("we live at 52 s oak ave now", "LOCATION", "52 s oak ave"),
        ("post it to SW1A 1AA please", "LOCATION", "SW1A 1AA"),
        ("the flat at 4/18 king st is damp", "LOCATION", "4/18 king st"),
        ("my friend maria lopez is coming", "PERSON", "maria lopez"),
        # the contextual recognizers (places and organisations named by their context)
        ("we moved to round rock last year", "LOCATION", "round rock"),
        ("she lives in didsbury now", "LOCATION", "didsbury"),
        ("he works at the co-op bank", "ORGANIZATION", "co-op bank"),
        ("my son goes to maple grove elementary", "ORGANIZATION", "maple grove elementary"),
        ("a job at ridgeway motors", "ORGANIZATION", "ridgeway motors"),
    ],
)
def test_patterns_find_memory_style_identifiers(text: str, kind: str, surface: str) -> None:
    assert (kind, surface) in [(e.kind, e.text) for e in find_patterns(text)]


@pytest.mark.parametrize(
    "text",
    [
        "Add 1/2 cup of flour.",
        "I walked 5 miles down the road.",
        "My manager is great.",
        "Paid 1200 in 2025.",
        "he goes to the local high school",  # the contextual recognizers need a place or organisation
        "I ran in the rain today",
    ],
)
def test_patterns_leave_ordinary_text_alone(text: str) -> None:
    assert find_patterns(text) == []


def test_one_placeholder_per_entity_and_person_place_apart() -> None:
    r = ParticipantRedactor()
    r.learn(
        [
            Entity(0, 12, "PERSON", "Jordan Ellis", "ner"),
            Entity(0, 6, "LOCATION", "Jordan", "ner"),
            Entity(0, 12, "PERSON", "Tomás Rivera", "ner"),
            Entity(0, 10, "PERSON", "Han Ji-woo", "ner"),
            Entity(0, 22, "ORGANIZATION", "Mercy General Hospital", "ner"),
        ]
    )
    text, _ = r.redact(
        "a trip to jordan with Jordan Ellis; Jordan might know. tomas and Tomás Rivera met jiwoo and "
        "Ji-woo at Mercy General, which is Mercy General Hospital.",
        [],
    )
    assert text == (
        "a trip to [LOCATION_1] with [PERSON_1]; [PERSON_1] might know. [PERSON_2] and [PERSON_2] met "
        "[PERSON_3] and [PERSON_3] at [ORGANIZATION_1], which is [ORGANIZATION_1]."
    )


def test_short_name_seen_before_the_full_name_gets_its_placeholder() -> None:
    first = _record("a", query="Gift for Priya?", retrieved_memories=["The user likes tea."])
    second = _record("b", query="Dinner with Priya Natarajan?", retrieved_memories=["Priya Natarajan cooks."])
    a, b = deidentify_records([first, second], FixedNer({"Priya": "PERSON", "Priya Natarajan": "PERSON"}))
    assert a.fields["query"] == "Gift for [PERSON_1]?"
    assert b.fields["query"] == "Dinner with [PERSON_1]?"


def test_everyday_words_that_look_like_names_are_kept(ner: SpacyRecognizer) -> None:
    record = _record(
        query="Will the gym be open on Boxing Day? Grace period ends soon.",
        retrieved_memories=["The user loves Spider-Man and chats on Discord."],
        response_with_memory="Grace period aside, Spider-Man fans meet on Discord on Boxing Day.",
    )
    (result,) = deidentify_records([record], ner)
    published = json.dumps(result.fields)
    for phrase in ("Will the", "Boxing Day", "Grace period", "Spider-Man", "Discord"):
        assert phrase in published, (phrase, result.fields)


def _corpus(
    record: RawPreferenceRecord, items: list[PlantedItem], keep: list[str] | None = None
) -> PlantedCorpus:
    rid = record.record_id
    return PlantedCorpus([record], {rid: [(i.kind, i.text) for i in items]}, {rid: items}, {rid: keep or []})


def test_a_fragment_left_beside_a_placeholder_is_not_a_removal() -> None:
    record = _record(query="Gift ideas for Priya Kaur-Sandhu?", retrieved_memories=["Priya likes tea."])
    corpus = _corpus(record, [PlantedItem("PERSON", "Priya Kaur-Sandhu", "p")])
    evaluation = evaluate_planted(corpus, FixedNer({"Priya": "PERSON"}))
    # the exact string is gone ("[PERSON_1] Kaur-Sandhu"), but its family name is not
    assert evaluation.per_kind["PERSON"]["caught"] == 0
    assert evaluation.leaks_in_published == 1
    assert distinctive_tokens("LOCATION", "14 Wellington Rd") == ["14", "wellington"]


def test_over_redaction_and_consistency_are_measured() -> None:
    record = _record(
        query="Ask Rose Hill about the Maple festival.",
        retrieved_memories=["Rose Hill organises the Maple festival."],
        response_with_memory="Rose could ask about Maple.",
    )
    items = [PlantedItem("PERSON", "Rose Hill", "rose"), PlantedItem("PERSON", "Rose", "rose", "Rose could")]
    corpus = _corpus(record, items, ["Maple festival", "Maple"])
    evaluation = evaluate_planted(corpus, FixedNer({"Rose Hill": "PERSON", "Maple": "ORGANIZATION"}))
    assert evaluation.per_kind["PERSON"] == {"planted": 2, "caught": 2, "recall": 1.0}
    assert evaluation.over_redaction["must_keep"] == 5
    assert evaluation.over_redaction["lost"] == 5
    assert evaluation.consistency["entities"] == 1 and evaluation.consistency["split"] == 0


def test_withholding_keeps_placeholder_contrasts_and_withholds_what_changes_the_basis() -> None:
    ner = FixedNer({"Dana Whitfield": "PERSON", "Leeds": "LOCATION"})
    memories = ["The user's friend Dana Whitfield lives in Leeds; her party is on March 3, 2026."]
    kept = _record(
        "k",
        retrieved_memories=memories,
        response_with_memory="Ask Dana Whitfield.",
        response_without_memory="Ask a friend.",
    )
    erased = _record(
        "e",
        retrieved_memories=memories,
        response_with_memory="Visit Leeds.",
        response_without_memory="Visit Dana Whitfield.",
    )
    dated = _record(
        "d",
        retrieved_memories=memories,
        response_with_memory="Her party is on March 3, 2026.",
        response_without_memory="Throw a party soon.",
    )
    # the response repeats the remembered date in another form: "the 3rd" reads "a date", the memory
    # "March 2026": the published response no longer visibly uses the remembered date
    reworded = _record(
        "r",
        retrieved_memories=memories,
        response_with_memory="Her party is on the 3rd.",
        response_without_memory="Throw a party soon.",
    )
    # two remembered dates share the published form "March 2026": which one the response used is lost
    two_dates = _record(
        "t",
        retrieved_memories=[*memories, "Dana Whitfield's exam is on March 20, 2026."],
        response_with_memory="Her party is on March 3, 2026.",
        response_without_memory="Throw a party soon.",
    )
    # the memory-free response names another March date: after generalization both read alike
    contrast = _record(
        "x",
        retrieved_memories=memories,
        response_with_memory="Her party is on March 3, 2026.",
        response_without_memory="Parties often fall on March 7, 2026.",
    )
    records = [kept, erased, dated, reworded, two_dates, contrast]
    results = {r.record.record_id: r for r in deidentify_records(records, ner)}
    assert results["k"].action == "publish"
    assert results["e"].action == "publish"  # [LOCATION_1] vs [PERSON_1]: still a contrast
    # generalized alike in the memory and the response ("March 2026" in both), as a consistent
    # placeholder: the response still visibly repeats the remembered date (A.4)
    assert results["d"].action == "publish"
    assert results["d"].fields["response_with_memory"] == "Her party is on March 2026."
    for rid in ("r", "t", "x"):
        assert (results[rid].action, results[rid].reason) == ("withhold", REASON_GENERALIZED), rid
    assert deidentify_records([dated], ner, policy="generalized_only")[0].action == "withhold"
    strict = deidentify_records([kept], ner, policy="differing_text")[0]
    assert strict.action == "withhold"
    # the responses differ only in two names of one person: after redaction they are the same text
    collapsed = _record(
        "c",
        retrieved_memories=memories,
        response_with_memory="Ask Dana Whitfield.",
        response_without_memory="Ask Dana.",
    )
    (c,) = deidentify_records([collapsed], ner)
    assert c.fields["response_with_memory"] == c.fields["response_without_memory"] == "Ask [PERSON_1]."
    assert (c.action, c.reason) == ("withhold", REASON_ERASED)


def test_review_entry_lists_every_redaction_without_the_removed_text() -> None:
    record = _record(query="Text Dana Whitfield on 07700 900123.", response_with_memory="Text Dana.")
    (result,) = deidentify_records([record], FixedNer({"Dana Whitfield": "PERSON"}))
    entry = result.review_entry()
    redactions = entry["redactions"]
    assert {(r["field"], r["kind"], r["replacement"]) for r in redactions} >= {
        ("query", "PERSON", "[PERSON_1]"),
        ("query", "PHONE", "[PHONE_1]"),
        ("response_with_memory", "PERSON", "[PERSON_1]"),
    }
    assert record.query[redactions[0]["start"] : redactions[0]["end"]] == "Dana Whitfield"
    dumped = json.dumps(entry)
    assert "Dana" not in dumped and "900123" not in dumped


def test_heldout_corpus_is_complete_and_self_consistent() -> None:
    corpus = load_planted_corpus(HELDOUT)
    assert len(corpus.records) == 43
    assert len({r.participant_id for r in corpus.records}) == 7
    assert {item.kind for items in corpus.items.values() for item in items} == set(ENTITY_KINDS)
    assert sum(len(keep) for keep in corpus.must_keep.values()) == 110
    assert all(item.entity for items in corpus.items.values() for item in items)


@pytest.mark.parametrize(
    ("name", "records", "participants", "planted", "must_keep"),
    [
        ("deid_heldout6_memories.jsonl", 60, 10, 258, 246),
        ("deid_heldout7_memories.jsonl", 60, 10, 259, 258),
    ],
)
def test_blind_corpus_is_complete_and_self_consistent(
    name: str, records: int, participants: int, planted: int, must_keep: int
) -> None:
    """The counts its writer reported: a truncated or re-written fixture fails here."""
    corpus = load_planted_corpus(FIX / name)
    assert len(corpus.records) == records
    assert len({r.participant_id for r in corpus.records}) == participants
    assert {item.kind for items in corpus.items.values() for item in items} == set(ENTITY_KINDS)
    assert sum(len(items) for items in corpus.items.values()) == planted
    assert sum(len(keep) for keep in corpus.must_keep.values()) == must_keep
    assert all(item.entity for items in corpus.items.values() for item in items)


def test_readme_table_is_the_deidentify_command_output(ner: SpacyRecognizer) -> None:
    evaluations = [(name, evaluate_planted(load_planted_corpus(FIX / name), ner)) for name in README_CORPORA]
    table = markdown_table(evaluations)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    command = "mirage-bench deidentify " + " ".join(f"tests/fixtures/dataset/{n}" for n in README_CORPORA)
    assert command + " --ner spacy --markdown" in readme
    assert table in readme, "re-run the command in README.md and paste its table"
    # the five older repo corpora (all tuning corpora since 2026-12-01) meet the whole bar
    by_name = dict(evaluations)
    for name in BAR_CORPORA:
        assert bar_failures(by_name[name]) == [], name
        assert by_name[name].leaks_in_published == 0, name
    # the third to fifth, written blind to the code and tuned on since, meet the recall, publication
    # and over-redaction parts of the bar, and none of their planted identifiers is published
    for name in BLIND_CORPORA:
        blind = by_name[name]
        assert all(row["recall"] >= 0.95 for row in blind.per_kind.values()), (name, blind.per_kind)
        assert blind.published >= 0.8 * blind.comparisons, name
        assert blind.leaks_in_published == 0, name
        assert blind.over_redaction["rate"] <= 0.05, (name, blind.over_redaction["rate"])


def test_cli_reports_over_redaction_consistency_and_participants() -> None:
    result = CliRunner().invoke(app, ["deidentify", str(TUNING), "--ner", "none"])
    assert "must-keep occurrences lost" in result.stdout
    assert "placeholder consistency:" in result.stdout
    assert result.stdout.count("participant tp") == 6
    as_json = CliRunner().invoke(app, ["deidentify", str(TUNING), "--ner", "none", "--json"])
    data = json.loads(as_json.stdout)
    assert set(data["over_redaction"]) >= {"must_keep", "lost", "rate"}
    assert (as_json.exit_code == 1) == (data["leaks_in_published"] > 0)


@pytest.mark.parametrize(
    ("text", "surface", "public"),
    [
        ("Are you off on Boxing Day?", "Boxing Day", True),
        ("I chat on Discord a lot.", "Discord", True),
        ("She works at Discord now.", "Discord", False),
        ("Is the Arsenal game on?", "Arsenal", True),
        ("Should I watch Ted Lasso or Severance?", "Severance", True),
        ("I drive a Honda Civic.", "Honda Civic", True),
        ("Ask Priya about it.", "Priya", False),
    ],
)
def test_public_mentions(text: str, surface: str, public: bool) -> None:
    from dataset_builder.detectors import public_mention

    start = text.index(surface)
    assert public_mention(surface, text, start, start + len(surface)) is public


def test_detectors_do_not_match_placeholders_again() -> None:
    r = ParticipantRedactor()
    r.learn([Entity(0, 5, "PERSON", "Priya", "ner")])
    once, _ = r.redact("Priya met Priya.", [])
    twice, applied = r.redact(once, find_patterns(once))
    assert once == twice == "[PERSON_1] met [PERSON_1]." and applied == []


def test_build_summary_counts_withheld_comparisons_per_participant() -> None:
    from dataset_builder.pairs import build_preference_pairs

    memories = ["The user's friend Dana Whitfield throws a party on March 3, 2026."]
    dated = _record(
        "d",
        retrieved_memories=memories,
        response_with_memory="The party is on the 3rd.",
        response_without_memory="Throw a party soon.",
    )
    kept = _record(
        "k",
        retrieved_memories=memories,
        response_with_memory="Ask Dana Whitfield.",
        response_without_memory="Ask a friend.",
    )
    pairs = build_preference_pairs([dated, kept], FixedNer({"Dana Whitfield": "PERSON"}))
    assert pairs.summary["published"] == 1 and pairs.summary["withheld"] == 1
    assert pairs.summary["withheld_reasons"] == {REASON_GENERALIZED: 1}
    (per_participant,) = pairs.summary["withheld_per_participant"].values()
    assert per_participant == {REASON_GENERALIZED: 1}
    assert pairs.summary["withhold_policy"] == "bears_on_preference"


def test_review_entry_lists_recognized_names_that_were_kept() -> None:
    record = _record(query="Will the gym open on Boxing Day? Ask Dana Whitfield.")
    ner = FixedNer({"Will": "PERSON", "Boxing Day": "ORGANIZATION", "Dana Whitfield": "PERSON"})
    (result,) = deidentify_records([record], ner)
    assert result.fields["query"] == "Will the gym open on Boxing Day? Ask [PERSON_1]."
    kept = result.review_entry()["kept_for_review"]
    assert [(k["field"], k["start"], k["end"]) for k in kept] == [("query", 0, 4), ("query", 21, 31)]
    assert {k["why"] for k in kept} == {"public mention", "everyday word or title"}
    assert "Boxing" not in json.dumps(kept)


def test_cli_withhold_policy_option() -> None:
    strict = CliRunner().invoke(
        app, ["deidentify", str(TUNING), "--ner", "none", "--json", "--withhold-policy", "differing_text"]
    )
    default = CliRunner().invoke(app, ["deidentify", str(TUNING), "--ner", "none", "--json"])
    assert json.loads(strict.stdout)["withheld"] > json.loads(default.stdout)["withheld"]
    bad = CliRunner().invoke(app, ["deidentify", str(TUNING), "--withhold-policy", "bogus"])
    assert bad.exit_code == 2 and "Traceback" not in bad.output


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"must_keep": "Grace period"}, "must_keep must be a list"),
        ({"planted": [{"kind": "NAME", "text": "Priya"}]}, "unknown entity kind 'NAME'"),
        ({"planted": [{"kind": "PERSON", "text": "Priya", "context": "with Jo"}]}, "does not contain"),
    ],
)
def test_bad_corpus_lines_are_clear_errors(tmp_path: Path, change: dict[str, object], message: str) -> None:
    from dataset_builder.preferences import PreferenceFormatError

    line = {"record": json.loads(_record().model_dump_json()), "planted": [], "must_keep": []}
    line.update(change)
    path = tmp_path / "corpus.jsonl"
    path.write_text(json.dumps(line) + "\n")
    with pytest.raises(PreferenceFormatError, match=rf"corpus\.jsonl:1: .*{message}"):
        load_planted_corpus(path)
    result = CliRunner().invoke(app, ["deidentify", str(path), "--ner", "none"])
    assert result.exit_code == 2 and message in result.output and "Traceback" not in result.output
