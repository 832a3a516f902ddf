"""CLI command groups, one module per area; each exposes ``register(app)``."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

import typer

__all__ = [
    "EXIT_BACKEND_FATAL",
    "EXIT_BAD_INPUT",
    "EXIT_INTERRUPTED",
    "EXIT_TOO_MANY_FAILURES",
    "command_group",
    "fail",
    "load_each",
]

T = TypeVar("T")

#: Exit statuses of the commands (``run`` / ``judge`` / ``judge-claims`` / ``judges canary`` document
#: them in their ``--help`` and docs/engine.md): a user mistake, a failed operation (too many failed
#: calls), a backend that cannot serve at all, an interrupt.
EXIT_BAD_INPUT, EXIT_TOO_MANY_FAILURES, EXIT_BACKEND_FATAL, EXIT_INTERRUPTED = 2, 1, 3, 130


def fail(exc: BaseException | str, code: int = EXIT_BAD_INPUT) -> typer.Exit:
    """Print ``error: <exc>`` on stderr and return the ``typer.Exit(code)`` to raise (no traceback).

    Use as ``raise fail(exc) from exc``; 2 is a user mistake (bad input), 1 a failed operation.
    """
    typer.echo(f"error: {exc}", err=True)
    return typer.Exit(code)


def load_each(
    names: Iterable[str],
    load: Callable[[str], T],
    error: type[Exception] | tuple[type[Exception], ...],
    code: int = 2,
) -> list[tuple[str, T]]:
    """``(name, load(name))`` for every name, in order; the first ``error`` exits through :func:`fail`.

    For the ``list`` commands that show every bundled item (templates, judge configs): one broken
    file is reported as ``error: ...`` with exit status ``code``, never a traceback.
    """
    loaded: list[tuple[str, T]] = []
    for name in names:
        try:
            loaded.append((name, load(name)))
        except error as exc:
            raise fail(exc, code) from exc
    return loaded


def command_group(name: str, help: str) -> typer.Typer:
    """A sub-command group ``mirage-bench <name> ...`` that prints its help when called without one."""
    return typer.Typer(name=name, help=help, no_args_is_help=True)
