"""The MirageBench paper's published tables, transcribed as CSV (``mirage_bench/data/reported/``).

Every row carries ``source="reported"`` and a ``reference`` naming the seed table it was copied
from; rows of the MirageBench paper (seed 000) also carry the paper's judge,
:data:`PAPER_JUDGE`. Nothing here was measured by this package: these are the published figures,
used as reference values in tests and as "reported" rows on the leaderboard.

A value the paper does not print but that follows arithmetically from a row is filled in and named
in that row's ``derived`` column (only Table 1's ``reasonable_pct`` = 100 − grounded − stereotype −
fabricated, because Table 1 prints no Reasonable column).

>>> t1 = load_reported("table1")
>>> int(t1.loc[t1.row_type == "model", "claims"].sum())
143616
>>> board = reported_leaderboard()
>>> len(board), board.loc[board.model == "Qwen3-8B", "oi_pct"].item()
(12, 48.7)
>>> sorted(board.family.unique())[:3]
['Anthropic', 'DeepSeek', 'Google']
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from mirage_bench.paths import DATA_DIR

#: Folder holding the transcribed CSV files.
REPORTED_DIR: Path = DATA_DIR / "reported"

#: The judge used for every judged number of the MirageBench paper (Table 9, "Judge model").
PAPER_JUDGE = "anthropic:claude-opus-4-7-20260610"

#: Short table name -> CSV file stem.
TABLES: dict[str, str] = {
    "table1": "table1_leaderboard",
    "table2": "table2_self_monitoring",
    "table3": "table3_task_composition",
    "table4": "table4_accum_growth",
    "table5": "table5_task_claims",
    "table6": "table6_within_model",
    "table7": "table7_stereotype_groups",
    "table8": "table8_accum",
    "table10": "table10_model_task",
    "table11": "table11_agreement",
    "h3": "h3_confusion",
    "statistics": "reported_statistics",
    "seed003_reward": "seed003_reward",
}

#: Model families of the paper's 12 models (§4.4 / Table 9), keyed by the tables' model names.
MODEL_FAMILIES: dict[str, str] = {
    "GPT-5.5": "OpenAI",
    "GPT-5.4-nano": "OpenAI",
    "GPT-4o-mini": "OpenAI",
    "Claude-Opus-4-6": "Anthropic",
    "Gemini-3.1-pro": "Google",
    "Gemini-3-flash": "Google",
    "DeepSeek-v4-pro": "DeepSeek",
    "DeepSeek-v4-flash": "DeepSeek",
    "Qwen3.6-plus": "Qwen",
    "Qwen3-8B": "Qwen",
    "GLM-5.1": "Zhipu/GLM",
    "Kimi-K2.5": "Moonshot/Kimi",
}

#: Task ids (``mirage_bench.tasks``) in Table 10's column order.
TABLE10_TASKS: tuple[str, ...] = (
    "apartment",
    "rec_letter",
    "stress_source",
    "weekend_itinerary",
    "dating_profile",
    "birthday_gift",
)

_STRING_COLUMNS = (
    "model", "snapshot", "family", "row_type", "pattern", "derived", "judge", "source", "reference",
    "task", "task_id", "human_label", "metric", "statistic", "unit", "evaluator",
)


def reported_tables() -> list[str]:
    """Names accepted by :func:`load_reported` (short names; the CSV stems work too)."""
    return sorted(TABLES)


def load_reported(table: str) -> pd.DataFrame:
    """Load one transcribed table as a DataFrame.

    ``table`` is a short name (``"table1"``, ``"h3"``, ``"statistics"``, …; see
    :func:`reported_tables`) or a CSV stem (``"table1_leaderboard"``). Text columns hold ``""``
    where the paper prints nothing (e.g. the family of the Mean row). Raises ``KeyError`` for an
    unknown name.

    >>> load_reported("h3").set_index("human_label").loc["FABRICATED", "judge_FABRICATED"].item()
    96
    """
    stem = TABLES.get(table, table)
    if stem not in TABLES.values():
        raise KeyError(f"unknown reported table {table!r}; known: {', '.join(reported_tables())}")
    frame = pd.read_csv(REPORTED_DIR / f"{stem}.csv", dtype={column: str for column in _STRING_COLUMNS})
    for column in _STRING_COLUMNS:
        if column in frame.columns:
            frame[column] = frame[column].fillna("")
    if "claims" in frame.columns:
        frame["claims"] = frame["claims"].astype("Int64")
    return frame


def reported_statistic(name: str) -> float:
    """One scalar from ``reported_statistics.csv`` (e.g. ``"micro_oi_pct"``).

    >>> reported_statistic("self_vs_judge_spearman_rho")
    -0.6
    """
    stats = load_reported("statistics").set_index("statistic")
    if name not in stats.index:
        raise KeyError(f"unknown reported statistic {name!r}")
    return float(stats.loc[name, "value"])


def _models(table: str) -> pd.DataFrame:
    frame = load_reported(table)
    return frame[frame.row_type == "model"].set_index("model")


def reported_leaderboard() -> pd.DataFrame:
    """One row per model of the paper, joining Tables 1, 2, 7 and 10.

    Columns: ``model``, ``snapshot``, ``family``, ``judge``, ``claims``, the four composition
    shares and ``oi_pct`` (Table 1), ``self_oi_pct``, ``gap_pp``, ``pattern`` (Table 2),
    ``stereotypical_oi_pct``, ``counter_stereotypical_oi_pct``, ``neutral_oi_pct``,
    ``stereotype_delta_pp`` (Table 7), ``<task_id>_oi_pct`` for the six tasks (Table 10),
    ``source`` (``"reported"``) and ``reference``. Sorted by OI descending, as Table 1.
    Raises ``ValueError`` if the tables disagree on a model's OI (a transcription error).
    """
    t1, t2, t7, t10 = (_models(t) for t in ("table1", "table2", "table7", "table10"))
    if not (set(t1.index) == set(t2.index) == set(t7.index) == set(t10.index)):
        raise ValueError("reported tables 1, 2, 7 and 10 list different models")
    for other, column in ((t2, "judge_oi_pct"), (t10, "all_oi_pct")):
        mismatch = (t1["oi_pct"] - other.loc[t1.index, column]).abs() > 1e-9
        if mismatch.any():
            raise ValueError(f"Table 1 OI disagrees with {column} for {sorted(t1.index[mismatch])}")
    board = t1[["snapshot", "family", "judge", "claims", "grounded_pct", "reasonable_pct",
                "stereotype_pct", "fabricated_pct", "oi_pct"]].copy()
    board = board.join(t2[["self_oi_pct", "gap_pp", "pattern"]])
    board = board.join(
        t7[["stereotypical_oi_pct", "counter_stereotypical_oi_pct", "neutral_oi_pct", "delta_pp"]].rename(
            columns={"delta_pp": "stereotype_delta_pp"}
        )
    )
    board = board.join(t10[[f"{task}_oi_pct" for task in TABLE10_TASKS]])
    board["claims"] = board["claims"].astype(int)
    board["source"] = "reported"
    board["reference"] = "seed 000 Tables 1, 2, 7, 10"
    board = board.reset_index().sort_values("oi_pct", ascending=False, kind="stable").reset_index(drop=True)
    return board
