"""CLI commands of the engine area: ``run``, ``judge``, ``report`` and ``generate-persona``."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from mirage_bench.commands import EXIT_BACKEND_FATAL, EXIT_INTERRUPTED, EXIT_TOO_MANY_FAILURES, fail


def _option(kind: Any, flag: str, help: str, **settings: Any) -> Any:
    """A typer option alias: ``Annotated[kind, typer.Option(flag, help=help, **settings)]``."""
    return Annotated[kind, typer.Option(flag, help=help, **settings)]


# Options shared by ``run`` and ``judge`` (one definition each).
Out = _option(Path | None, "--out", "Run directory (default: runs/<model>-<run id>).")
Concurrency = _option(int, "--concurrency", "Calls in flight per backend.", min=1)
Seed = _option(int, "--seed", "Seed passed to every call (part of the cache key).")
JudgeMaxTokens = _option(
    int | None, "--judge-max-tokens", "Max tokens of a judgment (default: the judge config's).", min=1
)
ParseAttempts = _option(
    int | None,
    "--parse-attempts",
    "Calls per JSON answer before parse_failure (default 3; the judge: its config's).",
    min=1,
)
JudgeConfigOption = _option(
    str | None,
    "--judge-config",
    "Judge config: a bundled name (paper, local, ...; 'mirage-bench judges list') or a YAML "
    "file. Default when --judge is given: paper's settings with that spec.",
)
CachePath = _option(Path | None, "--cache", "Response cache file (default: <run dir>/cache.sqlite).")
JudgePrice = _option(str | None, "--judge-price", "IN,OUT USD per 1M tokens, for the cost estimate.")
ShowProgress = _option(bool, "--progress/--no-progress", "Show progress bars.")
Timeout = _option(
    float | None,
    "--timeout",
    "Seconds before a call times out, then retried (default 120; local 900).",
    min=1,
)
RequestsPerMinute = _option(float | None, "--rpm", "Rate limit: requests per minute per backend.", min=1)
TokensPerMinute = _option(float | None, "--tpm", "Rate limit: tokens per minute per backend.", min=1)

def _client_options(timeout: float | None, rpm: float | None, tpm: float | None) -> dict[str, Any]:
    """Operational client settings (never part of the cache key or the manifest); no timeout given
    leaves the default to the launcher (120 s, or 900 s when a backend is the local model)."""
    options: dict[str, Any] = {"requests_per_minute": rpm, "tokens_per_minute": tpm}
    if timeout is not None:
        options["timeout_s"] = timeout
    return options


def _price(text: str | None) -> tuple[float, float] | None:
    if not text:
        return None
    try:
        a, b = (float(x) for x in text.split(","))
    except ValueError as exc:
        raise typer.BadParameter("expected IN,OUT in USD per million tokens, e.g. 0.15,0.60") from exc
    return a, b


MaxFailureRate = _option(
    float,
    "--max-failure-rate",
    "Exit 1 when more than this share of a stage's records failed (call or parse failures).",
    min=0.0,
    max=1.0,
)
BatchOption = _option(
    bool,
    "--batch",
    "Send task/self-audit/judge calls through the OpenAI Batch API / Anthropic Message Batches "
    "(half price; results within 24 h; batch ids in <run dir>/batches.jsonl, resumed after a kill).",
)
AsJson = _option(bool, "--json", "Print a JSON summary on stdout (progress goes to stderr).")

def _raise_keyboard_interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def failure_counts(summary: dict[str, Any]) -> dict[str, tuple[int, int]]:
    """``{stage: (failed records, records)}`` of a run summary, for the failure threshold.

    >>> failure_counts({"n_responses": 4, "n_judged": 2, "failures": {"response_call_failures": 1,
    ...     "judge_parse_failures": 1, "judge_call_failures": 0}})
    {'task': (1, 4), 'judge': (1, 3)}
    """
    f = summary.get("failures", {})
    out: dict[str, tuple[int, int]] = {}
    if summary.get("n_responses"):
        out["task"] = (f.get("response_call_failures", 0), summary["n_responses"])
    judged_bad = f.get("judge_parse_failures", 0) + f.get("judge_call_failures", 0)
    if summary.get("n_judged", 0) + judged_bad:
        out["judge"] = (judged_bad, summary.get("n_judged", 0) + judged_bad)
    probe = summary.get("probe")
    if probe and probe.get("n_personas"):
        out["probe"] = (probe.get("parse_failures", 0) + probe.get("call_failures", 0), probe["n_personas"])
    return out


def _launch(start: Callable[..., tuple[Path, dict[str, Any]]], *, report: bool, as_json: bool = False,
            max_failure_rate: float = 1.0, **arguments: Any) -> None:
    """Call ``start_run`` / ``judge_file`` and turn every outcome into one line and an exit status.

    Bad input, a locked run directory: exit 2. A backend no request can survive (bad key, unknown
    model): exit 3, status ``failed``. SIGINT or SIGTERM: exit 130, status ``interrupted`` (usage
    saved; re-run to resume). More than ``max_failure_rate`` of a stage's records failed: exit 1
    with the counts. Otherwise the report (if asked) or the ``--json`` summary, and exit 0.
    """
    import signal

    from mirage_bench.client import FatalBackendError
    from mirage_bench.instruments.summary import render_report
    from mirage_bench.runs import RunLockedError

    previous = signal.signal(signal.SIGTERM, _raise_keyboard_interrupt)
    try:
        run_dir, summary = start(**arguments)
    except FatalBackendError as exc:  # before ValueError, its base class
        typer.echo(f"error: {exc} (run stopped; status 'failed')", err=True)
        raise typer.Exit(EXIT_BACKEND_FATAL) from exc
    except (ValueError, KeyError, FileExistsError, ImportError, RunLockedError) as exc:
        raise fail(exc) from exc
    except KeyboardInterrupt as exc:
        typer.echo("interrupted: progress and usage saved (status 'interrupted'); re-run the same "
                   "command to resume", err=True)
        raise typer.Exit(EXIT_INTERRUPTED) from exc
    finally:
        signal.signal(signal.SIGTERM, previous)
    counts = failure_counts(summary)
    over = {stage: c for stage, c in counts.items() if c[1] and c[0] / c[1] > max_failure_rate}
    if as_json:
        from mirage_bench.runs import RunDir

        manifest = RunDir(run_dir).read_manifest()
        typer.echo(json.dumps({
            "run_dir": str(run_dir),
            "status": manifest.status if manifest else None,
            "usage": manifest.usage if manifest else {},
            "cost_estimate_usd": manifest.cost_estimate_usd if manifest else None,
            "failed_records": {stage: {"failed": a, "total": b} for stage, (a, b) in counts.items()},
            "over_failure_threshold": sorted(over),
            "summary": summary,
        }, indent=2))
    else:
        if report:
            render_report(summary)
        typer.echo(f"run directory: {run_dir}")
    if over:
        shown = "; ".join(f"{stage}: {a} of {b} failed" for stage, (a, b) in over.items())
        typer.echo(f"error: too many failed records ({shown}) > --max-failure-rate {max_failure_rate:g}; "
                   "they are kept in the run directory: re-run the same command to retry them", err=True)
        raise typer.Exit(EXIT_TOO_MANY_FAILURES)


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
    max_tokens: int = typer.Option(
        None, "--max-tokens", min=1, help="Max tokens of a Task response (default 1024; 256 for local)."
    ),
    audit_max_tokens: int = typer.Option(
        None, "--audit-max-tokens", min=1,
        help="Max tokens of a self-audit / Probe / Accum answer (default 2048; 1024 for local).",
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
    timeout: Timeout = None,
    rpm: RequestsPerMinute = None,
    tpm: TokensPerMinute = None,
    max_failure_rate: MaxFailureRate = 0.2,
    as_json: AsJson = False,
    dry_run: bool = typer.Option(
        False,
        "--dry-run",
        help="Render every prompt and print calls, tokens and cost per stage; send nothing.",
    ),
    batch: BatchOption = False,
) -> None:
    """Run the benchmark for one model (resumable: re-run with the same arguments to continue).

    Each backend is checked with one cheap request first; a bad key or unknown model stops the run
    before any call is spent.

    Example (the embedded smoke-test model, no key, no network; a few minutes on 2 cores):

        mirage-bench run --model local --judge local --personas seed_001 --tasks birthday_gift

    Exit status: 0 done; 1 more than --max-failure-rate of a stage's records failed; 2 bad input
    or run directory in use; 3 a backend refused every request (bad key, unknown model);
    130 interrupted (Ctrl-C or SIGTERM; re-run to resume).
    """
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
            raise fail(exc) from exc
        typer.echo(json.dumps(estimate, indent=2) if as_json else render_estimate(estimate))
        return
    _launch(
        start_run,
        report="judge" in stages,
        as_json=as_json,
        max_failure_rate=max_failure_rate,
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
        batch=batch,
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
    timeout: Timeout = None,
    rpm: RequestsPerMinute = None,
    tpm: TokensPerMinute = None,
    max_failure_rate: MaxFailureRate = 0.2,
    as_json: AsJson = False,
    batch: BatchOption = False,
) -> None:
    """Judge responses produced elsewhere (a leaderboard submission) into a run directory.

    Example:

        mirage-bench judge --responses my_model.jsonl --judge openai:gpt-4o-mini --out runs/my_model

    Exit statuses as for ``run`` (0 done, 1 too many failed judgments, 2 bad input, 3 judge
    backend refused, 130 interrupted).
    """
    from mirage_bench.instruments.launch import judge_file

    _launch(
        judge_file,
        report=True,
        as_json=as_json,
        max_failure_rate=max_failure_rate,
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
        batch=batch,
    )


def report_command(
    run_dir: Path = typer.Argument(..., exists=True, file_okay=False, help="A run directory."),
    as_json: bool = typer.Option(False, "--json", help="Print summary.json instead of tables."),
    tables: bool = typer.Option(
        False, "--tables", help="Also print the paper's per-model Tables 4, 6, 7, 8 and 10 for the run."
    ),
    median_ties: str = typer.Option(
        "negative", "--median-ties",
        help="Table 6 AUROC: records at the median judge OI are 'negative' (positives strictly above "
        "the median, App. D's reading) or 'positive'.",
    ),
) -> None:
    """Print a run's leaderboard row, per-task table, failure counts and Accum Tables 4/8.

    Example:

        mirage-bench report runs/gpt-4o-mini --tables
    """
    from mirage_bench.instruments.summary import render_report, render_tables, summarize
    from mirage_bench.runs import RunDir

    run = RunDir(run_dir)
    try:
        manifest = run.read_manifest()
        if manifest is None:
            raise ValueError(f"{run_dir} holds no manifest.json: not a run directory")
        responses, accums = run.read("responses"), run.read("accum")
        summary = summarize(
            responses,
            run.read("judgments"),
            run.read("probe"),
            accums,
            model=manifest.model,
            judge=manifest.judge,
            smoke_test=manifest.smoke_test,
        )
        per_model = _run_tables(run_dir, responses, accums, median_ties) if tables else {}
    except ValueError as exc:
        raise fail(exc) from exc
    if as_json:
        if tables:
            summary = {**summary, "tables": {k: json.loads(v.to_json(orient="records"))
                                             for k, v in per_model.items()}}
        typer.echo(json.dumps(summary, indent=2))
        return
    render_report(summary)
    if tables:
        render_tables(per_model, smoke_test=manifest.smoke_test)
    if manifest.status != "complete":
        typer.echo(f"note: the run's status is {manifest.status!r} (re-run the same command to finish it)")


def _run_tables(run_dir: Path, responses: list[Any], accums: list[Any], median_ties: str) -> dict[str, Any]:
    """The per-model tables of a run (:func:`mirage_bench.metrics.tables.run_tables`)."""
    import pandas as pd

    from mirage_bench.metrics.tables import run_tables

    claims_path = run_dir / "claims.parquet"
    claims = pd.read_parquet(claims_path) if claims_path.exists() else None
    return run_tables(claims, [r.model_dump(mode="json") for r in responses],
                      [a.model_dump(mode="json") for a in accums], median_ties=median_ties)


def generate_persona_command(
    model: str = typer.Option(..., "--model", help="Model spec that writes the persona."),
    stereotype_type: str = typer.Option(
        ..., "--stereotype-type", help="stereotypical, counter_stereotypical or neutral."
    ),
    occupation: str = typer.Option(..., "--occupation", help="Target occupation seed."),
    persona_id: str = typer.Option("p_151", "--persona-id", help="Id given to the generated persona."),
    seed: int = typer.Option(0, "--seed", help="Seed passed to the call."),
) -> None:
    """Generate one persona with the G.8 prompt and validate it; prints JSON, exits 1 if invalid.

    Example:

        mirage-bench generate-persona --model openai:gpt-4o-mini --stereotype-type neutral --occupation nurse
    """
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
        raise fail(exc) from exc
    typer.echo(json.dumps(result.as_dict(), indent=2, ensure_ascii=False))
    if not result.valid:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Add this area's commands to the top-level app."""
    app.command("run")(run_command)
    app.command("judge")(judge_command)
    app.command("report")(report_command)
    app.command("generate-persona")(generate_persona_command)
