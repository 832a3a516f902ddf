"""``mirage-bench personas validate|show|list`` through typer's CliRunner.

The commands are mounted on a fresh Typer app via this area's ``register`` so the tests do not
depend on other areas' command modules; ``test_registered_in_main_cli`` checks the real wiring.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from mirage_bench.commands import personas as personas_commands
from mirage_bench.personas import DEFAULT_PERSONAS_PATH, load_personas

runner = CliRunner()


@pytest.fixture(scope="module")
def app() -> typer.Typer:
    app = typer.Typer()
    personas_commands.register(app)

    @app.callback()
    def _root() -> None:  # keeps "personas" a sub-command even when it is the only one
        """Test root."""

    return app


def _run(app: typer.Typer, *args: str):
    return runner.invoke(app, ["personas", *args], env={"COLUMNS": "200"})


def test_registered_in_main_cli() -> None:
    """The main CLI mounts this area (read from cli.py's source so other areas' modules are not imported)."""
    import ast

    import mirage_bench

    source = (Path(mirage_bench.__file__).parent / "cli.py").read_text(encoding="utf-8")
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.AnnAssign) and getattr(node.target, "id", None) == "COMMAND_MODULES":
            assert "personas" in ast.literal_eval(node.value)
            return
    pytest.fail("COMMAND_MODULES not found in mirage_bench/cli.py")


def test_validate_shipped_file(app: typer.Typer) -> None:
    result = _run(app, "validate")
    assert result.exit_code == 0, result.output
    assert "valid (150 personas)" in result.output
    assert re.search(r"all\s+.*150\s+.*8\s+.*142", result.output)


def test_validate_explicit_path(app: typer.Typer) -> None:
    result = _run(app, "validate", str(DEFAULT_PERSONAS_PATH))
    assert result.exit_code == 0, result.output


def test_validate_bad_file_lists_problems(app: typer.Typer, tmp_path: Path) -> None:
    personas = load_personas()
    personas[1].ground_truth["age"] = 90
    lines = [p.model_dump_json() for p in personas[:5]] + ["{broken"]
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = _run(app, "validate", str(path))
    assert result.exit_code == 1
    assert "bad.jsonl:6: not valid JSON" in result.output
    assert "seed_002: ground_truth.age 90 outside 18-75" in result.output
    assert "5 personas, expected exactly 150" in result.output


def test_validate_missing_file(app: typer.Typer, tmp_path: Path) -> None:
    result = _run(app, "validate", str(tmp_path / "nope.jsonl"))
    assert result.exit_code == 1
    assert "cannot read" in result.output


def test_show(app: typer.Typer) -> None:
    result = _run(app, "show", "seed_001")
    assert result.exit_code == 0, result.output
    assert "I work as a software engineer at a startup in Seattle." in result.output
    assert "Alex Chen" in result.output and "stereotypical" in result.output


def test_show_json(app: typer.Typer) -> None:
    result = _run(app, "show", "p_042", "--json")
    assert result.exit_code == 0, result.output
    record = json.loads(result.output)
    assert record["persona_id"] == "p_042"
    assert len(record["revealed_facts"]) == 3


def test_show_unknown_id(app: typer.Typer) -> None:
    result = _run(app, "show", "p_42")
    assert result.exit_code == 1
    assert "no persona 'p_42'" in result.output


def test_list_group(app: typer.Typer) -> None:
    result = _run(app, "list", "--group", "neutral")
    assert result.exit_code == 0, result.output
    ids = re.findall(r"\b(?:seed|p)_\d{3}\b", result.output)
    assert len(ids) == 50
    assert "counter_stereotypical" not in result.output


def test_list_unknown_group(app: typer.Typer) -> None:
    result = _run(app, "list", "--group", "weird")
    assert result.exit_code == 1
    assert "unknown group" in result.output
