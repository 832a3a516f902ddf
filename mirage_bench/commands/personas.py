"""CLI commands of the personas area: ``mirage-bench personas validate|show|list``."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Annotated

import typer

from mirage_bench.commands import command_group

personas_app = command_group("personas", "Inspect and validate the 150 benchmark personas.")

_PathArg = Annotated[
    Path | None,
    typer.Argument(help="Persona JSONL file (default: the shipped mirage_bench/data/personas.jsonl)."),
]
_PathOpt = Annotated[
    Path | None,
    typer.Option("--path", help="Persona JSONL file (default: the shipped personas.jsonl)."),
]


def _console():  # rich is a core dependency; imported lazily to keep CLI start-up light
    from rich.console import Console

    return Console()


@personas_app.command("validate")
def validate(path: _PathArg = None) -> None:
    """Check a persona file against every rule of issue 2 §3; exit 1 and list the problems if any.

    Example:

        mirage-bench personas validate my_personas.jsonl
    """
    from rich.table import Table

    from mirage_bench.personas import DEFAULT_PERSONAS_PATH, read_personas_file, validate_personas

    target = path or DEFAULT_PERSONAS_PATH
    console = _console()
    try:
        personas, problems = read_personas_file(target)
    except (FileNotFoundError, IsADirectoryError, UnicodeDecodeError) as exc:
        console.print(f"[red]cannot read {target}: {exc}[/red]")
        raise typer.Exit(1) from None
    problems += validate_personas(personas)
    if problems:
        console.print(f"[red]{target}: {len(problems)} problem(s)[/red]")
        for problem in problems:
            console.print(f"  - {problem}", markup=False, highlight=False)
        raise typer.Exit(1)

    table = Table(title=f"{target.name}: valid ({len(personas)} personas)")
    table.add_column("group")
    for column in ("n", "seed", "authored", "generated", "occupations", "ages", "F", "M", "other"):
        table.add_column(column, justify="right")
    groups = sorted({p.stereotype_type for p in personas}) + ["all"]
    for group in groups:
        members = [p for p in personas if group in ("all", p.stereotype_type)]
        sources = Counter(p.source for p in members)
        genders = Counter(str(p.ground_truth["gender"]).casefold() for p in members)
        ages = [int(p.ground_truth["age"]) for p in members]
        table.add_row(
            group,
            str(len(members)),
            str(sources["seed"]),
            str(sources["authored"]),
            str(sources["generated"]),
            str(len({str(p.ground_truth["occupation"]).casefold() for p in members})),
            f"{min(ages)}-{max(ages)}",
            str(genders["female"]),
            str(genders["male"]),
            str(len(members) - genders["female"] - genders["male"]),
        )
    console.print(table)
    cities = {str(p.ground_truth["city"]) for p in personas}
    living = {str(p.ground_truth["living_situation"]) for p in personas}
    console.print(f"{len(cities)} distinct cities, {len(living)} distinct living situations.")


@personas_app.command("show")
def show(
    persona_id: Annotated[str, typer.Argument(help="Persona id, e.g. seed_001 or p_042.")],
    path: _PathOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the raw JSON record.")] = False,
) -> None:
    """Show one persona: its revealed facts and its hidden ground-truth profile.

    Example:

        mirage-bench personas show seed_001 --json
    """
    from rich.table import Table

    from mirage_bench.personas import PersonaFileError, get_persona

    console = _console()
    try:
        persona = get_persona(persona_id, path)
    except KeyError as exc:
        console.print(f"[red]{exc.args[0]}[/red]")
        raise typer.Exit(1) from None
    except (FileNotFoundError, PersonaFileError) as exc:
        console.print(f"[red]{exc}[/red]", markup=False)
        raise typer.Exit(1) from None
    if as_json:
        typer.echo(persona.model_dump_json(indent=2))
        return
    console.print(f"[bold]{persona.persona_id}[/bold]  {persona.stereotype_type}  (source: {persona.source})")
    console.print("[bold]Revealed facts[/bold] (all the model sees):")
    for i, fact in enumerate(persona.revealed_facts, start=1):
        console.print(f"  {i}. {fact}", markup=False, highlight=False)
    table = Table(title="Ground truth (hidden from the model; used by the judge's accuracy check)")
    table.add_column("attribute")
    table.add_column("value")
    for key, value in persona.ground_truth.items():
        table.add_row(key, ", ".join(value) if isinstance(value, list) else str(value))
    console.print(table)


@personas_app.command("list")
def list_personas(
    group: Annotated[
        str | None,
        typer.Option(help="Only this stereotype group: stereotypical, counter_stereotypical or neutral."),
    ] = None,
    path: _PathOpt = None,
) -> None:
    """List personas (id, group, name, age, occupation, city).

    Example:

        mirage-bench personas list --group neutral
    """
    from rich.table import Table

    from mirage_bench.personas import PersonaFileError, load_personas
    from mirage_bench.types import STEREOTYPE_TYPES

    console = _console()
    if group is not None and group not in STEREOTYPE_TYPES:
        console.print(f"[red]unknown group {group!r}; choose one of {', '.join(STEREOTYPE_TYPES)}[/red]")
        raise typer.Exit(1)
    try:
        personas = load_personas(path)
    except (FileNotFoundError, PersonaFileError) as exc:
        console.print(f"[red]{exc}[/red]", markup=False)
        raise typer.Exit(1) from None
    table = Table()
    for column in ("id", "group", "name", "age", "occupation", "city"):
        table.add_column(column)
    for p in personas:
        if group is None or p.stereotype_type == group:
            gt = p.ground_truth
            table.add_row(
                p.persona_id,
                p.stereotype_type,
                str(gt["name"]),
                str(gt["age"]),
                str(gt["occupation"]),
                str(gt["city"]),
            )
    console.print(table)


def register(app: typer.Typer) -> None:
    """Add this area's commands (``mirage-bench personas ...``) to the top-level app."""
    app.add_typer(personas_app, name="personas")
