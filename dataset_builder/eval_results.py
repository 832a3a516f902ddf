"""``mirage-bench eval-results RUN_DIR``: the model-side ``.eval_results/*.yaml`` of a measured run.

The Hub's Eval Results feature reads YAML files in a *model* repository's ``.eval_results/``
folder: a list of results, each naming the benchmark dataset (``dataset.id``), the task of its
``eval.yaml`` (``dataset.task_id``) and the score (``value``). MirageBench's task is
``over_inference``; its value is the run's OI rate in percent (lower is better), computed by the
same code as the dataset's measured ``leaderboard`` rows. Smoke-test runs are refused: their
numbers mean nothing. Each result names its judge in ``notes`` (OI rates from different judges
are not comparable).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .configs import BuildError
from .sources import leaderboard_config, load_run

__all__ = ["EVAL_RESULTS_DIR", "eval_results", "write_eval_results"]

#: The model-repository folder the Hub reads.
EVAL_RESULTS_DIR = ".eval_results"
#: The benchmark task the results belong to (the ``id`` of a task in the dataset's ``eval.yaml``).
TASK_ID = "over_inference"


def eval_results(run_dir: str | Path, *, dataset_id: str | None = None) -> list[dict[str, Any]]:
    """The Eval Results entries of a judged run (one per judge in the run).

    Raises :class:`~dataset_builder.configs.BuildError` for a run that is not judged, holds no
    claims, or comes from a smoke-test model or judge.
    """
    from mirage_bench.repo_ids import DATASET_REPO_ID

    run = load_run(run_dir)
    if run.claims is None or not len(run.claims):
        raise BuildError(f"{run_dir}: no judged claims (claims.parquet): judge the run first")
    if run.smoke_test or bool(run.claims["smoke_test"].astype(bool).any()):
        raise BuildError(
            f"{run_dir}: a smoke-test run (embedded test model or judge): its numbers are not measurements"
        )
    manifest = json.loads((Path(run_dir) / "manifest.json").read_text(encoding="utf-8"))
    if manifest.get("status", "complete") != "complete":
        raise BuildError(
            f"{run_dir}: the run is {manifest.get('status')!r}, not complete: finish it (re-run the same "
            "command to resume) before reporting its score"
        )
    board = leaderboard_config([run], include_reported=False).splits["train"]
    date = manifest.get("finished_at") or manifest.get("created_at")
    entries = []
    for row in board.to_dict("records"):
        notes = (
            f"judge: {row['judge']}; {int(row['claims'])} judged claims over {int(row['responses'])} "
            f"responses; OI rate in percent, lower is better; mirage-bench run {run.run_id}"
        )
        entry: dict[str, Any] = {
            "dataset": {"id": dataset_id or DATASET_REPO_ID, "task_id": TASK_ID},
            "value": round(float(row["oi_pct"]), 2),
        }
        if date:
            entry["date"] = str(date)
        entry["notes"] = notes
        entries.append(entry)
    return entries


def write_eval_results(
    run_dir: str | Path, out: str | Path | None = None, *, dataset_id: str | None = None
) -> Path:
    """Write ``<out>/.eval_results/miragebench.yaml`` (``out`` defaults to ``run_dir``); returns the path."""
    import yaml

    entries = eval_results(run_dir, dataset_id=dataset_id)
    folder = Path(out if out is not None else run_dir) / EVAL_RESULTS_DIR
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "miragebench.yaml"
    header = f"# Written by `mirage-bench eval-results` on {datetime.now(UTC):%Y-%m-%d}.\n"
    path.write_text(header + yaml.safe_dump(entries, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return path
