"""The ``mirage-bench`` command line.

Each area of the package registers its own commands from ``mirage_bench/commands/<area>.py``
(a ``register(app)`` function); heavy libraries are imported inside the commands, never here.
"""

from __future__ import annotations

import importlib

import typer

app = typer.Typer(
    name="mirage-bench",
    help="MirageBench: measure over-inference in personalized LLMs, browse and rank results.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,
)

#: Modules under ``mirage_bench.commands`` that add commands to :data:`app`.
COMMAND_MODULES: tuple[str, ...] = (
    "prompts", "personas", "engine", "dataset", "space", "reward",
    "leaderboard",
    "judges",
)

for _name in COMMAND_MODULES:
    _module = importlib.import_module(f"mirage_bench.commands.{_name}")
    _module.register(app)


@app.command()
def version() -> None:
    """Print the package version."""
    from mirage_bench import __version__

    typer.echo(__version__)


def main() -> None:
    """Console-script entry point."""
    app()


if __name__ == "__main__":
    main()
