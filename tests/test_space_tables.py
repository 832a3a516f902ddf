"""The Space's Paper tables tab: measured Tables 4-10 beside the reported ones (no browser)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from mirage_bench.instruments.launch import start_run
from mirage_bench.leaderboard.store import SubmissionStore
from mirage_bench.metrics.tables import run_tables
from mirage_bench.paper_tables import SMOKE_MARK, load_records, measured_tables, side_by_side
from mirage_bench.reported import PAPER_JUDGE, load_reported
from space.tabs_board import Context
from space.tabs_tables import tables_view


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("tables") / "run"
    path, _ = start_run(model="scripted:simulate", judge="scripted:simulate", personas="9",
                        tasks="apartment,stress_source", stages="task,judge,accum", out=out, progress=False)
    return path


@pytest.fixture()
def ctx(run_dir: Path, tmp_path: Path) -> Context:
    return Context(store=SubmissionStore(tmp_path / "store"), run_dirs=[run_dir], judge="scripted")


def test_smoke_rows_are_hidden_unless_asked_and_then_flagged(ctx: Context, run_dir: Path) -> None:
    frame, note = tables_view(ctx, "table10", "scripted:simulate")
    assert set(frame.source) == {"reported"} and "No measured rows" in note
    frame, note = tables_view(ctx, "table10", "scripted:simulate", smoke=True)
    measured = frame[frame.source == "measured"]
    assert f"scripted:simulate {SMOKE_MARK}" in set(measured.model) and SMOKE_MARK in note
    assert len(frame[frame.source == "reported"]) == len(load_reported("table10"))


def test_smoke_records_of_every_kind_are_left_out_unless_asked(run_dir: Path) -> None:
    """Claims, responses and Accum records of a smoke-test run: none without ``include_smoke``."""
    hidden = load_records(None, [run_dir])
    assert hidden.claims.empty and hidden.responses == [] and hidden.accum == []
    shown = load_records(None, [run_dir], include_smoke=True)
    assert shown.responses and all(r["model"].endswith(SMOKE_MARK) for r in shown.responses)


def test_a_line_that_is_not_an_object_is_skipped(run_dir: Path, tmp_path: Path) -> None:
    """A run folder whose JSONL holds a non-object line (a list, a number) still loads."""
    import shutil

    copy = tmp_path / "run"
    shutil.copytree(run_dir, copy)
    for name in ("responses.jsonl", "accum.jsonl"):
        with (copy / name).open("a", encoding="utf-8") as handle:
            handle.write("[1, 2]\n7\n")
    records = load_records(None, [copy], include_smoke=True)
    assert len(records.responses) == len(load_records(None, [run_dir], include_smoke=True).responses)


def test_measured_rows_equal_the_metrics_tables(ctx: Context, run_dir: Path) -> None:
    records = load_records(None, [run_dir], include_smoke=True)
    tables = measured_tables(records, "scripted:simulate")
    claims = pd.read_parquet(run_dir / "claims.parquet")
    assert len(records.claims) == len(claims)
    direct = run_tables(records.claims, records.responses, records.accum)
    for name in ("table4", "table6", "table7", "table8", "table10"):
        assert len(direct[name]) > 0
        pd.testing.assert_frame_equal(tables[name].drop(columns=["source", "judge"]), direct[name])
    assert tables["table6"].n_records.iloc[0] == claims.groupby(["persona_id", "task_id"]).ngroups
    # Accum tables have no judge: shown for any judge; judged tables only for their judge
    other = measured_tables(records, PAPER_JUDGE)
    assert {"table4", "table8"} <= set(other) and "table10" not in other
    t8 = side_by_side("table8", tables)
    assert set(t8[t8.source == "measured"].condition) == {"accum_update", "accum_update_prune_control"}
    assert set(t8[t8.source == "reported"].condition) == {"accum_update"}


def test_table6_reports_its_median_convention(ctx: Context) -> None:
    strict, _ = tables_view(ctx, "table6", "scripted:simulate", smoke=True, show_reported=False)
    ties, _ = tables_view(ctx, "table6", "scripted:simulate", smoke=True, show_reported=False,
                          median_ties="positive")
    assert list(strict.positives) == ["above_median"] and list(ties.positives) == ["at_or_above_median"]


def test_app_has_the_tab() -> None:
    from space.app import TABS

    assert ("Paper tables", "tables") in [(t, i) for t, i, _ in TABS]
