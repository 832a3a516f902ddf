"""CLI commands of the engine area: ``run``, ``judge``, ``report`` and ``generate-persona``."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

# Options shared by ``run`` and ``judge`` (one definition each).
Out = Annotated[
    Path | None, typer.Option("--out", help="Run directory (default: runs/<model>-<run id>).")
]
Concurrency = Annotated[int, typer.Option("--concurrency", min=1, help="Calls in flight per backend.")]
Seed = Annotated[int, typer.Option("--seed", help="Seed passed to every call (part of the cache key).")]
JudgeMaxTokens = Annotated[
    int | None,
    typer.Option("--judge-max-tokens", min=1, help="Max tokens of a judgment (default: the judge config's)."),
]
ParseAttempts = Annotated[
    int | None,
    typer.Option(
        "--parse-attempts",
        min=1,
        help="Calls per JSON answer before parse_failure (default 3; the judge: its config's).",
    ),
]
JudgeConfigOption = Annotated[
    str | None,
    typer.Option(
        "--judge-config",
        help="Judge config: a bundled name (paper, local, ...; 'mirage-bench judges list') or a YAML "
        "file. Default when --judge is given: paper's settings with that spec.",
    ),
]
CachePath = Annotated[
    Path | None, typer.Option("--cache", help="Response cache file (default: <run dir>/cache.sqlite).")
]
JudgePrice = Annotated[
    str | None, typer.Option("--judge-price", help="IN,OUT USD per 1M tokens, for the cost estimate.")
]
ShowProgress = Annotated[bool, typer.Option("--progress/--no-progress", help="Show progress bars.")]
Timeout = Annotated[
    float, typer.Option("--timeout", min=1, help="Seconds before one call times out (then retried).")
]
RequestsPerMinute = Annotated[
    float | None, typer.Option("--rpm", min=1, help="Rate limit: requests per minute per backend.")
]
TokensPerMinute = Annotated[
    float | None, typer.Option("--tpm", min=1, help="Rate limit: tokens per minute per backend.")
]


def _client_options(timeout: float, rpm: float | None, tpm: float | None) -> dict[str, Any]:
    """Operational client settings (never part of the cache key or the manifest)."""
    return {"timeout_s": timeout, "requests_per_minute": rpm, "tokens_per_minute": tpm}


def _price(text: str | None) -> tuple[float, float] | None:
    if not text:
        return None
    try:
        a, b = (float(x) for x in text.split(","))
    except ValueError as exc:
        raise typer.BadParameter("expected IN,OUT in USD per million tokens, e.g. 0.15,0.60") from exc
    return a, b


def _fail(exc: BaseException) -> typer.Exit:
    typer.echo(f"error: {exc}", err=True)
    return typer.Exit(2)


def _launch(start: Callable[..., tuple[Path, dict[str, Any]]], *, report: bool, **arguments: Any) -> None:
    """Call ``start_run`` / ``judge_file``; bad input exits 2; print the report (if asked) and the run dir."""
    from mirage_bench.instruments.summary import render_report

    try:
        run_dir, summary = start(**arguments)
    except (ValueError, KeyError, FileExistsError, ImportError) as exc:
        raise _fail(exc) from exc
    if report:
        render_report(summary)
    typer.echo(f"run directory: {run_dir}")


def run_command(
    model: str = typer.Option(
        ..., "--model", help="Model spec under test (openai:..., anthropic:..., local, scripted...)."
    ),
    judge: str = typer.Option(
        None, "--judge", help="Judge model spec (the judge stage needs it or --judge-config)."
    ),
    judge_config: JudgeConfigOption = None,
    personas: str = typer.Option(
        "all", "--personas", help="'all', a count N (first N), or comma-separated ids."
    ),
    tasks: str = typer.Option("all", "--tasks", help="'all' or comma-separated task ids."),
    stages: str = typer.Option(
        "task,judge", "--stages", help="Comma-separated subset of task,judge,probe,accum."
    ),
    concurrency: Concurrency = 8,
    out: Out = None,
    seed: Seed = 0,
    max_tokens: int = typer.Option(1024, "--max-tokens", min=1, help="Max tokens of a Task response."),
    audit_max_tokens: int = typer.Option(
        2048, "--audit-max-tokens", min=1, help="Max tokens of a self-audit / Probe / Accum answer."
    ),
    judge_max_tokens: JudgeMaxTokens = None,
    max_attempts: ParseAttempts = None,
    retry_failed: bool = typer.Option(
        True, "--retry-failed/--keep-failed", help="On resume, retry records that failed with a call failure."
    ),
    cache: CachePath = None,
    model_price: str = typer.Option(
        None, "--model-price", help="IN,OUT USD per 1M tokens, for the cost estimate."
    ),
    judge_price: JudgePrice = None,
    progress: ShowProgress = True,
    timeout: Timeout = 120.0,
    rpm: RequestsPerMinute = None,
    tpm: TokensPerMinute = None,
    dry_run: bool = typer.Option(
        False,
        "--dry-run",
        help="Render every prompt and print calls, tokens and cost per stage; send nothing.",
    ),
) -> None:
    """Run the benchmark for one model (resumable: re-run with the same arguments to continue)."""
    from mirage_bench.instruments.launch import start_run

    if dry_run:
        from mirage_bench.cost import render_estimate

        try:
            _, estimate = start_run(
                model=model, judge=judge, judge_config=judge_config, personas=personas, tasks=tasks,
                stages=stages, out=out, seed=seed, max_tokens=max_tokens, audit_max_tokens=audit_max_tokens,
                judge_max_tokens=judge_max_tokens, max_attempts=max_attempts,
                model_price=_price(model_price), judge_price=_price(judge_price), dry_run=True,
            )
        except (ValueError, KeyError, ImportError) as exc:
            raise _fail(exc) from exc
        typer.echo(render_estimate(estimate))
        return
    _launch(
        start_run,
        report="judge" in stages,
        model=model,
        judge=judge,
        judge_config=judge_config,
        personas=personas,
        tasks=tasks,
        stages=stages,
        concurrency=concurrency,
        out=out,
        seed=seed,
        max_tokens=max_tokens,
        audit_max_tokens=audit_max_tokens,
        judge_max_tokens=judge_max_tokens,
        max_attempts=max_attempts,
        retry_failed=retry_failed,
        cache_path=cache,
        model_price=_price(model_price),
        judge_price=_price(judge_price),
        progress=progress,
        client_options=_client_options(timeout, rpm, tpm),
    )


def judge_command(
    responses: Path = typer.Option(
        ...,
        "--responses",
        exists=True,
        dir_okay=False,
        help="JSONL: persona_id, task_id, response[, self_audit][, model].",
    ),
    judge: str = typer.Option(None, "--judge", help="Judge model spec (or use --judge-config)."),
    judge_config: JudgeConfigOption = None,
    out: Out = None,
    model: str = typer.Option(None, "--model", help="Name of the model that wrote the responses."),
    concurrency: Concurrency = 8,
    seed: Seed = 0,
    judge_max_tokens: JudgeMaxTokens = None,
    max_attempts: ParseAttempts = None,
    cache: CachePath = None,
    judge_price: JudgePrice = None,
    progress: ShowProgress = True,
    timeout: Timeout = 120.0,
    rpm: RequestsPerMinute = None,
    tpm: TokensPerMinute = None,
) -> None:
    """Judge responses produced elsewhere (a leaderboard submission) into a run directory."""
    from mirage_bench.instruments.launch import judge_file

    _launch(
        judge_file,
        report=True,
        responses=responses,
        judge=judge,
        judge_config=judge_config,
        out=out,
        model=model,
        concurrency=concurrency,
        seed=seed,
        judge_max_tokens=judge_max_tokens,
        max_attempts=max_attempts,
        cache_path=cache,
        judge_price=_price(judge_price),
        progress=progress,
        client_options=_client_options(timeout, rpm, tpm),
    )


def report_command(
    run_dir: Path = typer.Argument(..., exists=True, file_okay=False, help="A run directory."),
    as_json: bool = typer.Option(False, "--json", help="Print summary.json instead of tables."),
) -> None:
    """Print a run's leaderboard row, per-task table and failure counts."""
    from mirage_bench.instruments.summary import render_report, summarize
    from mirage_bench.runs import RunDir

    run = RunDir(run_dir)
    try:
        manifest = run.read_manifest()
        if manifest is None:
            raise ValueError(f"{run_dir} holds no manifest.json: not a run directory")
        summary = summarize(
            run.read("responses"),
            run.read("judgments"),
            run.read("probe"),
            run.read("accum"),
            model=manifest.model,
            judge=manifest.judge,
            smoke_test=manifest.smoke_test,
        )
    except ValueError as exc:
        raise _fail(exc) from exc
    if as_json:
        typer.echo(json.dumps(summary, indent=2))
        return
    render_report(summary)
    if manifest.status != "complete":
        typer.echo(f"note: the run's status is {manifest.status!r} (re-run the same command to finish it)")


def generate_persona_command(
    model: str = typer.Option(..., "--model", help="Model spec that writes the persona."),
    stereotype_type: str = typer.Option(
        ..., "--stereotype-type", help="stereotypical, counter_stereotypical or neutral."
    ),
    occupation: str = typer.Option(..., "--occupation", help="Target occupation seed."),
    persona_id: str = typer.Option("p_151", "--persona-id", help="Id given to the generated persona."),
    seed: int = typer.Option(0, "--seed", help="Seed passed to the call."),
) -> None:
    """Generate one persona with the G.8 prompt and validate it; prints JSON, exits 1 if invalid."""
    from mirage_bench.client import Client, run_closing
    from mirage_bench.instruments.persona_gen import generate_persona
    from mirage_bench.runs import build_backend

    try:
        client = Client(build_backend(model, seed=seed))
        result = run_closing(
            generate_persona(
                client,
                stereotype_type=stereotype_type,
                occupation=occupation,
                persona_id=persona_id,
                seed=seed,
            ),
            client,
        )
    except (ValueError, ImportError) as exc:
        raise _fail(exc) from exc
    typer.echo(json.dumps(result.as_dict(), indent=2, ensure_ascii=False))
    if not result.valid:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Add this area's commands to the top-level app."""
    app.command("run")(run_command)
    app.command("judge")(judge_command)
    app.command("report")(report_command)
    app.command("generate-persona")(generate_persona_command)
