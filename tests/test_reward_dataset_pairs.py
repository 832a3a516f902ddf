"""The dataset builder's ``preference_pairs`` config as reward-model input (one explicit mapping).

A dataset is built with ``dataset_builder`` from the builder's own fixture raw records
(``tests/fixtures/dataset/planted_pii_corpus.jsonl``: fictional people, de-identified by the build).
Those fixture judgments are mostly ties, too few strict preferences to train on, so their
``preference`` answers are replaced by a seeded SYNTHETIC rule before the build; everything else
(participants, texts, de-identification, splits) is the fixture's. Never data.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mirage_bench.reward.data import DataError, load_pairs
from mirage_bench.reward.dataset_pairs import DATASET_FIELD_MAP, DERIVED_COLUMNS, pair_from_dataset_row

DATASET_FIX = Path(__file__).parent / "fixtures" / "dataset" / "planted_pii_corpus.jsonl"
#: SYNTHETIC outcomes in memory terms per fixture record (default memory_much): every participant with
#: two published strict pairs gets one of each class, so every grouped training fold holds both classes.
SYNTHETIC_OUTCOMES = {
    "r003": "no_memory_much", "r007": "no_memory_much", "r010": "no_memory_much", "r014": "no_memory_much",
    "r015": "tie", "r019": "no_memory_much", "r022": "memory_slightly",
}


def _answer(record: dict) -> str:
    """The A/B answer that expresses the record's SYNTHETIC outcome given where the memory response was."""
    outcome = SYNTHETIC_OUTCOMES.get(record["record_id"], "memory_much")
    if outcome == "tie":
        return "about_the_same"
    side, strength = outcome.rsplit("_", 1)
    other = "B" if record["memory_position"] == "A" else "A"
    return f"{record['memory_position'] if side == 'memory' else other}_{strength}_better"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A built dataset (``--ner none``) whose preference answers follow a SYNTHETIC rule."""
    from dataset_builder.build import build_dataset

    root = tmp_path_factory.mktemp("ds")
    raw = root / "raw"
    raw.mkdir()
    records = [json.loads(line)["record"] for line in DATASET_FIX.read_text().splitlines() if line.strip()]
    for record in records:
        record["preference"] = _answer(record)
    (raw / "study.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    out = root / "synthetic_fixture_dataset"
    report = build_dataset(
        out, preferences=raw, recognizer=None, pii_corpus=DATASET_FIX, rng=random.Random(3)
    )
    assert report.valid, report.problems
    return out


def _rows(built: Path) -> list[dict]:
    """Every published row through ``datasets`` (the reader users have), category ids → names."""
    from datasets import ClassLabel, load_dataset

    loaded = load_dataset(str(built / "gated"), "preference_pairs", cache_dir=str(built.parent / "hf_cache"))
    rows = []
    for part in loaded.values():
        labels = {c: f for c, f in part.features.items() if isinstance(f, ClassLabel)}
        for row in part:
            rows.append(
                {c: (labels[c].int2str(v) if c in labels and v is not None else v) for c, v in row.items()}
            )
    return rows


def test_every_published_row_maps_field_by_field(built: Path) -> None:
    rows = _rows(built)
    assert set(rows[0]) == set(DATASET_FIELD_MAP) | set(DERIVED_COLUMNS)  # nothing unmapped
    pairs = {p.pair_id: p for p in load_pairs(built)}
    assert len(pairs) == len(rows) >= 10
    for row in rows:
        pair = pairs[row["pair_id"]]
        assert pair.participant_id == row["participant"]
        assert pair.response_memory == row["response_with_memory"]
        assert pair.response_no_memory == row["response_without_memory"]
        assert pair.memories == list(row["memories"]) and pair.query == row["query"]
        assert (pair.generator, pair.regime, pair.split) == (row["generator"], row["regime"], row["split"])
        expected = "about_same" if row["preference_5pt"] == "about_the_same" else row["preference_5pt"]
        assert pair.preference == expected
        assert pair.strength == (row["strength"] or "tie") and pair.is_clear == row["clear_preference"]
        assert pair.source == "dataset:synthetic_fixture_dataset"
    assert {p.preference for p in pairs.values()} >= {
        "about_same", "memory_much_better", "no_memory_much_better"
    }


def test_parquet_shard_config_folder_and_jsonl_give_the_same_pairs(built: Path, tmp_path: Path) -> None:
    from datasets import load_dataset

    every = {p.pair_id: p.model_dump() for p in load_pairs(built)}
    config = built / "gated" / "data" / "preference_pairs"
    assert {p.pair_id for p in load_pairs(config)} == set(every)
    shard = sorted(config.glob("train-*.parquet"))[0]
    train = load_pairs(shard)
    assert train and all(p.split == "train" for p in train)
    assert [p.pair_id for p in load_pairs(built, splits=["train"])] == [p.pair_id for p in train]
    # JSONL as Dataset.to_json writes it (category ids) and with category names
    loaded = load_dataset(str(built / "gated"), "preference_pairs", cache_dir=str(tmp_path / "hf"))
    ids_file = tmp_path / "ids.jsonl"
    loaded["train"].to_json(str(ids_file))
    assert [p.model_dump(exclude={"source"}) for p in load_pairs(ids_file)] == [
        p.model_dump(exclude={"source"}) for p in train
    ]
    names_file = tmp_path / "names.jsonl"
    names_file.write_text("".join(json.dumps(r) + "\n" for r in _rows(built)))
    assert {p.pair_id: p.model_dump(exclude={"source"}) for p in load_pairs(names_file)} == {
        k: {f: v for f, v in d.items() if f != "source"} for k, d in every.items()
    }


def test_contradictory_or_unknown_columns_are_refused(tmp_path: Path) -> None:
    row = {
        "pair_id": "pair_1", "participant": "participant_1", "query": "q", "memories": ["m"],
        "response_with_memory": "a", "response_without_memory": "b", "generator": "g", "regime": "ordinary",
        "preference_5pt": "memory_much_better", "preference": "memory", "strength": "much",
        "split": "train", "clear_preference": True,
    }
    assert pair_from_dataset_row(row, source="dataset:x", where="x:1").is_clear
    with pytest.raises(DataError, match="x:1: strength='slightly' contradicts"):
        pair_from_dataset_row({**row, "strength": "slightly"}, source="dataset:x", where="x:1")
    with pytest.raises(DataError, match="unknown preference_pairs column"):
        pair_from_dataset_row({**row, "annotator": "z"}, source="dataset:x", where="x:1")
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({**row, "preference_5pt": 9}) + "\n")
    with pytest.raises(DataError, match="preference_5pt id 9 is outside"):
        load_pairs(bad)
    with pytest.raises(DataError, match="no data/preference_pairs"):
        load_pairs(tmp_path)


def test_train_evaluate_and_score_from_the_built_dataset(built: Path, tmp_path: Path) -> None:
    from mirage_bench.cli import app

    runner = CliRunner()
    model = tmp_path / "model"
    result = runner.invoke(app, [
        "reward", "train", "--pairs", str(built), "--judge", "synthetic", "--out", str(model), "--subset",
        "strict", "--folds", "3", "--inner-folds", "2", "--shuffles", "1", "--passes", "1", "--per-pass", "4",
        "--split", "train",  # the test shard scored below stays held out (scoring it otherwise is refused)
    ])
    assert result.exit_code == 0, result.output
    assert "Table 3" in result.output and "Table 4" in result.output
    saved = json.loads((model / "reward_model.json").read_text())
    assert saved["pair_sources"] == ["dataset:synthetic_fixture_dataset"] and saved["rubric"] is not None
    result = runner.invoke(app, [
        "reward", "evaluate", "--pairs", str(built / "gated" / "data" / "preference_pairs"),
        "--subset", "strict",
        "--scores", str(model / "cv_scores.jsonl"), "--out-dir", str(tmp_path / "store"),
        "--prefix", "synthetic_",
    ])
    assert result.exit_code == 0, result.output
    assert "memory_aware_rm" in result.output
    assert (tmp_path / "store" / "smoke_synthetic_memory_aware_rm.jsonl").exists()
    test_shard = sorted((built / "gated" / "data" / "preference_pairs").glob("test-*.parquet"))[0]
    result = runner.invoke(app, [
        "reward", "score", "--pairs", str(test_shard), "--method", "model", "--model", str(model),
        "--judge", "synthetic", "--out", str(tmp_path / "test_scores.jsonl"),
    ])
    assert result.exit_code == 0, result.output
    scored = [json.loads(line) for line in (tmp_path / "test_scores.jsonl").read_text().splitlines()]
    assert {s["pair_id"] for s in scored} == {p.pair_id for p in load_pairs(test_shard)}
    assert all(0.0 <= s["p_memory"] <= 1.0 for s in scored)
