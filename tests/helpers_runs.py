"""Run helpers shared by the tests: the CLI in a subprocess and a scripted in-process run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from mirage_bench.instruments.launch import start_run

CLI = [sys.executable, "-m", "mirage_bench.cli"]


def cli_process(
    args: list[str], *, cwd: Path, env: dict[str, str], stderr: Any = subprocess.DEVNULL
) -> subprocess.Popen:
    """``python -m mirage_bench.cli ARGS`` started in the background, its stdout discarded."""
    return subprocess.Popen([*CLI, *args], cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=stderr)


def scripted_run(out: Path, **options: Any) -> tuple[Path, dict[str, Any]]:
    """:func:`start_run` of the scripted model and judge on the apartment task into ``out``."""
    defaults: dict[str, Any] = {"model": "scripted", "judge": "scripted", "tasks": "apartment", "out": out}
    return start_run(**{**defaults, **options})
