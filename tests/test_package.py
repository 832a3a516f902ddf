"""The package installs, its CLI answers, and its resource folders travel inside the wheel."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

from typer.testing import CliRunner

import mirage_bench
from mirage_bench.cli import app
from mirage_bench.paths import cards_dir, prompts_dir

ROOT = Path(__file__).resolve().parent.parent


def test_version_command_prints_package_version() -> None:
    result = CliRunner().invoke(app, ["version"])
    assert result.exit_code == 0
    assert result.stdout.strip() == mirage_bench.__version__


def test_help_lists_every_area() -> None:
    result = CliRunner().invoke(app, ["--help"])
    assert result.exit_code == 0
    for command in ("run", "judge", "report", "personas", "prompts", "build-dataset", "space", "reward"):
        assert command in result.stdout, command


def test_resource_folders_resolve_in_a_checkout() -> None:
    assert prompts_dir() == ROOT / "prompts"
    assert cards_dir() == ROOT / "cards"


def test_wheel_carries_prompts_cards_and_data(tmp_path: Path) -> None:
    """A non-editable install must still find prompts/ and cards/ (force-included in the wheel)."""
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path),
         str(ROOT)],
        check=True,
    )
    (wheel,) = tmp_path.glob("mirage_bench-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    prompts = {p.name for p in (ROOT / "prompts").glob("*.txt")}
    assert prompts, "no prompt templates in the checkout"
    for name in prompts:
        assert f"mirage_bench/_resources/prompts/{name}" in names
    assert "mirage_bench/data/personas.jsonl" in names
    assert any(n.startswith("mirage_bench/_resources/cards/") for n in names)
