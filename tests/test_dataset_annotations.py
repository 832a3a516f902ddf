"""Annotation and sample formats (written by the Space), their join, and the build-dataset CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mirage_bench.validation.records import (
    AnnotationError,
    AnnotationRecord,
    join_annotations,
    load_annotations,
    load_validation_sample,
    make_item_id,
)

FIX = Path(__file__).parent / "fixtures" / "dataset"


def test_fixture_sample_ids_match_their_claims() -> None:
    for item in load_validation_sample([FIX / "fixture_validation_sample.jsonl"]):
        assert item.item_id == make_item_id(
            item.model, item.judge, item.persona_id, item.task_id, item.claim_index
        )


def test_annotation_record_rejects_bad_lines(tmp_path: Path) -> None:
    line = json.loads((FIX / "fixture_annotations.jsonl").read_text().splitlines()[0])
    for change, message in (
        (dict(human_label="MAYBE"), "human_label"),
        (dict(labelled_at="2026-11-30T01:00:00"), "labelled_at"),
        (dict(revealed_facts=["only one"]), "revealed_facts"),
        (dict(judge_label="GROUNDED"), "judge_label"),
    ):  # the judge label never sits here
        bad = tmp_path / "bad.jsonl"
        bad.write_text(json.dumps({**line, **change}) + "\n")
        with pytest.raises(AnnotationError, match=rf"bad\.jsonl:1: {message}"):
            load_annotations([bad])


def test_join_keeps_latest_label_and_checks_shown_content() -> None:
    sample = load_validation_sample([FIX / "fixture_validation_sample.jsonl"])
    annotations = load_annotations([FIX / "fixture_annotations.jsonl"])
    first = annotations[0]
    relabel = first.model_copy(
        update={"human_label": "FABRICATED", "labelled_at": first.labelled_at.replace(hour=23)}
    )
    rows, notes = join_annotations([*annotations, relabel], sample)
    assert len(rows) == len(annotations)
    assert next(r for r in rows if r["item_id"] == first.item_id)["human_label"] == "FABRICATED"
    assert notes == ["1 earlier label(s) superseded by a later label of the same annotator"]
    assert [r["position"] for r in rows] == sorted(r["position"] for r in rows)
    tampered = first.model_copy(update={"claim": "A different claim."})
    with pytest.raises(AnnotationError, match="different claim"):
        join_annotations([tampered], sample)
    assert isinstance(first, AnnotationRecord)


def test_build_dataset_cli(tmp_path: Path) -> None:
    from mirage_bench.cli import app

    out = tmp_path / "repo"
    args = [
        "build-dataset",
        "--out",
        str(out),
        "--runs",
        str(FIX / "fixture_run_a"),
        "--annotations",
        str(FIX / "fixture_annotations.jsonl"),
        "--validation-sample",
        str(FIX / "fixture_validation_sample.jsonl"),
    ]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "left out preference_pairs: no raw preference-study folder was given" in result.output
    assert "validation passed" in result.output
    again = CliRunner().invoke(app, args)
    assert again.exit_code == 2 and "not empty" in again.output
    bad = CliRunner().invoke(
        app, ["build-dataset", "--out", str(tmp_path / "x"), "--runs", str(tmp_path / "nope")]
    )
    assert bad.exit_code == 2 and "manifest" in bad.output


def test_deidentify_cli_reports_recall() -> None:
    from mirage_bench.cli import app

    result = CliRunner().invoke(
        app, ["deidentify", str(FIX / "planted_pii_corpus.jsonl"), "--ner", "none", "--json"]
    )
    evaluation = json.loads(result.output)
    assert set(evaluation["per_kind"]) >= {"PERSON", "EMAIL", "PHONE", "DATE"}
    assert evaluation["per_kind"]["EMAIL"]["recall"] == 1.0
    # without the NER some names stay in published rows, and the command says so with its exit code
    assert (result.exit_code == 1) == (evaluation["leaks_in_published"] > 0)
