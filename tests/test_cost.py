"""Cost before spending: ``run --dry-run`` sends nothing; a run's manifest has tokens and cost per stage."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from mirage_bench.cli import app
from mirage_bench.cost import count_tokens, estimate_run, load_price_table, lookup_price
from mirage_bench.runs import RunDir
from tests.helpers_runs import scripted_run
from tests.openai_fixtures import openai_server  # noqa: F401
from tests.openai_server import FakeOpenAIServer

runner = CliRunner()


def test_price_table_is_dated_data() -> None:
    table = load_price_table()
    assert table["as_of"] and table["sources"]["openai"].startswith("https://")
    assert lookup_price("openai:gpt-4o-2024-08-06") == lookup_price("openai:gpt-4o") == (2.5, 10.0)
    assert lookup_price("openai:gpt-4o-mini@http://127.0.0.1:1/v1") == (0.15, 0.6)
    assert lookup_price("openai:gpt-4o-realtime") is None  # not a snapshot suffix: no guess
    assert lookup_price("local") == (0.0, 0.0)


def test_dry_run_against_a_local_server_sends_nothing(
    openai_server: FakeOpenAIServer,  # noqa: F811
    tmp_path: Path,
) -> None:
    spec = f"openai:gpt-4o-mini@{openai_server.base_url}"
    out = tmp_path / "run"
    result = runner.invoke(
        app,
        [
            "run",
            "--model",
            spec,
            "--judge",
            spec,
            "--personas",
            "2",
            "--tasks",
            "apartment,rec_letter",
            "--stages",
            "task,judge,probe",
            "--out",
            str(out),
            "--dry-run",
        ],
    )
    assert result.exit_code == 0, result.output
    assert openai_server.requests == []
    assert not out.exists()  # nothing written either
    text = result.output
    assert "DRY RUN - nothing sent" in text
    for stage, calls in (("task", 4), ("self_audit", 4), ("judge", 4), ("probe", 2), ("probe_judge", 2)):
        assert any(
            line.split()[:3]
            == [stage, "model" if stage in ("task", "self_audit", "probe") else "judge", str(calls)]
            for line in text.splitlines()
        ), stage
    assert "estimate: ceil(characters / 4)" in text or "tiktoken" in text
    assert "as of " + str(load_price_table()["as_of"]) in text
    assert "cost at most $" in text


def test_estimate_counts_the_rendered_prompts() -> None:
    from mirage_bench.instruments.pipeline import select_personas
    from mirage_bench.instruments.task import task_messages
    from mirage_bench.judges.config import load_judge_config
    from mirage_bench.tasks import get_task

    personas = select_personas("1")
    estimate = estimate_run(
        model="anthropic:claude-sonnet-4-20250514",
        judge_config=load_judge_config("paper"),
        personas=personas,
        task_ids=["apartment"],
        stages=["task", "judge"],
        max_tokens=100,
        audit_max_tokens=200,
    )
    by = {r["stage"]: r for r in estimate["stages"]}
    expected = sum(count_tokens(m.content) for m in task_messages(personas[0], get_task("apartment")))
    assert by["task"]["input_tokens"] == by["task"]["input_tokens_max"] == expected
    assert by["task"]["output_tokens_max"] == 100 and by["self_audit"]["output_tokens_max"] == 200
    assert by["self_audit"]["input_tokens_max"] == by["self_audit"]["input_tokens"] + 200
    assert by["judge"]["output_tokens_max"] == 4096  # the paper config's cap
    assert by["task"]["cost_max_usd"] == (expected * 3.0 + 100 * 15.0) / 1e6
    assert by["judge"]["cost_max_usd"] is None and estimate["cost_max_usd"] is None  # no price for the judge


def test_manifest_records_tokens_and_cost_per_stage(tmp_path: Path) -> None:
    run = dict(personas="2", stages="task,judge,probe,accum", model_price=(1.0, 2.0), judge_price=(3.0, 4.0))
    run_dir, _ = scripted_run(tmp_path / "run", **run)
    manifest = RunDir(run_dir).read_manifest()
    stages = manifest.usage_by_stage
    assert set(stages) >= {"task", "self_audit", "judge", "probe", "probe_judge"}
    for role, names in (
        ("model", ("task", "self_audit", "probe", "accum")),
        ("judge", ("judge", "probe_judge", "accum_retraction_judge")),
    ):
        for key in ("input_tokens", "output_tokens"):
            assert sum(stages[n][key] for n in names if n in stages) == manifest.usage[role][key], (role, key)
    for name, u in stages.items():
        price = (3.0, 4.0) if name in ("judge", "probe_judge", "accum_retraction_judge") else (1.0, 2.0)
        assert manifest.cost_by_stage_usd[name] == round(
            (u["input_tokens"] * price[0] + u["output_tokens"] * price[1]) / 1e6, 6
        )
        assert u["input_tokens"] > 0
    before = json.loads((Path(run_dir) / "manifest.json").read_text())["usage_by_stage"]
    scripted_run(tmp_path / "run", **run)  # resume: nothing left to do, totals unchanged
    after = RunDir(run_dir).read_manifest().usage_by_stage
    assert {k: (v["input_tokens"], v["output_tokens"]) for k, v in after.items()} == {
        k: (v["input_tokens"], v["output_tokens"]) for k, v in before.items()
    }


def test_estimate_counts_the_accum_retraction_judge() -> None:
    """With a judge, Accum adds one retraction-judge call per planted contradiction and condition."""
    from mirage_bench.instruments.accum import ACCUM_CONDITIONS
    from mirage_bench.instruments.accum.scripts import load_accum_scripts
    from mirage_bench.instruments.pipeline import select_personas
    from mirage_bench.judges.config import load_judge_config

    scripts = load_accum_scripts()
    personas = select_personas("seed_001,seed_002")
    planted = sum(len(s.contradictions) for s in scripts if s.persona_id in {"seed_001", "seed_002"})
    kwargs = dict(
        model="scripted", personas=personas, task_ids=["apartment"], stages=["accum"],
        max_tokens=100, audit_max_tokens=200, accum_scripts=scripts,
    )
    by = {r["stage"]: r for r in estimate_run(judge_config=load_judge_config("paper"), **kwargs)["stages"]}
    assert planted > 0
    assert by["accum_retraction_judge"]["calls"] == planted * len(ACCUM_CONDITIONS)
    assert by["accum_retraction_judge"]["role"] == "judge"
    assert by["accum_retraction_judge"]["output_tokens_max"] == planted * len(ACCUM_CONDITIONS) * 4096
    without = {r["stage"] for r in estimate_run(judge_config=None, **kwargs)["stages"]}
    assert "accum_retraction_judge" not in without
