"""``mirage-bench eval-results`` (the model-side Eval Results file of a run) and ``build-dataset --json``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

from mirage_bench.cli import app
from mirage_bench.repo_ids import DATASET_REPO_ID
from mirage_bench.types import OVER_INFERENCE_LABELS

FIX = Path(__file__).parent / "fixtures" / "dataset"


def test_eval_results_file_names_the_benchmark_task_and_the_measured_oi(tmp_path: Path) -> None:
    from dataset_builder.card import eval_yaml
    from dataset_builder.sources import personas_config

    result = CliRunner().invoke(app, ["eval-results", str(FIX / "fixture_run_a"), "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    (entry,) = yaml.safe_load((tmp_path / ".eval_results" / "miragebench.yaml").read_text(encoding="utf-8"))
    claims = pd.read_parquet(FIX / "fixture_run_a" / "claims.parquet")
    oi = 100 * claims.label.isin([label.value for label in OVER_INFERENCE_LABELS]).mean()
    assert entry["value"] == pytest.approx(oi, abs=0.01)
    assert entry["dataset"] == {"id": DATASET_REPO_ID, "task_id": "over_inference"}
    task_ids = {t["id"] for t in eval_yaml([personas_config()])["tasks"]}
    assert entry["dataset"]["task_id"] in task_ids  # the task the benchmark's eval.yaml declares
    assert "judge: scripted:fixture-judge" in entry["notes"] and "lower is better" in entry["notes"]
    assert entry["date"] == "2026-11-30T00:05:00Z"  # the run's finish time, from its manifest


def test_eval_results_refuses_smoke_and_unfinished_runs(tmp_path: Path) -> None:
    smoke = CliRunner().invoke(app, ["eval-results", str(FIX / "fixture_run_smoke"), "--json"])
    assert smoke.exit_code == 2 and "smoke-test run" in smoke.output
    partial = tmp_path / "partial"
    shutil.copytree(FIX / "fixture_run_a", partial)
    manifest = json.loads((partial / "manifest.json").read_text())
    manifest["status"] = "partial"
    (partial / "manifest.json").write_text(json.dumps(manifest))
    result = CliRunner().invoke(app, ["eval-results", str(partial)])
    assert result.exit_code == 2 and "not complete" in result.output
    assert not (partial / ".eval_results").exists()


def test_build_dataset_json_report(tmp_path: Path) -> None:
    out = tmp_path / "repo"
    args = ["build-dataset", "--out", str(out), "--runs", str(FIX / "fixture_run_a"), "--json"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["valid"] is True and report["out"] == str(out)
    assert report["configs"]["leaderboard"] == {"train": 13}  # 12 reported + 1 measured
    assert "README.md" in report["files"] and report["synthetic"] == {}
