"""CLI commands of the space area: ``space`` and ``annotate-sample`` (``worker`` is in ``leaderboard``)."""

from __future__ import annotations

from pathlib import Path

import typer


def register(app: typer.Typer) -> None:
    """Add this area's commands to the top-level app."""

    @app.command("space")
    def space(
        host: str = typer.Option("127.0.0.1", help="Interface to serve on."),
        port: int = typer.Option(7860, help="Port to serve on."),
        store: Path | None = typer.Option(
            None, help="Submission store (default $MIRAGE_SUBMISSIONS_DIR or submissions/store)."
        ),
        runs: list[Path] = typer.Option(
            [], "--runs", help="Extra engine run directories to show (repeatable)."
        ),
        judge: str | None = typer.Option(
            None, help="Judge spec for submissions (default $MIRAGE_JUDGE or local)."
        ),
        worker: bool = typer.Option(True, "--worker/--no-worker", help="Judge submissions in this process."),
        endpoint_concurrency: int = typer.Option(
            8, min=1, help="Calls in flight to a submitted endpoint while generating its responses."
        ),
    ) -> None:
        """Serve the leaderboard Space (Gradio) with its in-process judging worker."""
        from mirage_bench.leaderboard.board import row_from_run_dir
        from space.app import SpaceConfig, launch

        for run_dir in runs:
            if not (run_dir / "claims.parquet").exists():
                raise typer.BadParameter(f"{run_dir} has no claims.parquet (not a judged run directory)")
            try:  # the board is built from it on every page load: refuse it now, with the reason
                row_from_run_dir(run_dir)
            except (OSError, ValueError) as exc:
                raise typer.BadParameter(f"{run_dir} cannot be shown on the leaderboard: {exc}") from None
        config = SpaceConfig(
            store_root=store,
            run_dirs=list(runs),
            judge=judge,
            start_worker=worker,
            endpoint_concurrency=endpoint_concurrency,
        )
        launch(config, host=host, port=port, block=True)

    @app.command("annotate-sample")
    def annotate_sample(
        runs: list[Path] = typer.Option(..., "--runs", help="Judged run directories (claims.parquet)."),
        sample_id: str = typer.Option("validation", "--name", help="Sample id (file name in the store)."),
        per_class: int = typer.Option(100, help="Claims per judge-predicted class."),
        seed: int = typer.Option(42, help="Sampling seed (H.1 uses 42)."),
        min_models: int = typer.Option(8, help="Diversity: at least this many models per class."),
        min_tasks: int = typer.Option(5, help="Diversity: at least this many tasks per class."),
        min_personas: int = typer.Option(20, help="Diversity: at least this many personas per class."),
        store: Path | None = typer.Option(None, help="Submission store."),
        force: bool = typer.Option(False, help="Overwrite an existing sample of that name."),
        lenient: bool = typer.Option(False, help="Take what there is when a class is short or not diverse."),
    ) -> None:
        """Draw a stratified blind-annotation sample (Appendix H.1) from run claims into the store."""
        from mirage_bench.annotation import SampleSpec, claims_from_runs, create_sample, save_sample
        from mirage_bench.leaderboard.hub import open_store
        from mirage_bench.leaderboard.store import safe_id

        st = open_store(store)  # Hub-backed when MIRAGE_REQUESTS_REPO / MIRAGE_RESULTS_REPO are set
        sid = safe_id(sample_id)
        if st.sample_path(sid).exists() and not force:
            raise typer.BadParameter(
                f"sample {sid!r} exists ({st.sample_path(sid)}); pass --force to replace it"
            )
        try:
            claims = claims_from_runs(list(runs))
        except FileNotFoundError as exc:
            raise typer.BadParameter(str(exc)) from None
        spec = SampleSpec(per_class, seed, min_models, min_tasks, min_personas, strict=not lenient)
        try:
            items = create_sample(claims, spec)
        except ValueError as exc:
            raise typer.BadParameter(f"{exc} (pass --lenient to take what there is)") from None
        save_sample(st, sid, items)
        if st.mirror is not None and not st.mirror.flush():
            typer.echo(f"warning: the Hub commit failed: {st.mirror.last_error}", err=True)
        typer.echo(f"wrote {len(items)} items to {st.sample_path(sid)}")
        if "smoke_test" in claims and claims["smoke_test"].astype(bool).any():
            typer.echo(
                "WARNING: these claims come only from smoke-test runs (judge labels meaningless); "
                "agreement measured on this sample is not a result about any judge.",
                err=True,
            )
