"""CLI commands of the leaderboard service: ``submit``, ``queue``, ``leaderboard`` and ``worker``.

They work on the same store as the Space (``--store DIR``, default ``$MIRAGE_SUBMISSIONS_DIR`` or
``submissions/store``), Hub-backed when ``MIRAGE_REQUESTS_REPO``/``MIRAGE_RESULTS_REPO`` (or
``MIRAGE_HUB_REPO``) are set: ``submit`` then commits the new request before it exits, so CI can
submit to a hosted Space, and ``queue`` / ``leaderboard`` read the Hub's latest commit (a fresh
download, never a stale local copy).
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import typer

from mirage_bench.commands import fail

STORE_HELP = "Submission store (default $MIRAGE_SUBMISSIONS_DIR or submissions/store)."


def _open(store: Path | None) -> Any:
    """The store, Hub-backed when configured; a Hub problem is a clear error, not a traceback."""
    from mirage_bench.leaderboard.hub import open_store

    try:
        return open_store(store)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    except Exception as exc:  # noqa: BLE001 - e.g. the Hub unreachable or a bad token
        from mirage_bench.leaderboard.worker import redact

        reason = redact(f"{type(exc).__name__}: {exc}")
        typer.echo(f"error: cannot read the Hub-backed store: {reason}", err=True)
        raise typer.Exit(1) from None


@contextmanager
def _reading(store: Path | None) -> Iterator[Any]:
    """The store to read: with a Hub configured, a fresh download of it (what a restarted Space
    shows); else the local store."""
    from mirage_bench.leaderboard.hub import HubConfig

    try:
        hub = HubConfig.from_env()
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    if hub is None:
        yield _open(store)
        return
    tmp = tempfile.mkdtemp(prefix="mirage-hub-read-")
    try:
        yield _open(Path(tmp))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _json_safe(value: Any) -> Any:
    import math

    if isinstance(value, float) and math.isnan(value):
        return None
    if hasattr(value, "item"):  # numpy scalars
        return _json_safe(value.item())
    return value


def register(app: typer.Typer) -> None:
    """Add this area's commands to the top-level app."""

    @app.command("submit")
    def submit(
        file: Path = typer.Argument(..., help="responses.jsonl written by `mirage-bench run --stages task`."),
        store: Path | None = typer.Option(None, help=STORE_HELP),
        model_name: str = typer.Option(..., "--model-name", help="Model name shown on the board (org/name)."),
        revision: str = typer.Option("main", help="Model revision."),
        family: str = typer.Option("", help="Model family (e.g. Qwen)."),
        link: str = typer.Option("", help="Link to the model (http(s) URL)."),
        license_: str = typer.Option("", "--license", help="Model license."),
        contact: str = typer.Option("", help="Submitter e-mail or Hub user."),
    ) -> None:
        """Validate a responses file exactly as the Space's Submit tab does and queue it.

        Prints the submission id and exits 0 when queued; prints every problem and exits 2 when
        refused, with nothing queued.

        Example:

            mirage-bench submit runs/m/responses.jsonl --store submissions/store --model-name org/my-model
        """
        from mirage_bench.leaderboard.store import Metadata, SubmissionError

        try:
            data = file.read_bytes()
        except OSError as exc:
            typer.echo(f"not queued: cannot read {file}: {exc.strerror or exc}", err=True)
            raise typer.Exit(2) from None
        st = _open(store)
        meta = Metadata(
            model_name=model_name, family=family, contact=contact, revision=revision, link=link,
            license=license_,
        )
        try:
            request = st.submit_file(data, meta)
        except SubmissionError as exc:
            typer.echo(f"not queued: {exc.header}", err=True)
            for problem in exc.problems:
                typer.echo(f"- {problem}", err=True)
            raise typer.Exit(2) from None
        if st.mirror is not None and not st.mirror.flush():
            typer.echo(f"warning: queued locally but the Hub commit failed: {st.mirror.last_error}", err=True)
        for flag in request.flags:  # judged, but kept off the default ranked view
            typer.echo(f"flagged: {flag}", err=True)
        typer.echo(request.submission_id)

    @app.command("queue")
    def queue(
        store: Path | None = typer.Option(None, help=STORE_HELP),
        as_json: bool = typer.Option(False, "--json", help="Print JSON (a list of requests)."),
    ) -> None:
        """Every request in the store, newest first: status, progress, position, rate, ETA, reason, flags.

        Example:

            mirage-bench queue --store submissions/store --json
        """
        with _reading(store) as st:
            found = st.queue_rows()
        rows = []
        for r in found:
            rows.append(
                {
                    "submission_id": r["submission"],
                    "model_name": r["model"],
                    "revision": r["revision"],
                    "kind": r["kind"],
                    "status": r["status"],
                    "position": r["position"],
                    "state": r["state"],
                    "progress": {"judged": r["judged"], "total": r["total"]},
                    "rate_per_min": r["rate_per_min"],
                    "eta_s": r["eta_s"],
                    "judge": r["judge"],
                    "smoke_test": r["smoke_test"],
                    "reason": r["reason"],
                    "flags": r["flags"],
                    "submitted": r["submitted"],
                }
            )
        if as_json:
            typer.echo(json.dumps(rows, indent=2))
            return
        if not rows:
            typer.echo("the queue is empty")
            return
        for r in rows:
            flags = f" [{', '.join(r['flags'])}]" if r["flags"] else ""
            reason = f" — {r['reason']}" if r["reason"] else ""
            typer.echo(f"{r['submission_id']}  {r['model_name']}  {r['status']}  {r['state']}{flags}{reason}")

    @app.command("leaderboard")
    def leaderboard(
        store: Path | None = typer.Option(None, help=STORE_HELP),
        judge: str | None = typer.Option(
            None, help="Judge whose rows to show (default: the Space's default view, the paper's judge)."
        ),
        show_all: bool = typer.Option(False, "--all", help="Also smoke-test and flagged rows."),
        as_json: bool = typer.Option(False, "--json", help="Print JSON (a list of rows)."),
    ) -> None:
        """The ranked rows the Space shows for one judge (highest OI first).

        Example:

            mirage-bench leaderboard --store submissions/store --judge scripted --all --json
        """
        from mirage_bench.leaderboard import board as lb

        with _reading(store) as st:
            frame = lb.load_board(st.root)
        choices = lb.judges(frame, include_smoke=show_all)
        chosen = judge or (choices[0] if choices else None)
        known = sorted(set(frame["judge"].astype(str)))
        if judge and judge not in known:
            raise typer.BadParameter(f"no rows judged by {judge!r}; judges on the board: {', '.join(known)}")
        rows = lb.board_rows(frame, judge=chosen, include_all=show_all)
        rows = [{k: _json_safe(v) for k, v in row.items()} for row in rows]
        if as_json:
            typer.echo(json.dumps(rows, indent=2, default=str))
            return
        typer.echo(f"judge: {chosen}")
        if not rows:
            typer.echo("no rows for this judge")
        for row in rows:
            marks = (["smoke test"] if row["smoke_test"] else []) + row["flags"]
            marked = f"  [{', '.join(marks)}]" if marks else ""
            oi = row.get("oi_pct")
            oi_text = f"{oi:.1f}%" if isinstance(oi, int | float) else "?"
            typer.echo(f"{row['rank']:>3}. {row['model']}  OI {oi_text}  ({row['source']}){marked}")

    @app.command("worker")
    def worker_cmd(
        store: Path | None = typer.Option(None, help=STORE_HELP),
        judge: str | None = typer.Option(None, help="Judge spec (default $MIRAGE_JUDGE or local)."),
        judge_config: str | None = typer.Option(
            None,
            "--judge-config",
            help="Judge config name or YAML file (default $MIRAGE_JUDGE_CONFIG, else local/paper).",
        ),
        once: bool = typer.Option(False, help="Exit when the queue is empty instead of polling."),
        poll: float = typer.Option(5.0, help="Seconds between queue polls."),
        concurrency: int = typer.Option(8, help="Concurrent judge calls."),
        endpoint_concurrency: int = typer.Option(
            8, min=1, help="Calls in flight to a submitted endpoint while generating its responses."
        ),
    ) -> None:
        """Judge queued leaderboard submissions (a separate worker process for the Space).

        SIGINT and SIGTERM stop it within seconds: no new calls, in-flight calls abandoned (not
        recorded as failures), the submission stays RUNNING and resumes at the next start.

        Example:

            mirage-bench worker --store submissions/store --judge-config paper --once
        """
        import logging

        from mirage_bench.leaderboard.worker import Worker, install_shutdown_signals

        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
        st = _open(store)
        try:
            w = Worker(
                st,
                judge=judge,
                judge_config=judge_config,
                poll_s=poll,
                concurrency=concurrency,
                endpoint_concurrency=endpoint_concurrency,
            )
        except ValueError as exc:
            raise fail(exc) from exc
        hub = ""
        if st.mirror is not None:
            hub = f", Hub-backed ({', '.join(st.mirror.config.patterns())})"
        typer.echo(f"worker: judge {w.judge} (config {w.judge_config.name}), store {w.store.root}{hub}")
        signalled: list[bool] = []

        def on_signal() -> None:
            signalled.append(True)
            w.request_stop()

        install_shutdown_signals(on_signal)
        try:
            w.serve(once=once)
        except RuntimeError as exc:  # --once while another worker holds the store's lock
            raise fail(exc, 1) from None
        finally:
            w.stop()
        if signalled:
            typer.echo("worker stopped; RUNNING submissions resume at the next start")
