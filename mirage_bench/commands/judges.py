"""CLI commands of the judges area: ``judge-claims``, ``agreement`` and ``judges list|show|canary``.

The judge is treated as a measured instrument: its configuration is data (``configs/judges/``),
it can label a fixed set of claims, and any two label files (judge–judge or judge–human) can be
compared with the Appendix H statistics.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from mirage_bench.commands import EXIT_BACKEND_FATAL, command_group, fail

judges_app = command_group("judges", "Judge configurations (configs/judges/*.yaml) and the drift canary.")


def judge_claims_command(
    claims: Path = typer.Option(
        ...,
        "--claims",
        help="Claims to label: JSONL (claim_id, claim, revealed_facts/persona_id, "
        "task_context/task_id) or a run's claims.parquet.",
    ),
    judge_config: str = typer.Option(
        "paper", "--judge-config", help="Judge config: a bundled name (see 'judges list') or a YAML file."
    ),
    judge: str = typer.Option(None, "--judge", help="Model spec overriding the config's spec."),
    out: Path = typer.Option(..., "--out", help="Label file to write (JSONL; resumed when it exists)."),
    concurrency: int = typer.Option(8, "--concurrency", min=1, help="Calls in flight."),
    seed: int = typer.Option(0, "--seed", help="Seed passed to every call (part of the cache key)."),
    cache: Path = typer.Option(None, "--cache", help="Response cache file (default: none)."),
    timeout: float = typer.Option(120.0, "--timeout", min=1, help="Seconds before one call times out."),
) -> None:
    """Label given claims with a judge, from exactly what the H.1 annotator sees (no extraction).

    Example:

        mirage-bench judge-claims --claims claims.jsonl --judge-config paper --out labels.jsonl
    """
    from mirage_bench.client import FatalBackendError
    from mirage_bench.judges.claims import judge_claims_file
    from mirage_bench.judges.config import load_judge_config

    try:
        config = load_judge_config(judge_config).with_spec(judge)
        counts = judge_claims_file(
            claims,
            out,
            config,
            concurrency=concurrency,
            seed=seed,
            cache_path=cache,
            client_options={"timeout_s": timeout},
        )
    except FatalBackendError as exc:  # before ValueError: it is one
        typer.echo(f"error: {exc} (labels so far are kept in {out}; re-run to resume)", err=True)
        raise typer.Exit(EXIT_BACKEND_FATAL) from exc
    except (ValueError, ImportError) as exc:
        raise fail(exc) from exc
    typer.echo(
        f"{counts['claims']} claims: {counts['ok']} labelled, {counts['parse_failure']} parse failure(s), "
        f"{counts['call_failure']} call failure(s) (failures are kept with label null, never scored); "
        f"{counts['labelled_now']} judged in this session"
    )
    typer.echo(f"judge config: {config.name} (sha256 {config.sha256[:12]}), spec {config.spec}")
    typer.echo(f"labels: {out}")


def agreement_command(
    a: Path = typer.Argument(..., help="Label file A (the prediction, e.g. a judge)."),
    b: Path = typer.Argument(..., help="Label file B (the reference, e.g. the human labels)."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
    resamples: int = typer.Option(1000, "--resamples", min=0, help="Bootstrap resamples for the kappa CIs."),
    seed: int = typer.Option(0, "--seed", help="Bootstrap seed."),
) -> None:
    """Agreement of two label files joined on claim_id: kappa (CIs), macro-F1, per class, confusion.

    Example:

        mirage-bench agreement labels_judge.jsonl labels_human.jsonl --json
    """
    from mirage_bench.judges.agreement_files import compare_files, render_comparison

    try:
        result = compare_files(a, b, n_resamples=resamples, seed=seed)
    except ValueError as exc:
        raise fail(exc) from exc
    if as_json:
        typer.echo(json.dumps(result, indent=2))
    else:
        typer.echo(render_comparison(result))


@judges_app.command("list")
def list_command(as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """List the bundled judge configs: name, spec, sha256, description.

    Example:

        mirage-bench judges list
    """
    from mirage_bench.judges.config import JudgeConfigError, list_judge_configs, load_judge_config

    rows = []
    for name in list_judge_configs():
        try:
            config = load_judge_config(name)
        except JudgeConfigError as exc:
            raise fail(exc) from exc
        rows.append(
            {"name": name, "spec": config.spec, "sha256": config.sha256, "description": config.description}
        )
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    for row in rows:
        typer.echo(f"{row['name']:<12} {row['sha256'][:12]}  {row['spec']:<40} {row['description']}")


@judges_app.command("show")
def show_command(name: str = typer.Argument(..., help="A bundled config name or a YAML file.")) -> None:
    """Print one judge config (validated) as JSON, with its sha256 and template sha256s.

    Example:

        mirage-bench judges show paper
    """
    from mirage_bench.judges.config import JudgeConfigError, load_judge_config

    try:
        config = load_judge_config(name)
    except JudgeConfigError as exc:
        raise fail(exc) from exc
    typer.echo(json.dumps({**config.manifest_entry(), "templates": config.template_shas()}, indent=2))


StoreOption = typer.Option(None, "--store", help="Submission store (default $MIRAGE_SUBMISSIONS_DIR).")


@judges_app.command("canary")
def canary_command(
    judge_config: str = typer.Option("paper", "--judge-config", help="Judge config name or YAML file."),
    judge: str = typer.Option(None, "--judge", help="Model spec overriding the config's spec."),
    store: Path = StoreOption,
    rebuild: bool = typer.Option(False, "--rebuild", help="Rebuild the canary set from the current store."),
    per_class: int = typer.Option(10, "--per-class", min=1, help="Canary claims per reference label."),
    concurrency: int = typer.Option(8, "--concurrency", min=1, help="Calls in flight."),
) -> None:
    """Re-label the drift canary with a judge and record its agreement with the reference, dated.

    Example:

        mirage-bench judges canary --store submissions/store --judge-config paper
    """
    from mirage_bench.client import FatalBackendError
    from mirage_bench.judges.canary import build_canary, drift, run_canary
    from mirage_bench.judges.config import load_judge_config
    from mirage_bench.leaderboard.store import SubmissionStore

    root = SubmissionStore(store).root
    try:
        config = load_judge_config(judge_config).with_spec(judge)
        _, meta = build_canary(root, per_class=per_class, rebuild=rebuild)
        record = run_canary(root, config, reason="on request", concurrency=concurrency)
    except FatalBackendError as exc:  # before ValueError: it is one
        typer.echo(f"error: {exc} (no canary recorded)", err=True)
        raise typer.Exit(EXIT_BACKEND_FATAL) from exc
    except (ValueError, ImportError) as exc:
        raise fail(exc) from exc
    flagged = drift([*_history(root)])[-1]["drift"]
    kappa = "none scored" if record["kappa"] is None else f"{record['kappa']:.3f}"
    ci = record.get("kappa_ci")
    typer.echo(
        f"canary: {record['scored']} of {record['n_claims']} claims scored, kappa {kappa}"
        + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "")
        + f" vs {meta['reference_source']}"
    )
    typer.echo(f"failures: {record['parse_failures']} parse, {record['call_failures']} call (not scored)")
    typer.echo("drift: " + ("; ".join(flagged) if flagged else "none"))


def _history(root: Path) -> list[dict]:
    from mirage_bench.judges.canary import canary_history

    return canary_history(root)


@judges_app.command("history")
def history_command(
    store: Path = StoreOption,
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """The drift canary's history (every run, with drift flags), newest first.

    Example:

        mirage-bench judges history --store submissions/store
    """
    from mirage_bench.judges.canary import drift
    from mirage_bench.judges.overview import canary_table
    from mirage_bench.leaderboard.store import SubmissionStore

    root = SubmissionStore(store).root
    if as_json:
        typer.echo(json.dumps(drift(_history(root)), indent=2))
        return
    table = canary_table(root)
    typer.echo("no canary run yet" if table.empty else table.to_string(index=False))


def register(app: typer.Typer) -> None:
    """Add this area's commands to the top-level app."""
    app.command("judge-claims")(judge_claims_command)
    app.command("agreement")(agreement_command)
    app.add_typer(judges_app)
