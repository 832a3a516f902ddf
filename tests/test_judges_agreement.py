"""``agreement``: the H.2–H.4 statistics for any pair of label files, joined on claim_id."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mirage_bench.cli import app
from mirage_bench.judges.agreement_files import compare_files, read_label_file
from mirage_bench.metrics.agreement import labels_from_confusion
from mirage_bench.metrics.labels import LABEL_NAMES
from mirage_bench.reported import load_reported, reported_statistic

runner = CliRunner()


def h3_matrix() -> list[list[int]]:
    h3 = load_reported("h3")
    frame = h3[h3.row_type == "label"].set_index("human_label").loc[list(LABEL_NAMES)].filter(like="judge_")
    return frame.to_numpy().tolist()


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def h3_files(tmp_path: Path) -> tuple[Path, Path]:
    """The H.3 confusion matrix expanded into a judge label file and a human label file."""
    predictions, references = labels_from_confusion(h3_matrix())
    judge = [
        {"claim_id": f"c{i:03d}", "label": LABEL_NAMES[p], "status": "ok", "judge_config": "paper"}
        for i, p in enumerate(predictions)
    ]
    human = [
        {"item_id": f"c{i:03d}", "human_label": LABEL_NAMES[r], "annotator_id": "ann1"}
        for i, r in enumerate(references)
    ]
    # one claim only the judge has, one only the human has, one the judge failed to parse
    judge.append({"claim_id": "only-judge", "label": "GROUNDED"})
    human.append({"item_id": "only-human", "human_label": "FABRICATED"})
    judge.append({"claim_id": "failed", "label": None, "status": "parse_failure"})
    human.append({"item_id": "failed", "human_label": "GROUNDED"})
    return write_jsonl(tmp_path / "judge.jsonl", judge), write_jsonl(tmp_path / "human.jsonl", human)


def test_agreement_reproduces_h3_with_kappa_cis(h3_files: tuple[Path, Path]) -> None:
    result = compare_files(*h3_files, n_resamples=500)
    s = result["statistics"]
    assert result["scored"] == s["n"] == 400
    assert result["matched"] == 401 and result["unlabelled_in_matched"] == 1
    assert result["only_in_a"] == {"count": 1, "examples": ["only-judge"]}
    assert result["only_in_b"] == {"count": 1, "examples": ["only-human"]}
    assert s["accuracy"] == 359 / 400  # 89.8% printed
    assert round(s["kappa"], 3) == reported_statistic("agreement_kappa") == 0.863
    assert round(s["macro_f1"], 3) == reported_statistic("agreement_macro_f1")
    assert round(s["binary_kappa"], 3) == reported_statistic("agreement_binary_kappa")
    assert s["disagreements_by_distance"] == {1: 29, 2: 12, 3: 0}
    assert s["confusion_matrix"] == h3_matrix()
    low, high = s["kappa_ci"]
    assert low < s["kappa"] < high
    assert result["a"]["statuses"] == {"ok": 401, "parse_failure": 1}


def test_agreement_command_prints_h3(h3_files: tuple[Path, Path]) -> None:
    result = runner.invoke(app, ["agreement", str(h3_files[0]), str(h3_files[1]), "--resamples", "200"])
    assert result.exit_code == 0, result.output
    out = result.output
    assert "accuracy 0.8975 (359/400)" in out
    assert "Cohen's kappa 0.863" in out and "95% CI [" in out
    assert "macro-F1 0.896" in out
    assert "kappa 0.900" in out  # binary
    assert "1 only in A, 1 only in B, 1 matched but unlabelled" in out
    assert "1: 29 (71%), 2: 12 (29%), 3: 0" in out
    as_json = runner.invoke(
        app, ["agreement", str(h3_files[0]), str(h3_files[1]), "--json", "--resamples", "0"]
    )
    assert json.loads(as_json.output)["statistics"]["n"] == 400


def test_bad_label_files_are_clear_errors(tmp_path: Path) -> None:
    bad = write_jsonl(
        tmp_path / "bad.jsonl",
        [
            {"claim_id": "a", "label": "MAYBE"},
            {"claim_id": "a", "label": "GROUNDED"},
            {"claim_id": "a", "label": "GROUNDED"},
        ],
    )
    with pytest.raises(ValueError, match="label 'MAYBE'.*\n.*labelled twice"):
        read_label_file(bad)
    good = write_jsonl(tmp_path / "good.jsonl", [{"claim_id": "x", "label": "GROUNDED"}])
    other = write_jsonl(tmp_path / "other.jsonl", [{"claim_id": "y", "label": "GROUNDED"}])
    result = runner.invoke(app, ["agreement", str(good), str(other)])
    assert result.exit_code == 2 and "share no labelled claim_id" in result.output
    result = runner.invoke(app, ["agreement", str(good), str(tmp_path / "missing.jsonl")])
    assert result.exit_code == 2 and "not found" in result.output
