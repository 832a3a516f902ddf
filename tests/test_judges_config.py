"""Judge configurations as data: loading, validation, and ``--judge-config`` on ``run`` / ``judge``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from mirage_bench.backends.scripted import ScriptedBackend
from mirage_bench.cli import app
from mirage_bench.instruments.launch import start_run
from mirage_bench.instruments.simulate import simulated_backend
from mirage_bench.judges.config import (
    JudgeConfigError,
    effective_judge_config,
    judges_dir,
    list_judge_configs,
    load_judge_config,
)
from mirage_bench.runs import RunDir, RunMismatchError
from tests.helpers_runs import scripted_run

runner = CliRunner()


def custom_config(tmp_path: Path, **changes: object) -> Path:
    data = yaml.safe_load((judges_dir() / "paper.yaml").read_text(encoding="utf-8"))
    data.update({"name": "custom", "spec": "scripted:simulate"}, **changes)
    path = tmp_path / "custom.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def test_paper_config_is_the_papers_judge() -> None:
    config = load_judge_config()  # the default
    assert config.name == "paper" and config.spec == "anthropic:claude-opus-4-7-20260610"  # Table 9
    assert config.temperature == 0.0  # G.9
    assert config.response_templates() == ("judge_system", "judge_user", "judge_output_format")
    assert {"paper", "local", "gpt-4o"} <= set(list_judge_configs())
    for name in list_judge_configs():
        assert load_judge_config(name).name == name


def test_invalid_configs_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(JudgeConfigError, match="temperature"):
        load_judge_config(custom_config(tmp_path, temperature=5))
    with pytest.raises(JudgeConfigError, match="Extra inputs"):
        load_judge_config(custom_config(tmp_path, temprature=0.0))
    with pytest.raises(JudgeConfigError, match="unknown model spec"):
        load_judge_config(custom_config(tmp_path, spec="gpt-4o"))
    with pytest.raises(JudgeConfigError, match="this role needs exactly"):
        load_judge_config(custom_config(tmp_path, prompts={"user": "probe"}))
    with pytest.raises(JudgeConfigError, match="no prompt template named"):
        load_judge_config(custom_config(tmp_path, claim_prompts={"system": "nope"}))
    with pytest.raises(JudgeConfigError, match="not found"):
        load_judge_config(tmp_path / "missing.yaml")  # a mistyped path is never read as a name


def test_sha256_follows_the_effective_settings(tmp_path: Path) -> None:
    paper = load_judge_config("paper")
    assert paper.sha256 == load_judge_config("paper").sha256
    assert effective_judge_config("paper", None).sha256 == paper.sha256
    assert effective_judge_config("paper", None, max_tokens=100).sha256 != paper.sha256
    assert effective_judge_config("paper", "scripted").sha256 != paper.sha256


def test_run_uses_the_configs_decoding_and_records_it(tmp_path: Path) -> None:
    path = custom_config(
        tmp_path, temperature=0.25, max_tokens=777, parse_attempts=2, structured_output="none"
    )
    seen = []
    sim = simulated_backend()

    async def judge_responder(messages, params):
        seen.append(params)
        return sim.responder(messages, params)

    run_dir, summary = start_run(
        model="scripted",
        judge_config=str(path),
        personas="1",
        tasks="apartment",
        out=tmp_path / "run",
        backends=(simulated_backend(), ScriptedBackend(judge_responder, smoke_test=True)),
    )
    assert seen and all(p.temperature == 0.25 and p.max_tokens == 777 and p.json_schema is None for p in seen)
    manifest = RunDir(run_dir).read_manifest()
    config = load_judge_config(path)
    assert manifest.judge == "scripted:simulate"
    assert manifest.judge_config == {"config": config.model_dump(mode="json"), "sha256": config.sha256}
    assert manifest.settings["judge_config_sha256"] == config.sha256
    assert manifest.settings["judge_max_tokens"] == 777
    # the same directory with another judge config is another run
    with pytest.raises(RunMismatchError, match="settings"):
        scripted_run(tmp_path / "run", judge_config="paper", judge="scripted:simulate", personas="1")


def test_cli_judge_config_on_run_and_judge(tmp_path: Path) -> None:
    path = custom_config(tmp_path)
    result = runner.invoke(
        app,
        [
            "run",
            "--model",
            "scripted",
            "--judge-config",
            str(path),
            "--personas",
            "1",
            "--tasks",
            "apartment",
            "--out",
            str(tmp_path / "r"),
            "--no-progress",
        ],
    )
    assert result.exit_code == 0, result.output
    assert RunDir(tmp_path / "r").read_manifest().judge_config["config"]["name"] == "custom"
    responses = tmp_path / "sub.jsonl"
    responses.write_text(
        json.dumps({"persona_id": "seed_001", "task_id": "apartment", "response": "Your flat has plants."})
        + "\n"
    )
    result = runner.invoke(
        app,
        [
            "judge",
            "--responses",
            str(responses),
            "--judge-config",
            str(path),
            "--out",
            str(tmp_path / "j"),
            "--no-progress",
        ],
    )
    assert result.exit_code == 0, result.output
    assert RunDir(tmp_path / "j").read_manifest().judge_config["sha256"] == load_judge_config(path).sha256
    for command in (["run", "--model", "scripted"], ["judge", "--responses", str(responses)]):
        bad = runner.invoke(app, [*command, "--judge-config", "typo.yaml", "--out", str(tmp_path / "x")])
        assert bad.exit_code == 2 and "judge config file 'typo.yaml' not found" in bad.output
    none = runner.invoke(app, ["judge", "--responses", str(responses), "--out", str(tmp_path / "y")])
    assert none.exit_code == 2 and "--judge-config" in none.output


def test_worker_row_names_its_judge_config(tmp_path: Path) -> None:
    import importlib.util

    from mirage_bench.leaderboard.store import Metadata, Status, SubmissionStore
    from mirage_bench.leaderboard.worker import Worker

    spec = importlib.util.spec_from_file_location(
        "space_helpers", Path(__file__).parent / "browser" / "helpers.py"
    )
    helpers = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(helpers)
    store = SubmissionStore(tmp_path / "store")
    responses = helpers.responses_file(tmp_path / "sub.jsonl")
    sid = store.submit_file(
        responses.read_bytes(), Metadata(model_name="fx/m", family="F", contact="a@x.org")
    ).submission_id
    path = custom_config(tmp_path)
    worker = Worker(tmp_path / "store", judge_config=str(path))
    assert worker.judge == "scripted:simulate"
    worker.serve(once=True)
    assert store.get(sid).status == Status.FINISHED
    row = json.loads((store.result_dir(sid) / "leaderboard_row.json").read_text())
    assert row["judge_config"] == "custom" and row["judge_config_sha256"] == load_judge_config(path).sha256
    bad = runner.invoke(
        app, ["worker", "--store", str(tmp_path / "store"), "--judge-config", "typo", "--once"]
    )
    assert bad.exit_code == 2 and "no bundled judge config named 'typo'" in bad.output


def test_a_board_row_from_a_run_directory_names_its_judge_config(tmp_path: Path) -> None:
    from mirage_bench.leaderboard.board import row_from_run_dir

    path = custom_config(tmp_path)
    run_dir, _ = start_run(
        model="scripted", judge_config=str(path), personas="1", tasks="apartment", out=tmp_path / "run"
    )
    row = row_from_run_dir(run_dir)
    assert row["judge_config"] == "custom" and row["judge_config_sha256"] == load_judge_config(path).sha256
