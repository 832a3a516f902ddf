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
    rich_markup_mode="markdown",  # help paragraphs reflow to the terminal; indented examples stay code
)

#: Modules under ``mirage_bench.commands`` that add commands to :data:`app`.
COMMAND_MODULES: tuple[str, ...] = (
    "prompts", "personas", "engine", "dataset", "space", "reward",
    "leaderboard",
    "judges",
)



def _print_version(value: bool) -> None:
    if value:
        from mirage_bench import __version__

        typer.echo(__version__)
        raise typer.Exit()


@app.callback()
def _options(
    version: bool = typer.Option(
        False, "--version", callback=_print_version, is_eager=True, help="Print the package version and exit."
    ),
) -> None:
    """MirageBench: measure over-inference in personalized LLMs, browse and rank results."""


for _name in COMMAND_MODULES:
    _module = importlib.import_module(f"mirage_bench.commands.{_name}")
    _module.register(app)


@app.command()
def version() -> None:
    """Print the package version."""
    from mirage_bench import __version__

    typer.echo(__version__)


def main() -> None:
    """Console-script entry point (a missing optional extra ends in one line and exit code 2)."""
    from mirage_bench._extras import MissingExtraError

    try:
        app()
    except MissingExtraError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise SystemExit(2) from None


if __name__ == "__main__":
    main()
