"""CLI command groups, one module per area; each exposes ``register(app)``."""

from __future__ import annotations

import typer

__all__ = ["command_group", "fail"]


def fail(exc: BaseException | str, code: int = 2) -> typer.Exit:
    """Print ``error: <exc>`` on stderr and return the ``typer.Exit(code)`` to raise (no traceback).

    Use as ``raise fail(exc) from exc``; 2 is a user mistake (bad input), 1 a failed operation.
    """
    typer.echo(f"error: {exc}", err=True)
    return typer.Exit(code)


def command_group(name: str, help: str) -> typer.Typer:
    """A sub-command group ``mirage-bench <name> ...`` that prints its help when called without one."""
    return typer.Typer(name=name, help=help, no_args_is_help=True)
