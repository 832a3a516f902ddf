"""``mirage-bench report``: its Accum numbers are metrics.accumulation's; ``--tables`` prints Tables 4-10."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from mirage_bench.cli import app
from mirage_bench.instruments.launch import start_run
from mirage_bench.metrics.accumulation import accumulation_report
from mirage_bench.metrics.oi import model_task_table
from mirage_bench.runs import RunDir


@pytest.fixture(scope="module")
def simulated_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A simulated run (flagged smoke test) of 12 personas, two tasks, both Accum conditions."""
    out = tmp_path_factory.mktemp("report") / "run"
    run_dir, _ = start_run(model="scripted:simulate", judge="scripted:simulate", personas="12",
                           tasks="apartment,birthday_gift", stages="task,judge,accum", out=out,
                           progress=False)
    return run_dir


def test_report_accum_numbers_equal_metrics_accumulation(simulated_run: Path) -> None:
    result = CliRunner().invoke(app, ["report", str(simulated_run), "--json"])
    assert result.exit_code == 0, result.output
    accum = json.loads(result.output)["accum"]
    records = [a.model_dump(mode="json") for a in RunDir(simulated_run).read("accum")]
    expected = accumulation_report(records).set_index("condition")
    assert set(accum) == {"accum_update", "accum_update_prune_control"}
    for condition, row in accum.items():
        for key, column in (("removal_rate", "removal_rate"), ("accumulation_rate", "per_round"),
                            ("r_first", "r_first"), ("r_last", "r_last"), ("slope", "slope"), ("r2", "r2"),
                            ("growth", "growth")):
            assert row[key] == pytest.approx(float(expected.loc[condition, column])), (condition, key)
    # the simulated prune-permitting control removes entries; the G.7 prompt mostly keeps them
    assert accum["accum_update_prune_control"]["removal_rate"] > accum["accum_update"]["removal_rate"]


def test_report_prints_tables_4_and_8_per_condition(simulated_run: Path) -> None:
    result = CliRunner().invoke(app, ["report", str(simulated_run)], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "Tables 4 and 8" in result.output
    assert "G.7 prompt" in result.output and "prune control" in result.output


def test_report_tables_flag_prints_and_exports_the_paper_tables(simulated_run: Path) -> None:
    printed = CliRunner().invoke(app, ["report", str(simulated_run), "--tables"], env={"COLUMNS": "250"})
    assert printed.exit_code == 0, printed.output
    for title in ("Table 4", "Table 6", "Table 7", "Table 8", "Table 10", "SMOKE TEST"):
        assert title in printed.output
    exported = CliRunner().invoke(app, ["report", str(simulated_run), "--tables", "--json"])
    tables = json.loads(exported.output)["tables"]
    assert list(tables) == ["table4", "table6", "table7", "table8", "table10"]
    claims = pd.read_parquet(simulated_run / "claims.parquet")
    t10 = model_task_table(claims)
    row = next(r for r in tables["table10"] if r["model"] == "scripted:simulate")
    assert row["apartment_oi_pct"] == pytest.approx(t10.loc["scripted:simulate", "apartment"])
    assert tables["table6"][0]["positives"] == "above_median"
    ties = CliRunner().invoke(app, ["report", str(simulated_run), "--tables", "--json",
                                    "--median-ties", "positive"])
    assert json.loads(ties.output)["tables"]["table6"][0]["positives"] == "at_or_above_median"
    bad = CliRunner().invoke(app, ["report", str(simulated_run), "--tables", "--median-ties", "both"])
    assert bad.exit_code == 2 and "median_ties" in bad.output and "Traceback" not in bad.output
