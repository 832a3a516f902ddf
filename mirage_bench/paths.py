"""Locate the project's resource folders (``prompts/``, ``cards/``) and bundled data.

In a source checkout (or an editable install) the folders sit at the repository root; a
non-editable ``pip install .`` force-includes them under ``mirage_bench/_resources/``.
"""

from __future__ import annotations

from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
DATA_DIR = PACKAGE_DIR / "data"


def resource_dir(name: str) -> Path:
    """Return the directory of resource ``name`` (``"prompts"`` or ``"cards"``).

    Raises ``FileNotFoundError`` if neither the installed nor the source location exists.
    """
    for candidate in (PACKAGE_DIR / "_resources" / name, PACKAGE_DIR.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"resource folder {name!r} not found next to {PACKAGE_DIR}")


def prompts_dir() -> Path:
    """The folder of plain-text prompt templates."""
    return resource_dir("prompts")


def cards_dir() -> Path:
    """The folder of card templates (dataset, Space, metrics)."""
    return resource_dir("cards")
