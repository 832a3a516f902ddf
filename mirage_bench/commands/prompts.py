"""CLI commands of the prompts area.

``mirage-bench prompts list`` / ``mirage-bench prompts show NAME`` (the templates) and
``mirage-bench accum-scripts validate`` / ``mirage-bench accum-scripts show PERSONA_ID`` (the Accum
scripts, which are content of this area too).
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from mirage_bench.commands import command_group, fail, load_each

prompts_app = command_group(
    "prompts", "List and show the prompt templates (prompts/*.txt) with their sha256."
)


@prompts_app.command("list")
def list_command(
    as_json: bool = typer.Option(
        False, "--json", help="Print a JSON list of {name, sha256, placeholders, provenance}."
    ),
) -> None:
    """List every template: name, sha256 (first 12 hex digits), placeholders, provenance.

    Example:

        mirage-bench prompts list
    """
    from mirage_bench.prompts import PromptError, list_templates, load_template, template_provenance

    rows = [
        {
            "name": name,
            "sha256": template.sha256,
            "placeholders": list(template.placeholders),
            "provenance": template_provenance(name),
        }
        for name, template in load_each(list_templates(), load_template, PromptError, code=1)
    ]
    if as_json:
        typer.echo(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    width = max((len(r["name"]) for r in rows), default=4)
    for r in rows:
        placeholders = ",".join(r["placeholders"]) or "-"
        typer.echo(f"{r['name']:<{width}}  {r['sha256'][:12]}  {placeholders:<40}  {r['provenance']}")


@prompts_app.command("show")
def show_command(
    name: str = typer.Argument(..., help="Template name (the file name in prompts/ without .txt)."),
    info: bool = typer.Option(
        False, "--info", help="Print name, full sha256, placeholders and provenance first."
    ),
) -> None:
    """Print template NAME exactly as the loader reads it (placeholders unfilled).

    Example:

        mirage-bench prompts show judge_system --info
    """
    from mirage_bench.prompts import PromptError, load_template, template_provenance

    try:
        template = load_template(name)
    except PromptError as exc:
        raise fail(exc, 1) from exc
    if info:
        typer.echo(f"# name: {template.name}")
        typer.echo(f"# sha256: {template.sha256}")
        typer.echo(f"# placeholders: {', '.join(template.placeholders) or '-'}")
        typer.echo(f"# provenance: {template_provenance(name)}")
    typer.echo(template.text)


accum_app = command_group(
    "accum-scripts",
    "Validate and show the Accum scripts (8 scripted user turns per persona, planted contradictions).",
)


@accum_app.command("validate")
def accum_validate_command(
    path: Path | None = typer.Option(None, "--path", help="Script file (default: the shipped one)."),
    personas: Path | None = typer.Option(None, "--personas", help="Persona file (default: the shipped one)."),
) -> None:
    """Check the Accum scripts: counts, rounds 1..8, persona ids, balanced groups, contradiction rounds.

    Example:

        mirage-bench accum-scripts validate
    """
    from mirage_bench.instruments.accum.scripts import (
        AccumScriptFileError,
        load_accum_scripts,
        validate_accum_scripts,
    )
    from mirage_bench.personas import load_personas

    try:
        scripts = load_accum_scripts(path)
        problems = validate_accum_scripts(scripts, load_personas(personas))
    except (AccumScriptFileError, FileNotFoundError, ValueError) as exc:
        raise fail(exc, 1) from exc
    if problems:
        for problem in problems:
            typer.echo(problem, err=True)
        typer.echo(f"{len(problems)} problem(s) in {len(scripts)} scripts", err=True)
        raise typer.Exit(1)
    n_planted = sum(len(s.contradictions) for s in scripts)
    typer.echo(f"ok: {len(scripts)} scripts, {n_planted} planted contradictions")


@accum_app.command("show")
def accum_show_command(
    persona_id: str = typer.Argument(..., help="Persona id, e.g. seed_001."),
    path: Path | None = typer.Option(None, "--path", help="Script file (default: the shipped one)."),
) -> None:
    """Print one persona's script round by round, marking the planted contradictions.

    Example:

        mirage-bench accum-scripts show seed_001
    """
    from mirage_bench.instruments.accum.scripts import get_accum_script

    try:
        script = get_accum_script(persona_id, path)
    except KeyError as exc:
        typer.echo(f"error: {exc.args[0]}", err=True)
        raise typer.Exit(1) from exc
    planted: dict[int, list[str]] = {}
    for c in script.contradictions:
        planted.setdefault(c.round, []).append(f"{c.attribute}: contradicts '{c.contradicts}'")
    for number, utterance in enumerate(script.utterances, start=1):
        typer.echo(f"round {number}: {utterance}")
        for note in planted.get(number, []):
            typer.echo(f"    [planted contradiction] {note}")


def register(app: typer.Typer) -> None:
    """Add the ``prompts`` and ``accum-scripts`` command groups to the top-level app."""
    app.add_typer(prompts_app, name="prompts")
    app.add_typer(accum_app, name="accum-scripts")
