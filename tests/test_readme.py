"""The README stays true to the code: its commands exist and its Python example prints what it says."""

from __future__ import annotations

import ast
import re
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mirage_bench.cli import app

README = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", README, flags=re.S)


def _cli_invocations() -> list[list[str]]:
    """Every ``mirage-bench`` command line in the README's bash blocks, as its subcommand words."""
    found = []
    for block in _blocks("bash"):
        for line in block.replace("\\\n", " ").splitlines():
            line = line.split("#", 1)[0].strip()
            if not line.startswith("mirage-bench "):
                continue
            words = []
            for word in shlex.split(line)[1:]:
                if word.startswith("-") or "/" in word or "<" in word or word.isupper():
                    break
                words.append(word)
            found.append(words)
    return found


def test_readme_quick_start_is_exactly_two_commands() -> None:
    quick = README.split("## Quick start", 1)[1].split("##", 1)[0]
    (block,) = re.findall(r"```bash\n(.*?)```", quick, flags=re.S)
    commands = [line.split("#", 1)[0].strip() for line in block.splitlines() if line.split("#", 1)[0].strip()]
    assert commands == ["make run", "make test"]


@pytest.mark.parametrize("words", _cli_invocations(), ids=lambda w: " ".join(w))
def test_every_readme_command_exists(words: list[str]) -> None:
    result = CliRunner().invoke(app, [*words, "--help"])
    assert result.exit_code == 0, result.output


def test_readme_metric_example_prints_what_it_claims(capsys: pytest.CaptureFixture[str]) -> None:
    block = next(b for b in _blocks("python") if "over_inference" in b)
    lines = block.splitlines()
    call = next(i for i, line in enumerate(lines) if line.startswith("oi.compute("))
    expected = ast.literal_eval(lines[call + 1].lstrip("# "))
    namespace: dict[str, object] = {}
    exec("\n".join(lines[: call + 1]).replace("oi.compute(", "result = oi.compute(", 1), namespace)
    assert namespace["result"] == pytest.approx(expected)
