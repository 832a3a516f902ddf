"""Leaderboard table, Browse data, plots and the space CLI commands (no server)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from mirage_bench import browse
from mirage_bench.cli import app
from mirage_bench.leaderboard import board as lb
from mirage_bench.reported import PAPER_JUDGE, TABLE10_TASKS


def _claims(model: str, judge: str, labels: list[str], *, smoke: bool = False) -> pd.DataFrame:
    rows = []
    for i, label in enumerate(labels):
        rows.append(
            {
                "model": model,
                "judge": judge,
                "persona_id": f"p{i % 4}",
                "stereotype_type": ["stereotypical", "counter_stereotypical"][i % 2],
                "task_id": ["apartment", "birthday_gift"][i % 2],
                "claim_index": i,
                "claim": f"c{i}",
                "label": label,
                "accuracy": "UNVERIFIABLE",
                "reasoning": "",
                "judge_prompt_sha256": "x",
                "smoke_test": smoke,
            }
        )
    return pd.DataFrame(rows)


def _board(tmp_path: Path) -> pd.DataFrame:
    results = tmp_path / "results"
    specs = [
        ("m/real", "openai:judge-x", ["FABRICATED", "GROUNDED", "INFERRED_STEREOTYPE", "GROUNDED"], False),
        ("m/smoke", "local", ["GROUNDED"] * 4, True),
    ]
    for name, judge, labels, smoke in specs:
        row = lb.measured_row(
            _claims(name, judge, labels, smoke=smoke), meta=lb.RowMeta(model=name, family="F")
        )
        lb.write_row(results / name.replace("/", "_") / "leaderboard_row.json", row)
    return lb.load_board(tmp_path)


def test_an_unreadable_row_file_is_logged_not_silently_dropped(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    _board(tmp_path)
    torn = tmp_path / "results" / "m_torn" / "leaderboard_row.json"
    torn.parent.mkdir(parents=True)
    torn.write_text('{"model": "m/torn", "oi_pct"')
    with caplog.at_level("WARNING", logger="mirage_bench.leaderboard.board"):
        board = lb.load_board(tmp_path)
    assert "m/real" in set(board["model"]) and "m/torn" not in set(board["model"])
    assert torn.exists() and str(torn) in caplog.text and "not shown" in caplog.text


def test_a_run_dir_row_is_computed_once_per_change_of_its_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    _claims("m/run", "j", ["GROUNDED", "FABRICATED"]).to_parquet(run_dir / "claims.parquet")
    calls: list[Path] = []
    real = lb.row_from_run_dir
    monkeypatch.setattr(lb, "row_from_run_dir", lambda d: calls.append(d) or real(d))
    first = lb.load_board(None, [run_dir])
    again = lb.load_board(None, [run_dir])
    assert len(calls) == 1 and first.equals(again)
    _claims("m/run", "j", ["FABRICATED", "FABRICATED", "FABRICATED"]).to_parquet(run_dir / "claims.parquet")
    changed = lb.load_board(None, [run_dir])
    assert len(calls) == 2
    assert changed[changed["model"] == "m/run"]["oi_pct"].iloc[0] == pytest.approx(100.0)


def test_reported_rows_seed_the_board_under_the_paper_judge(tmp_path: Path) -> None:
    board = lb.load_board(tmp_path)
    assert len(board) == 12 and set(board["source"]) == {"reported"}
    view = lb.board_view(board, judge=PAPER_JUDGE)
    assert list(view["#"]) == [str(i) for i in range(1, 13)]
    assert view.iloc[0]["Model"] == "Qwen3-8B" and view.iloc[0]["OI %"] == "48.7"
    assert set(view["OI 95% CI"]) == {lb.NO_CI}  # the paper prints no per-model CI


def test_measured_row_numbers(tmp_path: Path) -> None:
    row = lb.measured_row(
        _claims("m", "j", ["FABRICATED", "GROUNDED", "INFERRED_STEREOTYPE", "GROUNDED"]),
        [{"self_audit": {"status": "ok", "claims": [{"category": "GROUNDED"}, {"category": "FABRICATED"}]}}],
    )
    assert row["oi_pct"] == pytest.approx(50.0) and row["claims"] == 4
    assert row["grounded_pct"] == pytest.approx(50.0)
    assert row["apartment_oi_pct"] == pytest.approx(100.0) and row["birthday_gift_oi_pct"] == pytest.approx(
        0.0
    )
    assert row["stereotype_delta_pp"] == pytest.approx(100.0)
    assert row["self_oi_pct"] == pytest.approx(50.0) and row["gap_pp"] == pytest.approx(0.0)
    assert row["pattern"] == "Calib."
    assert 0 <= row["oi_ci_low"] <= 50 <= row["oi_ci_high"] <= 100
    with pytest.raises(ValueError, match="exactly one judge"):
        lb.measured_row(pd.concat([_claims("m", "a", ["GROUNDED"]), _claims("m", "b", ["GROUNDED"])]))


def test_views_never_mix_judges_and_hide_smoke_tests(tmp_path: Path) -> None:
    board = _board(tmp_path)
    assert lb.judges(board) == [PAPER_JUDGE, "openai:judge-x"]
    assert "local" in lb.judges(board, include_smoke=True)
    view = lb.board_view(board, judge="openai:judge-x")
    assert list(view["Model"]) == ["m/real"] and view.iloc[0]["OI 95% CI"].startswith("[")
    assert lb.board_view(board, judge="local").empty
    smoke = lb.board_view(board, judge="local", show_smoke=True)
    assert list(smoke["Model"]) == [f"m/smoke {lb.SMOKE_BADGE}"] and list(smoke["#"]) == [""]


def test_search_filters_sort_and_columns(tmp_path: Path) -> None:
    board = lb.load_board(tmp_path)
    assert list(lb.board_view(board, judge=PAPER_JUDGE, search="qwen")["Model"]) == [
        "Qwen3-8B",
        "Qwen3.6-plus",
    ]
    assert set(lb.board_view(board, judge=PAPER_JUDGE, families=["OpenAI"])["Model"]) == {
        "GPT-5.5",
        "GPT-5.4-nano",
        "GPT-4o-mini",
    }
    assert lb.board_view(board, judge=PAPER_JUDGE, sources=["measured"]).empty
    by_self = lb.board_view(board, judge=PAPER_JUDGE, sort_by="Self-audit OI %", ascending=True)
    assert by_self.iloc[0]["Model"] == "Qwen3-8B" and by_self.iloc[-1]["Model"] == "Kimi-K2.5"
    per_task = lb.board_view(board, judge=PAPER_JUDGE, groups=["Per task"])
    assert "Apartment OI %" in per_task.columns and "Claims" not in per_task.columns


def test_browse_reads_judged_run_dirs(tmp_path: Path) -> None:
    run = tmp_path / "results" / "s1"
    run.mkdir(parents=True)
    (run / "responses.jsonl").write_text(
        json.dumps(
            {
                "persona_id": "seed_001",
                "task_id": "apartment",
                "response": "You love <b>climbing</b> and plants.",
            }
        )
        + "\n"
    )
    (run / "judgments.jsonl").write_text(
        json.dumps(
            {
                "model": "m",
                "judge": "j",
                "persona_id": "seed_001",
                "task_id": "apartment",
                "status": "ok",
                "claims": [
                    {"claim": "love <b>climbing</b>", "label": "GROUNDED", "reasoning": "fact 2"},
                    {"claim": "plants", "label": "FABRICATED", "reasoning": "nothing said"},
                ],
            }
        )
        + "\n"
    )
    dirs = browse.judged_run_dirs(tmp_path)
    items = browse.judged_responses(dirs, "apartment", labels=["FABRICATED"])
    assert len(items) == 1 and [c["claim"] for c in items[0]["claims"]] == ["plants"]
    html = browse.render_judged(browse.judged_responses(dirs, "apartment"))
    assert "<b>" not in html and "&lt;b&gt;climbing" in html and "nothing said" in html
    assert browse.judged_responses(dirs, "rec_letter") == []
    # a submission being judged: the worker's last line may be half-written when the Space reads it
    with (run / "judgments.jsonl").open("a") as fh:
        fh.write('{"model": "m", "judge": "j", "persona_id": "seed_002", "task_id": "apart')
    assert len(browse.judged_responses(dirs, "apartment")) == 1 and browse.models_in(dirs) == ["m"]


def test_reward_summary_from_a_scored_pair_set(tmp_path: Path) -> None:
    from mirage_bench import plots

    path = tmp_path / "set.jsonl"
    rows = [
        {"pair_id": str(i), "generator": "g", "p_memory": p, "human_prefers_memory": y, "strength": "much"}
        for i, (p, y) in enumerate([(0.9, True), (0.8, True), (0.2, False), (0.6, False)])
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    text, fig = plots.reward_summary(path)
    assert "accuracy 75.0%" in text and fig is not None and "SMOKE TEST" not in text
    smoke = tmp_path / "smoke_synthetic_direct_judge_vote.jsonl"
    smoke.write_text(path.read_text())
    text, fig = plots.reward_summary(smoke)
    assert text.startswith("**SMOKE TEST / SYNTHETIC set") and "accuracy 75.0%" in text


def test_reward_summary_of_a_bad_file_is_a_message_not_a_traceback(tmp_path: Path) -> None:
    from mirage_bench import plots

    path = tmp_path / "set.jsonl"
    good = {"pair_id": "a", "generator": "g", "p_memory": 0.7, "human_prefers_memory": True}
    good["strength"] = "much"
    path.write_text(json.dumps(good) + "\n" + json.dumps({**good, "pair_id": "b", "p_memory": None}) + "\n")
    text, fig = plots.reward_summary(path)
    assert fig is None and "is not a valid scored pair set" in text and "set.jsonl:2" in text
    path.write_text("{not json\n")
    text, fig = plots.reward_summary(path)
    assert fig is None and "set.jsonl:1" in text


def test_annotate_sample_command_writes_a_blind_sample(tmp_path: Path) -> None:
    from mirage_bench.personas import load_personas

    personas = [p.persona_id for p in load_personas()][:30]
    labels = ["GROUNDED", "INFERRED_REASONABLE", "INFERRED_STEREOTYPE", "FABRICATED"]
    rows = [
        {
            "model": f"m{i % 9}",
            "judge": "j",
            "persona_id": personas[i % 30],
            "stereotype_type": "neutral",
            "task_id": TABLE10_TASKS[i % 6],
            "claim_index": i,
            "claim": f"claim {i}",
            "label": labels[i % 4],
            "accuracy": "UNVERIFIABLE",
            "reasoning": "r",
            "judge_prompt_sha256": "x",
            "smoke_test": False,
        }
        for i in range(400)
    ]
    run = tmp_path / "run"
    run.mkdir()
    pd.DataFrame(rows).to_parquet(run / "claims.parquet")
    store = tmp_path / "store"
    args = [
        "annotate-sample",
        "--runs",
        str(run),
        "--store",
        str(store),
        "--per-class",
        "10",
        "--min-models",
        "2",
        "--min-tasks",
        "2",
        "--min-personas",
        "5",
    ]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    sample = [
        json.loads(x)
        for x in (store / "annotation" / "samples" / "validation.jsonl").read_text().splitlines()
    ]
    assert len(sample) == 40 and [s["position"] for s in sample] == list(range(40))
    assert {s["judge_label"] for s in sample} == set(labels)
    again = CliRunner().invoke(app, args)
    assert again.exit_code != 0 and "--force" in again.output
    assert "smoke-test" not in result.output
    # claims_from_runs keeps smoke-test claims when nothing else is there: the command must say so
    pd.DataFrame([{**r, "smoke_test": True} for r in rows]).to_parquet(run / "claims.parquet")
    smoke = CliRunner().invoke(app, [*args, "--force"])
    assert smoke.exit_code == 0, smoke.output
    assert "WARNING: these claims come only from smoke-test runs" in smoke.output


@pytest.mark.parametrize("command", ["space", "worker", "annotate-sample"])
def test_commands_have_help(command: str) -> None:
    result = CliRunner().invoke(app, [command, "--help"])
    assert result.exit_code == 0 and "--store" in result.output


def test_accum_curves_skip_smoke_test_records_unless_asked(tmp_path: Path) -> None:
    from mirage_bench import plots

    run = tmp_path / "run"
    run.mkdir()
    rounds = [{"round": r, "status": "ok", "n_stored": 5 + r, "n_inferred": r} for r in (1, 2)]
    base = {"persona_id": "p1", "stereotype_type": "neutral", "condition": "accum_update", "status": "ok",
            "initial_memory": {}, "rounds": rounds}
    records = [
        {**base, "model": "m/real", "smoke_test": False},
        {**base, "model": "local", "smoke_test": True},
        {**base, "model": "m/real", "condition": "accum_update_prune_control", "smoke_test": False},
    ]
    (run / "accum.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    curves = plots.accum_curves(None, [run])
    assert set(curves["model"]) == {"m/real"} and list(curves["attributes"]) == [1.0, 2.0]
    assert set(plots.accum_curves(None, [run], include_smoke=True)["model"]) == {"m/real", "local"}


def test_space_command_refuses_a_run_dir_that_cannot_make_a_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import space.app

    launched: list[object] = []
    monkeypatch.setattr(space.app, "launch", lambda config, **kw: launched.append(config))
    empty = tmp_path / "empty_run"
    empty.mkdir()
    _claims("m/x", "j", ["GROUNDED"]).iloc[:0].to_parquet(empty / "claims.parquet")
    result = CliRunner().invoke(app, ["space", "--runs", str(empty), "--no-worker"])
    assert result.exit_code == 2 and "no judged claims" in result.output and not launched
    good = tmp_path / "good_run"
    good.mkdir()
    _claims("m/x", "j", ["GROUNDED", "FABRICATED"]).to_parquet(good / "claims.parquet")
    result = CliRunner().invoke(app, ["space", "--runs", str(good), "--no-worker"])
    assert result.exit_code == 0, result.output
    assert len(launched) == 1


def test_space_command_on_a_busy_port_says_how_to_pick_another(tmp_path: Path) -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        result = CliRunner().invoke(app, ["space", "--port", str(port), "--store", str(tmp_path)])
    assert result.exit_code == 1
    assert "already in use" in result.output and "PORT=8080 make run" in result.output
    assert "Traceback" not in result.output and len(result.output.splitlines()) <= 3
