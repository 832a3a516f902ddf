"""De-identification: patterns, consistent placeholders, withholding, planted-PII recall, published rows."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pandas as pd
import pytest

from dataset_builder.build import PRIVATE_DIR, build_dataset
from dataset_builder.deidentify import deidentify_records
from dataset_builder.detectors import ENTITY_KINDS, SpacyRecognizer, find_patterns
from dataset_builder.pairs import assign_splits
from dataset_builder.pii_eval import evaluate_planted, load_planted_corpus, markdown_table
from dataset_builder.preferences import PreferenceFormatError, RawPreferenceRecord, load_raw_preferences
from tests.helpers_records import raw_preference_record

FIX = Path(__file__).parent / "fixtures" / "dataset"
CORPUS = FIX / "planted_pii_corpus.jsonl"


@pytest.fixture(scope="module")
def ner() -> SpacyRecognizer:
    return SpacyRecognizer().load()


@pytest.fixture(scope="module")
def corpus():
    return load_planted_corpus(CORPUS)


def _record(**overrides: object) -> RawPreferenceRecord:
    return raw_preference_record(**overrides)


def _texts(
    record_id: str,
    query: str,
    memories: list[str],
    with_memory: str,
    without_memory: str | None = None,
    **overrides: object,
) -> RawPreferenceRecord:
    """A record with these texts (both responses equal unless ``without_memory`` is given)."""
    return _record(
        record_id=record_id,
        query=query,
        retrieved_memories=memories,
        response_with_memory=with_memory,
        response_without_memory=with_memory if without_memory is None else without_memory,
        **overrides,
    )


def test_patterns_find_each_direct_identifier_kind() -> None:
    text = (
        "Write to ana.lopez@example.com, call +1 (617) 555-0142 or 617-555-0199, see https://ana.dev/cv, "
        "DM @ana_lopez, SSN 123-45-6789, badge AB1234567, born 2 May 1990, moved 2024-06-30, lives at "
        "42 Maple Street, Boston MA 02118."
    )
    kinds = {e.kind for e in find_patterns(text)}
    assert kinds == {"EMAIL", "PHONE", "URL", "HANDLE", "ID_NUMBER", "DATE", "LOCATION"}
    assert set(kinds) <= set(ENTITY_KINDS)
    assert [e.text for e in find_patterns("I ran 10000 steps in 2025 and paid $1,200.")] == []


def test_placeholders_are_consistent_within_a_participant(ner: SpacyRecognizer) -> None:
    first = _texts(
        "a",
        "Plan a dinner for Priya Natarajan.",
        ["The user's friend Priya Natarajan lives in Denver."],
        "Priya would enjoy a quiet dinner in Denver.",
        "A quiet dinner at home works well.",
    )
    second = _texts("b", "Gift ideas for Priya?", ["Priya Natarajan loves tea."], "A tea sampler.")
    other = _texts(
        "c",
        "Gift ideas for Tomas Berg?",
        ["The user likes pasta."],
        "A book.",
        participant_id="PROLIFIC_other",
    )
    a, b, c = deidentify_records([first, second, other], ner)
    assert a.fields["query"] == "Plan a dinner for [PERSON_1]."
    assert a.fields["retrieved_memories"][0].startswith("The user's friend [PERSON_1] lives in [LOCATION_")
    assert a.fields["response_with_memory"].startswith("[PERSON_1] would enjoy")
    assert b.fields["query"] == "Gift ideas for [PERSON_1]?"
    assert c.fields["query"] == "Gift ideas for [PERSON_1]?"  # numbering restarts per participant
    # a typed, consistent placeholder keeps the contrast: published under the default (A.4) policy,
    # withheld under the strict one because the redacted name/location is where the responses differ
    assert a.action == "publish" and b.action == "publish" and c.action == "publish"
    (strict,) = [
        r
        for r in deidentify_records([first, second, other], ner, policy="differing_text")
        if r.record.record_id == "a"
    ]
    assert strict.action == "withhold"
    assert "Priya" not in json.dumps(a.review_entry()) and "Denver" not in json.dumps(a.review_entry())
    assert len(a.review_entry()["redactions"]) == len(a.replacements) >= 5


def test_withhold_policy_generalized_only_keeps_placeholder_contrasts() -> None:
    profile = {"name": "Dana Whitfield"}  # the profile seeds the gazetteer (no NER in this test)
    record = _record(
        response_with_memory="Ask Dana Whitfield on March 3, 2026.",
        response_without_memory="Ask a friend soon.",
        participant_profile=profile,
        retrieved_memories=["The user's friend is Dana Whitfield."],
    )
    (strict,) = deidentify_records([record], None, policy="differing_text")
    (lenient,) = deidentify_records([record], None, policy="generalized_only")
    assert strict.action == lenient.action == "withhold"  # the date generalization changes the contrast
    no_date = _record(
        response_with_memory="Ask Dana Whitfield.",
        response_without_memory="Ask a friend.",
        participant_profile=profile,
        retrieved_memories=["The user's friend is Dana Whitfield."],
    )
    assert deidentify_records([no_date], None, policy="generalized_only")[0].action == "publish"
    assert deidentify_records([no_date], None, policy="differing_text")[0].action == "withhold"


@pytest.mark.parametrize("name", ["planted_pii_corpus.jsonl", "planted_pii_heldout.jsonl"])
def test_planted_corpus_recall_per_kind(name: str, ner: SpacyRecognizer) -> None:
    corpus = load_planted_corpus(FIX / name)
    evaluation = evaluate_planted(corpus, ner)
    planted = {
        kind: sum(1 for items in corpus.planted.values() for k, _ in items if k == kind)
        for kind in ENTITY_KINDS
    }
    assert {k: v["planted"] for k, v in evaluation.per_kind.items()} == {
        k: v for k, v in planted.items() if v
    }
    assert evaluation.leaks_in_published == 0
    for kind, row in evaluation.per_kind.items():
        assert row["recall"] == 1.0, (kind, evaluation.missed)
    # the patterns-and-gazetteer fallback alone misses names: the NER is doing real work
    baseline = evaluate_planted(corpus, None)
    assert baseline.per_kind["PERSON"]["recall"] < evaluation.per_kind["PERSON"]["recall"]


def test_docs_table_is_the_deidentify_command_output(ner: SpacyRecognizer) -> None:
    """docs/dataset.md holds the output of the command it names, for the shipped recognizer."""
    evaluations = [
        (name, evaluate_planted(load_planted_corpus(FIX / name), recognizer))
        for name in ("planted_pii_corpus.jsonl", "planted_pii_heldout.jsonl")
        for recognizer in (ner, None)
    ]
    table = markdown_table(evaluations)
    docs = (FIX.parent.parent.parent / "docs" / "dataset.md").read_text(encoding="utf-8")
    command = (
        "mirage-bench deidentify tests/fixtures/dataset/planted_pii_corpus.jsonl "
        "tests/fixtures/dataset/planted_pii_heldout.jsonl --ner spacy --ner none --markdown"
    )
    assert command in docs
    assert table in docs, "re-run the command in docs/dataset.md and paste its table"
    spacy_leaks = [e.leaks_in_published for (_, e) in evaluations[::2]]
    none_leaks = [e.leaks_in_published for (_, e) in evaluations[1::2]]
    assert spacy_leaks == [0, 0] and min(none_leaks) > 0  # the NER is doing real work


def test_no_planted_identifier_in_any_published_row(corpus, ner: SpacyRecognizer, tmp_path: Path) -> None:
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "study.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in corpus.records))
    out = tmp_path / "repo"
    report = build_dataset(
        out,
        preferences=raw,
        recognizer=ner,
        pii_corpus=CORPUS,
        rng=random.Random(7),
        id_map=tmp_path / "private" / "ids.json",
    )
    assert report.valid, report.problems
    from datasets import load_dataset

    from dataset_builder.configs import config_features

    loaded = load_dataset(str(out / "gated"), "preference_pairs", cache_dir=str(tmp_path / "cache"))
    assert set(loaded) == set(report.configs["preference_pairs"]) <= {"train", "validation", "test"}
    for split, part in loaded.items():
        assert part.features == config_features("preference_pairs")
        assert set(part["split"]) == {split}
    shards = sorted((out / "gated" / "data" / "preference_pairs").glob("*.parquet"))
    frames = [pd.read_parquet(p) for p in shards]
    rows = pd.concat(frames, ignore_index=True)
    assert len(rows) == report.deid["published"] > 0
    published = "\n".join(json.dumps(r, default=str) for r in rows.to_dict("records")).lower()
    identifiers = {text for items in corpus.planted.values() for _, text in items}
    # whole words, as pii_eval matches them: "York" is not left by the public "Yorkshire Dales"
    leaked = sorted(i for i in identifiers if re.search(rf"(?<!\w){re.escape(i.lower())}(?!\w)", published))
    assert leaked == []
    for record in corpus.records:  # recruitment and record ids never reach a published file
        for path in out.rglob("*"):
            if path.is_file() and PRIVATE_DIR not in path.parts:
                content = path.read_bytes()
                assert (
                    record.participant_id.encode() not in content
                    and f'"{record.record_id}"'.encode() not in content
                )
    # participant grouping: no participant in two splits; retest repeats never published
    assert rows.groupby("participant")["split"].nunique().max() == 1
    assert report.deid["excluded_reasons"] == {"test-retest repeat": 1}
    card = (out / "gated" / "README.md").read_text(encoding="utf-8")  # the gated repository's card
    assert "extra_gated_prompt" in card and "re-identify" in card
    assert "| PERSON | 13 | 13 | 1.000 |" in card
    unwrapped = " ".join(card.split())
    assert "It is this package's test fixture, written by the engineer who wrote the detectors" in unwrapped
    assert "not an estimate of recall on the real study records" in unwrapped
    review = (out / PRIVATE_DIR / "deid_review.jsonl").read_text(encoding="utf-8").lower()
    assert not [i for i in identifiers if i.lower() in review]
    ids = json.loads((tmp_path / "private" / "ids.json").read_text())
    assert set(ids) == {r.participant_id for r in corpus.records}
    assert set(rows["participant"]) <= set(ids.values())


def test_study_ids_stable_with_id_map(corpus, tmp_path: Path) -> None:
    from dataset_builder.pairs import build_preference_pairs

    id_map = tmp_path / "ids.json"
    first = build_preference_pairs(corpus.records, None, id_map_path=id_map)
    second = build_preference_pairs(corpus.records, None, id_map_path=id_map)
    assert [e["participant"] for e in first.review] == [e["participant"] for e in second.review]
    fresh = build_preference_pairs(corpus.records, None)
    assert {e["participant"] for e in fresh.review}.isdisjoint({e["participant"] for e in first.review})


def test_splits_are_participant_grouped() -> None:
    splits = assign_splits([f"p{i}" for i in range(87)])
    counts = pd.Series(splits).value_counts()
    assert counts["train"] + counts["validation"] + counts["test"] == 87
    assert counts["validation"] >= 1 and counts["test"] >= 1
    assert assign_splits([f"p{i}" for i in range(87)]) == splits


def test_raw_records_reject_bad_input(tmp_path: Path) -> None:
    with pytest.raises(PreferenceFormatError, match="holds no"):
        load_raw_preferences(tmp_path)
    good = _record().model_dump_json()
    (tmp_path / "a.jsonl").write_text(good + "\n" + good.replace('"ordinary"', '"reckless"') + "\n")
    with pytest.raises(PreferenceFormatError, match=r"a\.jsonl:2: regime"):
        load_raw_preferences(tmp_path)
    (tmp_path / "a.jsonl").write_text(good + "\n" + good + "\n")
    with pytest.raises(PreferenceFormatError, match="appears twice"):
        load_raw_preferences(tmp_path)
    with pytest.raises(ValueError, match="exclusion_reason"):
        _record(excluded=True)
