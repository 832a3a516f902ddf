"""Helpers for the Space's browser and API tests: a served app on a free port, Chromium, polling.

Loaded by path from the test modules (``tests/`` is not a package).
"""

from __future__ import annotations

import json
import shutil
import socket
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "tests" / "artifacts"
FIXTURES = ROOT / "tests" / "fixtures" / "space"

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-quic",
    "--no-first-run",
    "--disable-component-update",
    "--disable-sync",
]

#: Strings that must never reach the annotator: the four label tokens and the fixture's hidden ids.
HIDDEN = (
    "GROUNDED",
    "INFERRED_REASONABLE",
    "INFERRED_STEREOTYPE",
    "FABRICATED",
    "fixture-hidden-model-q7z",
    "fixture-hidden-judge-k3w",
    "judge_label",
)


def free_port() -> int:
    """An unused TCP port on 127.0.0.1."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for(predicate: Callable[[], Any], timeout: float = 60.0, interval: float = 0.25) -> Any:
    """Poll ``predicate`` until it returns a truthy value; raise ``TimeoutError`` otherwise."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise TimeoutError(f"condition not met within {timeout} s")


def responses_file(path: Path, *, with_self_audit: bool = True) -> Path:
    """Write a complete responses file (every persona x task) for a fixture model."""
    from mirage_bench.personas import load_personas
    from mirage_bench.tasks import TASK_IDS

    lines = []
    for persona in load_personas():
        for task in TASK_IDS:
            rec: dict[str, Any] = {
                "persona_id": persona.persona_id,
                "task_id": task,
                "response": f"Since you said '{persona.revealed_facts[0]}', you surely love quiet evenings. "
                f"Your home is full of plants.",
            }
            if with_self_audit:
                rec["self_audit"] = {
                    "claims": [
                        {
                            "claim": "you love quiet evenings",
                            "category": "INFERRED_REASONABLE",
                            "reasoning": "r",
                        },
                        {"claim": "your home is full of plants", "category": "FABRICATED", "reasoning": "r"},
                    ]
                }
            lines.append(json.dumps(rec))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def new_store() -> Path:
    """A fresh submission store holding the fixture annotation sample."""
    root = Path(tempfile.mkdtemp(prefix="mirage-space-"))
    (root / "annotation" / "samples").mkdir(parents=True)
    shutil.copy(FIXTURES / "annotation_sample.jsonl", root / "annotation" / "samples" / "fixture.jsonl")
    return root


def chromium_path() -> str | None:
    """Debian's chromium binary, if installed."""
    return shutil.which("chromium") or shutil.which("chromium-browser")
