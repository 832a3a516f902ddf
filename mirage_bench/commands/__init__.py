"""CLI command groups, one module per area; each exposes ``register(app)``."""

from __future__ import annotations

import typer

__all__ = ["fail"]


def fail(exc: BaseException | str, code: int = 2) -> typer.Exit:
    """Print ``error: <exc>`` on stderr and return the ``typer.Exit(code)`` to raise (no traceback).

    Use as ``raise fail(exc) from exc``; 2 is a user mistake (bad input), 1 a failed operation.
    """
    typer.echo(f"error: {exc}", err=True)
    return typer.Exit(code)
