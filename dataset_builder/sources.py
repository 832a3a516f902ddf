"""Row builders: package data, run directories, annotation files and the paper's reported tables.

Every function returns a :class:`~dataset_builder.configs.ConfigTable` (possibly without rows);
nothing is invented: a config without input has no rows and the build leaves it out.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from mirage_bench.fileio import nonblank_lines
from mirage_bench.metrics.oi import oi_rate, oi_summary
from mirage_bench.reported import TABLE10_TASKS

from .configs import BuildError, ConfigTable, config_features

__all__ = [
    "RunInput",
    "accum_config",
    "human_validation_config",
    "judged_claims_config",
    "leaderboard_config",
    "load_run",
    "personas_config",
    "responses_config",
    "tasks_config",
]

_TASKS_OI = TABLE10_TASKS


@dataclass
class RunInput:
    """One run directory: its manifest fields, claims table and response records."""

    path: Path
    run_id: str
    model: str
    judge: str | None
    smoke_test: bool
    claims: pd.DataFrame
    responses: pd.DataFrame


def load_run(path: str | Path) -> RunInput:
    """Read ``manifest.json``, ``claims.parquet`` and ``responses.jsonl`` of a run directory.

    Raises :class:`BuildError` naming the file for a missing manifest, an unreadable record or a
    claims table without the documented columns. A run without ``claims.parquet`` (not judged yet)
    contributes its responses only.
    """
    from mirage_bench.instruments.records import ResponseRecord
    from mirage_bench.runs import CLAIM_COLUMNS

    run_dir = Path(path)
    manifest_path = run_dir / "manifest.json"
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise BuildError(f"{manifest_path}: cannot read the run manifest ({exc})") from exc
    for key in ("run_id", "model"):
        if not manifest.get(key):
            raise BuildError(f"{manifest_path}: no {key!r}")
    smoke = bool(manifest.get("smoke_test", False))
    claims_path = run_dir / "claims.parquet"
    if claims_path.exists():
        claims = pd.read_parquet(claims_path)
        missing = [c for c in CLAIM_COLUMNS if c not in claims.columns]
        if missing:
            raise BuildError(f"{claims_path}: missing column(s) {missing}")
        claims = claims[list(CLAIM_COLUMNS)].copy()
    else:
        claims = pd.DataFrame(columns=list(CLAIM_COLUMNS))
    claims["smoke_test"] = claims["smoke_test"].astype(bool) | smoke
    claims.insert(0, "run_id", manifest["run_id"])
    rows: dict[tuple[str, ...], dict[str, object]] = {}
    responses_path = run_dir / "responses.jsonl"
    if responses_path.exists():
        for number, line in nonblank_lines(responses_path.read_text(encoding="utf-8")):
            try:
                record = ResponseRecord.model_validate_json(line)
            except ValueError as exc:
                raise BuildError(f"{responses_path}:{number}: {exc}") from exc
            audit = record.self_audit
            # an uncompacted (interrupted, resumed) run appends retries: the last record per key wins,
            # as in RunDir.read, so a retried response is neither duplicated nor double-counted
            rows[record.key()] = {
                "run_id": manifest["run_id"],
                "model": record.model,
                "persona_id": record.persona_id,
                "stereotype_type": record.stereotype_type,
                "task_id": record.task_id,
                "status": record.status,
                "response": record.response,
                "error": record.error,
                "self_audit_status": audit.status,
                "self_audit_claims": [
                    {"claim": c.claim, "category": c.category.value, "reasoning": c.reasoning}
                    for c in audit.claims
                ],
                "self_audit_n_claims": audit.n_claims,
                "self_audit_oi_rate": audit.oi_rate,
                "smoke_test": bool(record.smoke_test or smoke),
            }
    responses = pd.DataFrame(list(rows.values()), columns=list(config_features("responses")))
    return RunInput(
        run_dir, manifest["run_id"], manifest["model"], manifest.get("judge"), smoke, claims, responses
    )


def personas_config() -> ConfigTable:
    """The 150 personas (``mirage_bench.personas``), ground truth flattened into one column per attribute."""
    from mirage_bench.personas import load_personas
    from mirage_bench.types import GROUND_TRUTH_FIELDS

    rows = []
    for persona in load_personas():
        row: dict[str, object] = {
            "persona_id": persona.persona_id,
            "stereotype_type": persona.stereotype_type,
            "source": persona.source,
            "revealed_facts": list(persona.revealed_facts),
        }
        for name in GROUND_TRUTH_FIELDS:
            value = persona.ground_truth.get(name)
            if name == "age":
                row[name] = int(value) if value is not None else None
            elif name == "hobbies":
                row[name] = list(value) if isinstance(value, list) else ([str(value)] if value else [])
            else:
                row[name] = (
                    "; ".join(value) if isinstance(value, list) else (None if value is None else str(value))
                )
        rows.append(row)
    return _table("personas", rows)


def tasks_config() -> ConfigTable:
    """The six tasks with their verbatim prompts and template sha256."""
    from mirage_bench.tasks import TASKS

    rows = [
        {
            "task_id": t.task_id,
            "display_name": t.display_name,
            "groundability_rank": t.groundability_rank,
            "prompt": t.prompt,
            "audit_description": t.audit_description,
            "prompt_sha256": t.rendered_prompt.sha256,
        }
        for t in TASKS
    ]
    return _table("tasks", rows)


def accum_config() -> ConfigTable:
    """The Accum scripts (``mirage_bench.instruments.accum.scripts``)."""
    from mirage_bench.instruments.accum.scripts import load_accum_scripts

    rows = [
        {
            "persona_id": s.persona_id,
            "utterances": list(s.utterances),
            "contradictions": [c.model_dump() for c in s.contradictions],
        }
        for s in load_accum_scripts()
    ]
    return _table("accum_scripts", rows)


def responses_config(runs: Sequence[RunInput]) -> ConfigTable:
    """Response records of every run."""
    frames = [run.responses for run in runs if len(run.responses)]
    return _frame_table("responses", pd.concat(frames, ignore_index=True) if frames else None)


def judged_claims_config(runs: Sequence[RunInput]) -> ConfigTable:
    """Claims tables of every run (one row per judged claim)."""
    frames = [run.claims for run in runs if len(run.claims)]
    return _frame_table("judged_claims", pd.concat(frames, ignore_index=True) if frames else None)


def human_validation_config(rows: list[dict[str, object]]) -> ConfigTable:
    """Rows joined by :func:`mirage_bench.validation.records.join_annotations`."""
    return _table("human_validation", rows)


def _pct(rate: float | None) -> float | None:
    """A rate from :mod:`mirage_bench.metrics.oi` as a percentage rounded to 4 places (None stays)."""
    return None if rate is None or rate != rate else round(100.0 * float(rate), 4)


def _measured_rows(runs: Sequence[RunInput]) -> list[dict[str, object]]:
    claims = pd.concat([run.claims for run in runs if len(run.claims)], ignore_index=True) if runs else None
    if claims is None or claims.empty:
        return []
    responses = pd.concat([run.responses for run in runs], ignore_index=True)
    instance = ["model", "judge", "persona_id", "task_id"]
    judged = claims[["run_id", *instance]].drop_duplicates()
    twice = judged[judged.duplicated(instance, keep=False)]
    if len(twice):
        first = twice.iloc[0]
        raise BuildError(
            f"{twice[instance].drop_duplicates().shape[0]} persona x task instance(s) judged in more "
            f"than one run for the same model and judge (e.g. {first.model} / {first.judge} / "
            f"{first.persona_id} / {first.task_id} in runs {sorted(twice.run_id.unique())}): their "
            "claims would be counted twice in the leaderboard row; pass each instance's run once"
        )
    rows = []
    for (model, judge), group in claims.groupby(["model", "judge"], sort=True):
        try:
            summary = oi_summary(
                group["label"].astype(str).to_numpy(),
                tasks=group["task_id"].astype(str).to_numpy(),
                groups=group["stereotype_type"].astype(str).to_numpy(),
            )
        except ValueError as exc:
            raise BuildError(
                f"leaderboard: claims of {model} judged by {judge}: column 'label' has values "
                f"outside the four labels ({exc})"
            ) from None
        row: dict[str, object] = {
            "model": model,
            "snapshot": model,
            "family": None,
            "judge": judge,
            "source": "measured",
            "reference": "runs " + ", ".join(sorted(group["run_id"].unique())),
            "smoke_test": bool(group["smoke_test"].any()),
            "claims": len(group),
            "responses": int(group[["persona_id", "task_id"]].drop_duplicates().shape[0]),
            **{
                f"{name}_pct": _pct(summary[f"{name}_rate"])
                for name in ("grounded", "reasonable", "stereotype", "fabricated", "oi")
            },
            "derived": "",
        }
        for kind in ("stereotypical", "counter_stereotypical", "neutral"):
            row[f"{kind}_oi_pct"] = _pct(summary["per_group"].get(kind, {}).get("oi_rate"))
        for task in _TASKS_OI:
            row[f"{task}_oi_pct"] = _pct(summary["per_task"].get(task, {}).get("oi_rate"))
        own = responses[(responses["model"] == model) & (responses["run_id"].isin(group["run_id"].unique()))]
        audited = [c["category"] for claims_ in own["self_audit_claims"] for c in claims_]
        row["self_oi_pct"] = _pct(oi_rate(audited))
        row["gap_pp"] = (
            round(row["oi_pct"] - row["self_oi_pct"], 4) if row["self_oi_pct"] is not None else None
        )
        rows.append(row)
    return rows


def leaderboard_config(runs: Sequence[RunInput], *, include_reported: bool = True) -> ConfigTable:
    """Reported rows (the paper's Tables 1, 2, 7, 10) plus one measured row per model x judge of the runs."""
    rows: list[dict[str, object]] = []
    if include_reported:
        from mirage_bench.reported import load_reported, reported_leaderboard

        board = reported_leaderboard()
        derived = load_reported("table1").set_index("model")["derived"]
        for record in board.to_dict("records"):
            record["smoke_test"] = False
            record["responses"] = None
            record["derived"] = str(derived.get(record["model"], ""))
            rows.append(record)
    rows.extend(_measured_rows(runs))
    return _table("leaderboard", rows)


def _table(name: str, rows: list[dict[str, object]]) -> ConfigTable:
    frame = pd.DataFrame(rows) if rows else None
    return _frame_table(name, frame)


def _frame_table(name: str, frame: pd.DataFrame | None) -> ConfigTable:
    features = config_features(name)
    table = ConfigTable(name, features)
    if frame is not None and len(frame):
        for column in features:
            if column not in frame.columns:
                frame[column] = None
        table.splits["train"] = frame[list(features)].reset_index(drop=True)
    return table
