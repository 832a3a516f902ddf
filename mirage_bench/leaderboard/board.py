"""Build the leaderboard table: the paper's reported rows plus rows measured by this package.

One row per model x judge. Reported rows come from :func:`mirage_bench.reported.reported_leaderboard`
(``source="reported"``, the paper's judge). Measured rows come from result files: each finished
submission's run directory in the submission store, and any extra engine run directories, turned
into a row by :func:`measured_row` (claims from ``claims.parquet``, self-audit from
``responses.jsonl``). Rows judged by different judges are never ranked together: :func:`board_view`
shows one judge at a time and hides smoke-test rows unless asked.
"""

from __future__ import annotations

import copy
import functools
import json
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from mirage_bench.reported import TABLE10_TASKS
from mirage_bench.types import LABELS

#: Task ids in the groundability order of Table 3 / Table 10 (least groundable first); the single
#: source is :data:`mirage_bench.reported.TABLE10_TASKS`.
TASK_ORDER: tuple[str, ...] = TABLE10_TASKS
TASK_TITLES: dict[str, str] = {
    "apartment": "Apartment",
    "rec_letter": "Rec. letter",
    "stress_source": "Stress",
    "weekend_itinerary": "Itinerary",
    "dating_profile": "Dating",
    "birthday_gift": "Gift",
}

#: Internal column -> displayed header.
DISPLAY: dict[str, str] = {
    "rank": "#",
    "model": "Model",
    "family": "Family",
    "source": "Source",
    "judge": "Judge",
    "claims": "Claims",
    "faithful_per_response": "Faithful / resp.",
    "claims_per_response": "Claims / resp.",
    "grounded_pct": "Grounded %",
    "reasonable_pct": "Reasonable %",
    "stereotype_pct": "Stereotype %",
    "fabricated_pct": "Fabricated %",
    "oi_pct": "OI %",
    "oi_ci": "OI 95% CI",
    "self_oi_pct": "Self-audit OI %",
    "gap_pp": "Δ (Judge−Self)",
    "pattern": "Pattern",
    **{f"{t}_oi_pct": f"{TASK_TITLES[t]} OI %" for t in TASK_ORDER},
    "stereotypical_oi_pct": "Stereo. OI %",
    "counter_stereotypical_oi_pct": "Counter OI %",
    "stereotype_delta_pp": "Stereo. gap pp",
    "submitted": "Submitted",
    "smoke_test": "Smoke test",
    "flags": "Flags",
}

#: Column groups the column chooser offers; "core" is always shown.
COLUMN_GROUPS: dict[str, tuple[str, ...]] = {
    "core": (
        "rank", "model", "family", "source", "oi_pct", "oi_ci", "faithful_per_response", "claims_per_response"
    ),
    "Composition": ("claims", "grounded_pct", "reasonable_pct", "stereotype_pct", "fabricated_pct"),
    "Self-monitoring": ("self_oi_pct", "gap_pp", "pattern"),
    "Per task": tuple(f"{t}_oi_pct" for t in TASK_ORDER),
    "Stereotype groups": ("stereotypical_oi_pct", "counter_stereotypical_oi_pct", "stereotype_delta_pp"),
    "Submission": ("submitted", "smoke_test", "flags"),
}
DEFAULT_GROUPS: tuple[str, ...] = ("Self-monitoring",)
#: Columns holding a percentage or a percentage-point gap: shown with exactly one decimal.
PERCENT_SUFFIXES: tuple[str, ...] = ("_pct", "_pp")
#: Columns holding a per-response rate: shown with one decimal too.
RATE_COLUMNS: tuple[str, ...] = ("claims_per_response", "faithful_per_response")
#: Badges added to the Model cell of rows that are shown but never ranked.
SMOKE_BADGE = "(smoke test)"
FLAG_BADGE = "⚠ flagged"

log = logging.getLogger(__name__)

def pattern_for(gap_pp: float | None) -> str:
    """Table 2's Under / Calib. / Over pattern for a gap Δ = Judge − Self OI (pp); ``""`` without one.

    The threshold is the metrics area's (:data:`mirage_bench.metrics.selfmon.PATTERN_THRESHOLD_PP`).

    >>> pattern_for(35.7), pattern_for(-0.9), pattern_for(-6.2), pattern_for(None)
    ('Under', 'Calib.', 'Over', '')
    """
    from mirage_bench.metrics.selfmon import monitoring_pattern

    if gap_pp is None or pd.isna(gap_pp):
        return ""
    return monitoring_pattern(float(gap_pp))


@dataclass(frozen=True)
class RowMeta:
    """What a measured row needs besides its claims (from a submission request or a run manifest)."""

    model: str
    family: str = ""
    revision: str = "main"
    submitted: str = ""
    submission_id: str = ""
    link: str = ""


def measured_row(
    claims: pd.DataFrame,
    responses: Sequence[dict[str, Any]] = (),
    meta: RowMeta | None = None,
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    n_judged: int | None = None,
    flags: Sequence[str] = (),
) -> dict[str, Any]:
    """One leaderboard row computed from a run's judged claims (and its responses' self-audits).

    ``claims`` has the ``claims.parquet`` columns (``model, judge, persona_id, stereotype_type,
    task_id, claim_index, claim, label, ...``). The OI 95% CI resamples (persona, task) records.
    ``n_judged`` is the number of responses judged (status ok, including those with no claim; by
    default the (persona, task) records present in ``claims``): the denominator of claims and faithful
    claims per response. ``flags`` are the submission's integrity findings.
    """
    from mirage_bench.metrics import oi as oi_metrics
    from mirage_bench.metrics.tradeoff import claim_yield

    if claims.empty:
        raise ValueError("no judged claims: cannot build a leaderboard row")
    judges = sorted(claims["judge"].unique())
    if len(judges) != 1:
        raise ValueError(f"a leaderboard row needs claims from exactly one judge, got {judges}")
    models = sorted(claims["model"].astype(str).unique())
    if len(models) != 1:
        raise ValueError(f"a leaderboard row needs claims from exactly one model, got {models}")
    labels = claims["label"].astype(str).to_numpy()
    summary = oi_metrics.oi_summary(labels, tasks=claims["task_id"].astype(str).to_numpy(),
                                    groups=claims["stereotype_type"].astype(str).to_numpy())
    records = claims["persona_id"].astype(str) + "\u241f" + claims["task_id"].astype(str)
    low, high = oi_metrics.bootstrap_oi_ci(labels, records.to_numpy(), n_resamples=n_resamples, seed=seed)
    meta = meta or RowMeta(model=str(claims["model"].iloc[0]))
    row: dict[str, Any] = {
        "model": meta.model,
        "revision": meta.revision,
        "family": meta.family,
        "judge": judges[0],
        "source": "measured",
        "claims": int(len(claims)),
        "grounded_pct": 100 * summary["grounded_rate"],
        "reasonable_pct": 100 * summary["reasonable_rate"],
        "stereotype_pct": 100 * summary["stereotype_rate"],
        "fabricated_pct": 100 * summary["fabricated_rate"],
        "oi_pct": 100 * summary["oi_rate"],
        **{
            k: v
            for k, v in claim_yield(
                labels, n_judged if n_judged is not None else int(records.nunique())
            ).items()
            if k in RATE_COLUMNS or k == "n_responses"
        },
        "oi_ci_low": 100 * low,
        "oi_ci_high": 100 * high,
        "smoke_test": bool(claims["smoke_test"].any()) if "smoke_test" in claims else False,
        "submitted": meta.submitted,
        "submission_id": meta.submission_id,
        "reference": meta.link,
        "flags": list(flags),
    }
    for task, rates in summary["per_task"].items():
        row[f"{task}_oi_pct"] = 100 * float(rates["oi_rate"])
    for group, rates in summary["per_group"].items():
        row[f"{group}_oi_pct"] = 100 * float(rates["oi_rate"])
    if summary.get("stereotype_gap") is not None:
        row["stereotype_delta_pp"] = 100 * float(summary["stereotype_gap"])
    self_labels = [
        c.get("category")
        for r in responses
        if isinstance(r.get("self_audit"), dict) and r["self_audit"].get("status", "ok") == "ok"
        for c in r["self_audit"].get("claims") or []
    ]
    if self_labels:
        row["self_oi_pct"] = 100 * float(oi_metrics.oi_summary(self_labels)["oi_rate"])
        row["gap_pp"] = row["oi_pct"] - row["self_oi_pct"]
        row["pattern"] = pattern_for(row["gap_pp"])
    return row


def write_row(path: Path, row: dict[str, Any]) -> None:
    """Store a measured row as JSON (atomically)."""
    from mirage_bench.leaderboard.store import atomic_write_text

    atomic_write_text(path, json.dumps(row, indent=2, default=float))


def load_board(store_root: Path | None = None, run_dirs: Iterable[Path] = ()) -> pd.DataFrame:
    """The full board: reported rows, then measured rows from the store's results and ``run_dirs``.

    A stored row file that cannot be read is left on disk, logged as a warning naming it, and kept
    off the board.
    """
    from mirage_bench.metrics.tradeoff import reported_claim_yield
    from mirage_bench.reported import reported_leaderboard

    reported = reported_leaderboard().copy()
    derived = [
        reported_claim_yield(c, g, r)
        for c, g, r in zip(
            reported["claims"], reported["grounded_pct"], reported["reasonable_pct"], strict=True
        )
    ]
    for col in RATE_COLUMNS:  # derived from Table 1's counts and shares over the paper's 900 instances
        reported[col] = [d[col] for d in derived]
    reported["submitted"] = ""
    reported["smoke_test"] = False
    reported["revision"] = "paper"
    rows: list[dict[str, Any]] = []
    if store_root is not None:
        for path in sorted((Path(store_root) / "results").glob("*/leaderboard_row.json")):
            try:
                rows.append(json.loads(path.read_text(encoding="utf-8")))
            except (OSError, ValueError) as exc:
                log.warning("leaderboard row %s is unreadable and is not shown: %s", path, exc)
                continue
    for run_dir in run_dirs:
        rows.append(_run_dir_row(Path(run_dir)))
    board = pd.concat([reported, pd.DataFrame(rows)], ignore_index=True) if rows else reported
    board["smoke_test"] = board["smoke_test"].fillna(False).astype(bool)
    if "flags" not in board:
        board["flags"] = None
    board["flags"] = [list(f) if isinstance(f, list | tuple) else [] for f in board["flags"]]
    board["flagged"] = [bool(f) for f in board["flags"]]
    for col in ("family", "pattern", "submitted", "reference"):
        if col in board:
            board[col] = board[col].fillna("").astype(str)
    return board


#: The files of a run directory that :func:`row_from_run_dir` reads.
RUN_DIR_FILES = ("claims.parquet", "responses.jsonl", "manifest.json", "judgments.jsonl")


def _run_dir_row(run_dir: Path) -> dict[str, Any]:
    """:func:`row_from_run_dir`, computed once per change of the run's files (path, size, mtime).

    The Space reloads the board on every filter change; a run directory's row only changes when one
    of its files does, so it is not re-read and re-scored each time.
    """
    signature = []
    for name in RUN_DIR_FILES:
        try:
            stat = (run_dir / name).stat()
        except OSError:
            signature.append((name, None, None))
        else:
            signature.append((name, stat.st_mtime_ns, stat.st_size))
    return copy.deepcopy(_run_dir_row_cached(str(run_dir.resolve()), tuple(signature)))


@functools.lru_cache(maxsize=64)
def _run_dir_row_cached(run_dir: str, signature: tuple[Any, ...]) -> dict[str, Any]:
    del signature  # only the cache key
    return row_from_run_dir(Path(run_dir))


def row_from_run_dir(run_dir: Path) -> dict[str, Any]:
    """A measured row from an engine run directory (``claims.parquet`` + ``responses.jsonl``)."""
    claims = pd.read_parquet(run_dir / "claims.parquet")
    responses_path = run_dir / "responses.jsonl"
    responses = []
    if responses_path.exists():
        responses = [
            json.loads(x) for x in responses_path.read_text(encoding="utf-8").splitlines() if x.strip()
        ]
    manifest_path = run_dir / "manifest.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8")) if manifest_path.exists() else {}
    model = str(claims["model"].iloc[0]) if not claims.empty else str(manifest.get("model", run_dir.name))
    meta = RowMeta(model=model, submitted=str(manifest.get("finished_at") or "")[:10])
    from mirage_bench.fileio import read_jsonl_lenient
    from mirage_bench.leaderboard.integrity import submission_flags

    judgments = {  # a torn last line is skipped: that response is not judged yet
        (str(rec.get("persona_id")), str(rec.get("task_id"))): rec
        for rec in read_jsonl_lenient(run_dir / "judgments.jsonl", objects_only=True)
    }
    ok = [j for j in judgments.values() if j.get("status") == "ok"]
    row = measured_row(
        claims,
        responses,
        meta,
        n_judged=len(ok) if ok else None,
        flags=submission_flags(responses, list(judgments.values())),
    )
    judge_config = manifest.get("judge_config") or {}
    if judge_config:  # the judge configuration the run used (mirage_bench.judges.config)
        row["judge_config"] = judge_config["config"]["name"]
        row["judge_config_sha256"] = judge_config["sha256"]
    return row


def judges(board: pd.DataFrame, *, include_smoke: bool = False) -> list[str]:
    """Judges present on the board, the paper's judge first."""
    from mirage_bench.reported import PAPER_JUDGE

    frame = board if include_smoke else board[~board["smoke_test"]]
    found = sorted(set(frame["judge"].astype(str)))
    return sorted(found, key=lambda j: (j != PAPER_JUDGE, j))


#: Shown in the CI column of a reported row (the paper prints no per-model CI).
NO_CI = "not in paper"


def format_ci(low: Any, high: Any) -> str:
    """``"[35.1, 41.0]"``, or ``""`` when the row has no CI.

    >>> format_ci(35.12, 41.0), format_ci(float("nan"), 1.0)
    ('[35.1, 41.0]', '')
    """
    if low is None or high is None or pd.isna(low) or pd.isna(high):
        return ""
    return f"[{low:.1f}, {high:.1f}]"


def board_view(
    board: pd.DataFrame,
    *,
    judge: str | None = None,
    show_smoke: bool = False,
    show_flagged: bool = False,
    families: Sequence[str] = (),
    sources: Sequence[str] = (),
    search: str = "",
    groups: Sequence[str] = DEFAULT_GROUPS,
    sort_by: str = "oi_pct",
    ascending: bool = False,
) -> pd.DataFrame:
    """Filter, rank and format the board for display (one judge; ranks restart per view).

    ``sort_by`` is an internal column name or a displayed header. Smoke-test rows and rows with
    integrity flags are hidden unless ``show_smoke`` / ``show_flagged``; when shown they carry a
    badge in the Model cell and no rank (ranks count the clean rows only, in the sorted order), and
    flagged rows show their reasons in the Flags column. The Judge column appears only when
    ``judge`` is None (a view over several judges). Percentages, gaps and per-response rates are
    strings with exactly one decimal ("13.0"), blank where the row has no value.
    """
    frame = board.copy()
    if "flagged" not in frame:
        frame["flagged"] = False
        frame["flags"] = [[] for _ in range(len(frame))]
    if not show_smoke:
        frame = frame[~frame["smoke_test"]]
    if not show_flagged:
        frame = frame[~frame["flagged"]]
    if judge:
        frame = frame[frame["judge"] == judge]
    if families:
        frame = frame[frame["family"].isin(list(families))]
    if sources:
        frame = frame[frame["source"].isin(list(sources))]
    if search.strip():
        needle = search.strip().lower()
        hay = frame["model"].astype(str).str.lower() + " " + frame["family"].astype(str).str.lower()
        frame = frame[hay.str.contains(needle, regex=False)]
    inverse = {v: k for k, v in DISPLAY.items()}
    key = inverse.get(sort_by, sort_by)
    if key not in frame.columns or key in ("rank", "oi_ci", "flags"):
        key = "oi_pct"
    frame = frame.sort_values(key, ascending=ascending, kind="stable", na_position="last").reset_index(
        drop=True
    )
    unranked = (frame["smoke_test"] | frame["flagged"]).to_numpy()
    ranks, next_rank = [], 1
    for skip in unranked:
        ranks.append("" if skip else str(next_rank))
        next_rank += 0 if skip else 1
    frame["rank"] = ranks
    frame["model"] = [
        " ".join([str(m)] + ([SMOKE_BADGE] if smoke else []) + ([FLAG_BADGE] if flagged else []))
        for m, smoke, flagged in zip(frame["model"], frame["smoke_test"], frame["flagged"], strict=True)
    ]
    frame["flags"] = ["; ".join(f) for f in frame["flags"]]
    frame["oi_ci"] = [
        format_ci(a, b) or (NO_CI if source == "reported" else "")
        for a, b, source in zip(
            frame.get("oi_ci_low", [None] * len(frame)),
            frame.get("oi_ci_high", [None] * len(frame)),
            frame["source"],
            strict=True,
        )
    ]
    columns = list(dict.fromkeys(c for g in ("core", *groups) for c in COLUMN_GROUPS.get(g, ())))
    if judge is None:
        columns.insert(columns.index("source") + 1, "judge")
    if show_flagged and frame["flagged"].any() and "flags" not in columns:
        columns.append("flags")
    out = pd.DataFrame({DISPLAY[c]: frame[c] if c in frame else "" for c in columns})
    for c in columns:
        if c.endswith(PERCENT_SUFFIXES) or c in RATE_COLUMNS:
            out[DISPLAY[c]] = [format_number(v) for v in out[DISPLAY[c]]]
    return out


def format_number(value: Any) -> str:
    """One decimal, always: ``"13.0"``, ``"27.7"``, ``"0.0"``; ``""`` for a missing value.

    >>> format_number(13), format_number(27.66), format_number(-0.04), format_number(float("nan"))
    ('13.0', '27.7', '0.0', '')
    """
    if value is None or value == "" or pd.isna(value):
        return ""
    text = f"{float(value):.1f}"
    return "0.0" if text == "-0.0" else text


def sortable_columns(groups: Sequence[str] = tuple(COLUMN_GROUPS)) -> list[str]:
    """Displayed headers the sort control offers, each once."""
    skip = {"rank", "oi_ci", "flags"}
    keys = dict.fromkeys(c for g in ("core", *groups) for c in COLUMN_GROUPS.get(g, ()) if c not in skip)
    return [DISPLAY[c] for c in keys]


def label_share_columns() -> list[str]:
    """The four composition columns in G, R, S, F order."""
    return [f"{lab.value.split('_')[-1].lower()}_pct" for lab in LABELS]


__all__ = [
    "COLUMN_GROUPS",
    "DISPLAY",
    "RowMeta",
    "board_view",
    "judges",
    "load_board",
    "measured_row",
    "pattern_for",
    "row_from_run_dir",
]


def row_flags(row: dict[str, Any]) -> list[str]:
    """A row's flags as a list of strings (empty when clean; a missing or NaN value is clean).

    >>> row_flags({"flags": ["degenerate"]}), row_flags({"flags": float("nan")}), row_flags({})
    (['degenerate'], [], [])
    """
    value = row.get("flags")
    if isinstance(value, list | tuple):
        return [str(v) for v in value]
    if hasattr(value, "tolist"):
        return [str(v) for v in value.tolist()]
    return []


#: The fields of each row that :func:`board_rows` returns.
ROW_FIELDS: tuple[str, ...] = (
    "rank", "model", "judge", "source", "family", "revision", "claims", "oi_pct", "oi_ci_low",
    "oi_ci_high", "smoke_test", "flags", "submission_id",
    "claims_per_response", "faithful_per_response",
)


def board_rows(
    board: pd.DataFrame, *, judge: str | None = None, include_all: bool = False
) -> list[dict[str, Any]]:
    """The rows the ranked view shows for ``judge``, highest OI first, as plain dicts.

    Smoke-test and flagged rows are left out unless ``include_all``; each row carries ``model``,
    ``judge``, ``smoke_test`` and ``flags`` (a list, empty when clean). Ranks count the returned rows.
    """
    frame = board if judge is None else board[board["judge"] == judge]
    records = frame.sort_values("oi_pct", ascending=False, kind="stable", na_position="last").to_dict(
        "records"
    )
    out = []
    for rec in records:
        flags = row_flags(rec)
        smoke = bool(rec.get("smoke_test"))
        if not include_all and (smoke or flags):
            continue
        row = {k: rec.get(k) for k in ROW_FIELDS if k not in ("rank", "flags", "smoke_test")}
        row.update(rank=len(out) + 1, smoke_test=smoke, flags=flags)
        out.append({k: row.get(k) for k in ROW_FIELDS})
    return out
