"""CLI commands of the space area (filled in by the issue that owns this area)."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Add this area's commands to the top-level app."""
