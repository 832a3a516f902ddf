"""The drift canary and the Judges view: reference labels, first-use runs, drift flags, validation status."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

from typer.testing import CliRunner

from mirage_bench.cli import app
from mirage_bench.judges.canary import build_canary, canary_history, drift, load_canary, run_canary
from mirage_bench.judges.config import load_judge_config
from mirage_bench.judges.overview import NOT_VALIDATED, canary_table, judges_overview, validation_note
from mirage_bench.leaderboard.board import load_board
from mirage_bench.leaderboard.store import Metadata, SubmissionStore
from mirage_bench.leaderboard.worker import Worker
from mirage_bench.reported import PAPER_JUDGE

_spec = importlib.util.spec_from_file_location(
    "space_helpers", Path(__file__).parent / "browser" / "helpers.py"
)
helpers = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(helpers)
runner = CliRunner()


def _submit(root: Path, tmp_path: Path, name: str) -> str:
    path = helpers.responses_file(tmp_path / f"{name.replace('/', '_')}.jsonl")
    return (
        SubmissionStore(root)
        .submit_file(path.read_bytes(), Metadata(model_name=name, family="Fixture", contact="a@x.org"))
        .submission_id
    )


def test_worker_runs_the_canary_on_first_use_only(tmp_path: Path) -> None:
    root = tmp_path / "store"
    _submit(root, tmp_path, "fx/one")
    worker = Worker(root, judge="scripted", canary=True)
    worker.serve(once=True)
    canary, meta = load_canary(root)
    assert canary and "first to rank the board" in meta["reference_source"]
    assert meta["reference_smoke_test"] and not meta["reference_is_human"]
    history = canary_history(root)
    assert len(history) == 1 and history[0]["reason"].startswith("first use")
    assert history[0]["judge_config"] == "paper" and history[0]["spec"] == "scripted"
    assert history[0]["scored"] == len(canary) and history[0]["kappa_ci"]
    assert history[0]["date"][:4].isdigit()
    _submit(root, tmp_path, "fx/two")
    Worker(root, judge="scripted", canary=True).serve(once=True)
    assert len(canary_history(root)) == 1  # same config and snapshot: no new canary run
    # a smoke-test judge runs no canary unless asked (canary=None: only real judges)
    _submit(root, tmp_path, "fx/three")
    Worker(root, judge="scripted", judge_config="local").serve(once=True)
    assert len(canary_history(root)) == 1


def test_canary_on_request_and_the_judges_view(tmp_path: Path) -> None:
    root = tmp_path / "store"
    _submit(root, tmp_path, "fx/one")
    Worker(root, judge="scripted").serve(once=True)  # smoke judge: no automatic canary
    assert canary_history(root) == []
    result = runner.invoke(
        app, ["judges", "canary", "--store", str(root), "--judge-config", "paper", "--judge", "scripted"]
    )
    assert result.exit_code == 0, result.output
    assert "canary:" in result.output and "kappa" in result.output and "drift: none" in result.output
    result = runner.invoke(
        app, ["judges", "canary", "--store", str(root), "--judge-config", "local", "--judge", "scripted"]
    )
    assert result.exit_code == 0, result.output
    history = runner.invoke(app, ["judges", "history", "--store", str(root), "--json"])
    records = json.loads(history.output)
    assert [r["judge_config"] for r in records] == ["paper", "local"]

    board = load_board(root)
    overview = judges_overview(root, board, n_resamples=50).set_index("judge")
    assert overview.loc["scripted", "validation"] == NOT_VALIDATED
    assert overview.loc["scripted", "canary (last)"].startswith(records[-1]["date"][:10])
    assert "(n=" in overview.loc["scripted", "vs paper judge kappa (n)"]  # local vs paper on the canary
    assert "reported" in overview.loc[PAPER_JUDGE, "human kappa [95% CI] (n)"]
    assert "0.863" in overview.loc[PAPER_JUDGE, "human kappa [95% CI] (n)"]
    assert NOT_VALIDATED in validation_note(root, board, "scripted")
    assert len(canary_table(root)) == 2


def test_human_labels_are_the_reference_and_validate_a_judge(tmp_path: Path) -> None:
    from mirage_bench.judges import annotation_records

    load_validation_sample = annotation_records().load_validation_sample

    root = tmp_path / "store"
    store = SubmissionStore(root)
    sample = helpers.FIXTURES / "annotation_sample.jsonl"
    items = load_validation_sample([sample])
    # the sample's claims were judged by "scripted" (so that judge has human validation)
    lines = [json.loads(x) for x in sample.read_text().splitlines()]
    store.sample_path("s").write_text("".join(json.dumps({**r, "judge": "scripted"}) + "\n" for r in lines))
    from mirage_bench.types import LABELS

    for annotator in ("ann1", "ann2"):
        path = store.labels_path("s", annotator)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            "".join(
                json.dumps({"item_id": i.item_id, "human_label": LABELS[n % 4].value}) + "\n"
                for n, i in enumerate(items)
            )
        )
    rows, meta = build_canary(root, per_class=5)
    assert meta["reference_is_human"] and "2 annotator(s)" in meta["reference_source"]
    assert {r["reference_label"] for r in rows} == {label.value for label in LABELS[: len(items)]}
    record = run_canary(root, load_judge_config("paper").with_spec("scripted"), n_resamples=50)
    assert record["reference_is_human"] and record["scored"] == len(rows)
    _submit(root, tmp_path, "fx/one")
    Worker(root, judge="scripted").serve(once=True)
    overview = judges_overview(root, load_board(root), n_resamples=50).set_index("judge")
    assert overview.loc["scripted", "validation"] == f"validated against human labels (n={2 * len(items)})"


def test_drift_flags_a_kappa_drop_and_a_snapshot_change() -> None:
    base = {"judge_config": "paper", "kappa": 0.86, "kappa_ci": [0.82, 0.90], "reported_snapshots": ["s1"]}
    history = [
        base,
        {**base, "kappa": 0.85},
        {**base, "kappa": 0.70, "reported_snapshots": ["s2"]},
        {**base, "judge_config": "other", "kappa": 0.1},
    ]
    flags = [r["drift"] for r in drift(history)]
    assert flags[0] == [] and flags[1] == [] and flags[3] == []
    assert any("below the previous run's CI" in f for f in flags[2])
    assert any("snapshot changed: s1 -> s2" in f for f in flags[2])


def test_space_has_a_judges_tab_and_the_board_names_validation(tmp_path: Path) -> None:
    from space.app import SpaceConfig, build_app, build_context

    root = tmp_path / "store"
    _submit(root, tmp_path, "fx/one")
    Worker(root, judge="scripted").serve(once=True)
    ctx = build_context(SpaceConfig(store_root=root))
    demo = build_app(context=ctx)
    ui = {b.elem_id: b for b in demo.blocks.values() if getattr(b, "elem_id", None)}
    assert {"judges-table", "judges-canary", "lb-judge-note"} <= set(ui)
    assert "validated in the paper (reported" in ui["lb-judge-note"].value  # the paper judge is shown first
    loaded = {tuple(b.elem_id for b in outputs): fn for fn, outputs in ctx.loaders}
    overview, history = loaded[("judges-table", "judges-canary")]()
    assert {PAPER_JUDGE, "scripted"} <= set(overview["judge"]) and history.empty
    scripted = overview.set_index("judge").loc["scripted"]
    assert scripted["validation"] == NOT_VALIDATED and bool(scripted["smoke test"])
    assert scripted["canary (last)"] == "never run"


def test_a_silent_provider_snapshot_change_triggers_the_canary_and_is_flagged(tmp_path: Path) -> None:
    """Same spec, same config: the provider starts answering from another snapshot (Completion.model)."""
    from mirage_bench.backends.base import Completion
    from mirage_bench.backends.scripted import ScriptedBackend
    from mirage_bench.instruments.simulate import SimulatedResponder

    sim, current = SimulatedResponder(), {"snapshot": "judge-2026-01"}

    def responder(messages, params):
        return Completion(text=sim(messages, params), model=current["snapshot"])

    root = tmp_path / "store"
    worker = Worker(root, judge="scripted", canary=True)
    worker._backend = ScriptedBackend(responder, snapshot="judge-alias")
    _submit(root, tmp_path, "fx/one")
    worker.serve(once=True)
    assert [h["reported_snapshots"] for h in canary_history(root)] == [["judge-2026-01"]]
    _submit(root, tmp_path, "fx/two")
    worker.serve(once=True)
    assert len(canary_history(root)) == 1  # nothing changed: no new canary
    current["snapshot"] = "judge-2026-02"  # the alias now points at another snapshot
    _submit(root, tmp_path, "fx/three")
    worker.serve(once=True)
    history = drift(canary_history(root))
    assert len(history) == 2 and "judge-2026-02" in history[1]["reason"]
    assert any("snapshot changed: judge-2026-01 -> judge-2026-02" in f for f in history[1]["drift"])
