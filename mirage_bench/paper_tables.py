"""The paper's per-model tables (4, 6, 7, 8, 10) measured from stored runs, beside the reported ones.

Reads run folders (the store's ``results/*/`` and any engine run directories: ``claims.parquet``,
``responses.jsonl``, ``accum.jsonl``) and computes every number with
:func:`mirage_bench.metrics.tables.run_tables`; the Space's Tables tab only renders the result.
Measured rows of Tables 6, 7 and 10 depend on the judge and are shown one judge at a time; Accum
(Tables 4 and 8) has no judge. Smoke-test records (embedded local model, simulation) are left out
unless asked for, and flagged when included. A model measured in two runs gets one row per run
(``model [run]``), never a pooled row.

>>> sorted(TABLE_NAMES)
['table10', 'table4', 'table6', 'table7', 'table8']
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from mirage_bench.fileio import read_jsonl_lenient
from mirage_bench.metrics.tables import TABLE_TITLES, run_tables

log = logging.getLogger(__name__)

TABLE_NAMES: tuple[str, ...] = tuple(TABLE_TITLES)
#: Tables whose numbers come from the judge's labels (the others are Accum, judge-free).
JUDGED_TABLES: frozenset[str] = frozenset({"table6", "table7", "table10"})
#: The Accum condition of the paper's Tables 4 and 8 (the G.7 prompt).
PAPER_CONDITION = "accum_update"
#: Appended to the model name of smoke-test rows (shown only when asked for; never a measurement).
SMOKE_MARK = "[SMOKE TEST]"


@dataclass
class MeasuredRecords:
    """Everything the tables read, pooled over run folders (model names made unique per run)."""

    claims: pd.DataFrame
    responses: list[dict[str, Any]] = field(default_factory=list)
    accum: list[dict[str, Any]] = field(default_factory=list)
    #: Folders that could not be read, with the reason (shown, never silently skipped).
    problems: list[str] = field(default_factory=list)

    def judges(self) -> list[str]:
        """Judges of the measured claims."""
        return sorted(set(self.claims["judge"].astype(str))) if not self.claims.empty else []


def run_folders(store_root: Path | None, run_dirs: Iterable[Path] = ()) -> list[Path]:
    """The store's result folders, then the given run directories (each once)."""
    found: list[Path] = []
    if store_root is not None:
        found += sorted(p for p in (Path(store_root) / "results").glob("*") if p.is_dir())
    found += [Path(d) for d in run_dirs]
    unique: dict[Path, None] = {}
    for folder in found:
        unique.setdefault(folder.resolve(), None)
    return list(unique)


def load_records(store_root: Path | None, run_dirs: Iterable[Path] = (), *,
                 include_smoke: bool = False) -> MeasuredRecords:
    """Claims, responses and Accum records of every run folder (see the module docstring)."""
    folders = run_folders(store_root, run_dirs)
    frames, responses, accum, problems = [], [], [], []
    seen_models: dict[str, int] = {}
    per_folder = []
    for folder in folders:
        try:
            parquet = folder / "claims.parquet"
            claims = pd.read_parquet(parquet) if parquet.exists() else None
            # lenient: a worker may be appending the last line right now
            folder_accum = read_jsonl_lenient(folder / "accum.jsonl", objects_only=True)
            folder_responses = read_jsonl_lenient(folder / "responses.jsonl", objects_only=True)
        except (OSError, ValueError) as exc:
            problems.append(f"{folder.name}: {exc}")
            log.warning("run folder %s is unreadable and is not in the tables: %s", folder, exc)
            continue
        models = set() if claims is None else set(claims["model"].astype(str))
        models |= {str(a.get("model", "")) for a in folder_accum}
        for m in models:
            seen_models[m] = seen_models.get(m, 0) + 1
        per_folder.append((folder, claims, folder_responses, folder_accum))
    for folder, claims, folder_responses, folder_accum in per_folder:
        def label(model: Any, smoke: bool, folder: Path = folder) -> str:
            name = str(model) if seen_models.get(str(model), 0) <= 1 else f"{model} [{folder.name}]"
            return f"{name} {SMOKE_MARK}" if smoke else name

        smoke_models: set[str] = set()
        if claims is not None and not claims.empty:
            smoke = claims["smoke_test"].fillna(False).astype(bool) if "smoke_test" in claims else None
            if smoke is not None:
                smoke_models = set(claims.loc[smoke, "model"].astype(str))
                if not include_smoke:
                    claims = claims[~smoke]
            names = [label(m, m in smoke_models) for m in claims["model"].astype(str)]
            frames.append(claims.assign(model=names))
        for r in folder_responses:
            smoke_response = str(r.get("model", "")) in smoke_models
            if include_smoke or not smoke_response:  # like the claims and Accum records
                responses.append({**r, "model": label(r.get("model", ""), smoke_response)})
        accum += [{**a, "model": label(a.get("model", ""), bool(a.get("smoke_test")))} for a in folder_accum
                  if include_smoke or not a.get("smoke_test")]
    claims = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(
        columns=["model", "judge", "persona_id", "stereotype_type", "task_id", "label", "smoke_test"])
    return MeasuredRecords(claims, responses, accum, problems)


def measured_tables(records: MeasuredRecords, judge: str | None, *,
                    median_ties: str = "negative") -> dict[str, pd.DataFrame]:
    """The measured tables: judged ones from ``judge``'s claims only, Accum ones from every record."""
    claims = records.claims
    claims = claims[claims["judge"].astype(str) == judge] if judge else claims.iloc[0:0]
    tables = run_tables(claims if not claims.empty else None, records.responses, records.accum,
                        median_ties=median_ties)
    out = {}
    for name, frame in tables.items():
        frame = frame.copy()
        frame["source"] = "measured"
        frame["judge"] = judge if name in JUDGED_TABLES else ""
        out[name] = frame
    return out


def side_by_side(name: str, measured: dict[str, pd.DataFrame], *,
                 show_reported: bool = True) -> pd.DataFrame:
    """Reported rows of table ``name`` (the paper's) followed by the measured rows, common columns."""
    from mirage_bench.reported import load_reported

    if name not in TABLE_TITLES:
        raise KeyError(f"unknown table {name!r}; choose from {', '.join(TABLE_NAMES)}")
    parts = []
    if show_reported:
        reported = load_reported(name).drop(columns=["snapshot", "family", "derived", "reference"],
                                            errors="ignore")
        reported = reported.drop(columns=["row_type"], errors="ignore")
        if name in ("table4", "table8"):
            reported.insert(1, "condition", PAPER_CONDITION)
        parts.append(reported)
    if name in measured:
        parts.append(measured[name])
    if not parts:
        return pd.DataFrame()
    frame = pd.concat(parts, ignore_index=True, sort=False)
    first = ["source", "model", "condition", "judge"]
    ordered = [c for c in first if c in frame.columns] + [c for c in frame.columns if c not in first]
    return frame[ordered]
