"""Table 3 / Table 5 shaped evaluation of score files against human preferences (seed 003, §6).

Input: labelled pairs and one or more score files (:class:`~mirage_bench.reward.data.ScoreRecord`
JSONL, any number of methods). Evaluation uses the clear-preference subset by default. For every
method: accuracy overall and per generator (a p_memory of exactly 0.5 earns half credit), the rate
at which the method picks the memory response next to the humans' rate, the failures, and
selective accuracy at 25/50/75/100% coverage ranked by |p − 0.5|; for two-order judges the
order-agreement rate and the accuracy on the agreeing subset with that subset's own majority rate.
The statistics come from :func:`mirage_bench.metrics.reward.reward_accuracy` (tie policy "half").
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from mirage_bench.metrics.reward import reward_accuracy
from mirage_bench.reward.data import (
    DataError,
    PreferencePair,
    ScoredPair,
    ScoreRecord,
    is_flagged_source,
    read_jsonl,
    write_jsonl,
)

COVERAGES: tuple[float, ...] = (0.25, 0.5, 0.75, 1.0)
DEFAULT_STORE = Path("submissions") / "store" / "reward"


@dataclass
class EvaluationReport:
    """Table 3 (accuracy) and Table 5 (selective accuracy) plus per-method diagnostics."""

    table3: pd.DataFrame
    table5: pd.DataFrame
    order: pd.DataFrame
    n_pairs: int
    human_memory_rate: float
    majority_rate: float
    majority_class: str
    subset: str
    #: Methods whose scores came from a smoke-test model (their numbers are not results).
    smoke_methods: list[str] = field(default_factory=list)
    #: Whether the evaluated pairs are SYNTHETIC (fixtures, or made by a scripted/smoke-test model).
    synthetic: bool = False
    #: Methods that scored pairs their model was fitted on (``{method: n_pairs}``): not held-out.
    in_sample: dict[str, int] = field(default_factory=dict)

    def format(self) -> str:
        """Plain-text tables for the terminal."""
        parts = []
        if self.smoke_methods:
            parts += [
                f"SMOKE TEST: {', '.join(self.smoke_methods)} come from a smoke-test model; "
                "their numbers only show that the pipeline runs and are not results.",
                "",
            ]
        for method, n in sorted(self.in_sample.items()):
            parts += [
                f"WARNING: IN-SAMPLE: {method} scored {n} pair(s) its model was trained on (or from its "
                "training participants); its accuracy is not a held-out result.",
                "",
            ]
        if self.synthetic:
            parts += [
                "SYNTHETIC pairs: these are fixtures (or pairs made by a scripted / smoke-test model); the "
                "numbers below show that the pipeline runs and are not results about any model or people.",
                "",
            ]
        parts += [
            f"Evaluation subset: {self.subset} ({self.n_pairs} pairs); humans chose the memory response in "
            f"{100 * self.human_memory_rate:.1f}%; "
            f"majority ({self.majority_class}) = {100 * self.majority_rate:.1f}%",
            "",
            "Table 3 - preference prediction accuracy (%)",
            self.table3.to_string(float_format="%.1f"),
            "",
            "Table 5 - selective accuracy (%) by coverage",
            self.table5.to_string(float_format="%.1f"),
        ]
        if not self.order.empty:
            parts += ["", "Two-order judges", self.order.to_string(float_format="%.1f")]
        return "\n".join(parts)


def is_smoke_scores(records: Sequence[ScoreRecord]) -> bool:
    """Whether any record was produced by a smoke-test model (``details["smoke_test"]``)."""
    return any(bool(r.details.get("smoke_test")) for r in records)


def load_scores(paths: Sequence[str | Path]) -> dict[str, list[ScoreRecord]]:
    """Read score files; group records by method; refuse an empty file and a (method, pair) scored twice."""
    by_method: dict[str, list[ScoreRecord]] = defaultdict(list)
    seen: set[tuple[str, str]] = set()
    for path in paths:
        records = read_jsonl(path, ScoreRecord)
        if not records:
            raise DataError(f"{path}: no scores (the file is empty)")
        for rec in records:
            key = (rec.method, rec.pair_id)
            if key in seen:
                raise DataError(f"{path}: pair {rec.pair_id!r} scored twice by method {rec.method!r}")
            seen.add(key)
            by_method[rec.method].append(rec)
    return dict(by_method)


def select_pairs(pairs: Sequence[PreferencePair], subset: str) -> list[PreferencePair]:
    """``clear`` (much-better only, the paper's test set) or ``strict`` (every non-tie)."""
    if subset == "clear":
        return [p for p in pairs if p.is_clear]
    if subset == "strict":
        return [p for p in pairs if p.human_prefers_memory is not None]
    raise ValueError(f"unknown subset {subset!r} (clear, strict)")


def evaluate_scores(
    pairs: Sequence[PreferencePair], scores: dict[str, list[ScoreRecord]], *, subset: str = "clear"
) -> EvaluationReport:
    """Build the Table 3 / Table 5 shaped report for every method in ``scores``."""
    chosen = select_pairs(pairs, subset)
    if not chosen:
        raise DataError(f"no pairs in the {subset!r} subset")
    ids = {p.pair_id for p in pairs}
    y_all = np.array([int(bool(p.human_prefers_memory)) for p in chosen])
    generators = sorted({p.generator for p in chosen})
    human_rate = float(y_all.mean())
    predicts_memory = human_rate > 0.5
    maj_class = "memory" if predicts_memory else "no memory"
    rows3: list[dict[str, object]] = []
    rows5: list[dict[str, object]] = []
    rows_o: list[dict[str, object]] = []
    for method, recs in sorted(scores.items()):
        unknown = [r.pair_id for r in recs if r.pair_id not in ids]
        if unknown:
            raise DataError(f"method {method!r} scores unknown pair_ids, e.g. {unknown[:3]}")
        by_id = {r.pair_id: r for r in recs}
        usable = [p for p in chosen if p.pair_id in by_id and by_id[p.pair_id].p_memory is not None]
        missing = len(chosen) - len(usable)
        if not usable:
            rows3.append({"method": method, "n": 0, "failed_or_missing": missing})
            continue
        prob = np.array([by_id[p.pair_id].p_memory for p in usable], dtype=float)
        y = np.array([int(bool(p.human_prefers_memory)) for p in usable])
        res = reward_accuracy(prob, y, generators=[p.generator for p in usable], coverages=COVERAGES)
        row: dict[str, object] = {
            "method": method,
            "n": len(usable),
            "failed_or_missing": missing,
            "overall": 100 * res["accuracy"],
        }
        for g in generators:
            row[g] = 100 * res["per_generator"][g]["accuracy"] if g in res["per_generator"] else np.nan
        row["chose_memory"] = 100 * res["memory_selection_rate"]
        rows3.append(row)
        rows5.append(
            {"method": method, **{f"{int(c * 100)}%": 100 * res["selective_accuracy"][c] for c in COVERAGES}}
        )
        agree = [by_id[p.pair_id].order_agreement for p in usable]
        if any(a is not None for a in agree):
            mask = np.array([bool(a) for a in agree])
            sub = reward_accuracy(prob[mask], y[mask]) if mask.any() else None
            rows_o.append(
                {
                    "method": method,
                    "order_agreement": 100 * mask.mean(),
                    "acc_on_agreeing": 100 * sub["accuracy"] if sub else np.nan,
                    "majority_on_agreeing": 100 * sub["majority_baseline"] if sub else np.nan,
                    "n_agreeing": int(mask.sum()),
                }
            )
    per_gen = {
        g: float(np.mean([y_all[i] for i, p in enumerate(chosen) if p.generator == g])) for g in generators
    }
    rows3.append(
        {
            "method": f"majority (always {maj_class})",
            "n": len(chosen),
            "failed_or_missing": 0,
            "overall": 100 * max(human_rate, 1 - human_rate),
            **{g: 100 * (r if predicts_memory else 1 - r) for g, r in per_gen.items()},
            "chose_memory": 100.0 if predicts_memory else 0.0,
        }
    )
    smoke = sorted(m for m, recs in scores.items() if is_smoke_scores(recs))
    chosen_ids = {p.pair_id for p in chosen}
    in_sample = {
        m: n
        for m, recs in scores.items()
        if (n := sum(bool(r.details.get("in_sample")) for r in recs if r.pair_id in chosen_ids))
    }
    for row in rows3:
        if smoke:
            row["smoke_test"] = row["method"] in smoke
        if in_sample:
            row["in_sample"] = in_sample.get(str(row["method"]), 0)
    table3 = pd.DataFrame(rows3).set_index("method")
    table5 = pd.DataFrame(rows5).set_index("method") if rows5 else pd.DataFrame()
    order = pd.DataFrame(rows_o).set_index("method") if rows_o else pd.DataFrame()
    return EvaluationReport(
        table3, table5, order, len(chosen), human_rate, max(human_rate, 1 - human_rate), maj_class, subset,
        smoke,
        any(is_flagged_source(p.source) for p in chosen),
        in_sample,
    )


def write_scored_sets(
    pairs: Sequence[PreferencePair],
    scores: dict[str, list[ScoreRecord]],
    out_dir: str | Path = DEFAULT_STORE,
    *,
    prefix: str = "",
) -> list[Path]:
    """Write one scored pair set per method (``<out_dir>/<prefix><method>.jsonl``) for the Space.

    Only scores of ``pairs`` (e.g. the evaluated subset) with a strict label and a score are written.
    The name comes from :func:`scored_set_name`: a set of synthetic pairs is called
    ``synthetic_…``, one scored by a smoke-test model ``smoke_…`` and one with in-sample scores
    ``insample_…``, so that the Space never shows such results under a name that could pass for
    data; each row also carries those flags (:class:`~mirage_bench.reward.data.ScoredPair`).
    """
    from mirage_bench.reward.data import scored_pairs

    out = []
    keep = {p.pair_id for p in pairs}
    synthetic = any(is_flagged_source(p.source) for p in pairs)
    for method, recs in sorted(scores.items()):
        mine = [r for r in recs if r.pair_id in keep]
        rows: list[ScoredPair] = scored_pairs(pairs, mine)
        name = scored_set_name(
            method,
            prefix,
            synthetic=synthetic,
            smoke=is_smoke_scores(mine),
            in_sample=any(r.details.get("in_sample") for r in mine),
        )
        out.append(write_jsonl(Path(out_dir) / name, rows))
    return out


#: File-name tags of scored pair sets whose numbers are not results (see :func:`scored_set_name`).
SET_TAGS: tuple[str, ...] = ("smoke_", "synthetic_", "insample_")


def scored_set_name(
    method: str, prefix: str = "", *, synthetic: bool = False, smoke: bool = False, in_sample: bool = False
) -> str:
    """File name of a scored pair set: ``[smoke_][insample_][synthetic_]<prefix>_<method>.jsonl``.

    A prefix is joined to the method with ``_`` unless it already ends in ``_``, ``-`` or ``.``; a
    tag the prefix already carries is not repeated.

    >>> scored_set_name("memory_aware_rm", "synthetic", synthetic=True)
    'synthetic_memory_aware_rm.jsonl'
    >>> scored_set_name("direct_judge_vote", "run1", smoke=True, synthetic=True)
    'smoke_synthetic_run1_direct_judge_vote.jsonl'
    """
    if prefix and not prefix.endswith(("_", "-", ".")):
        prefix += "_"
    name = prefix + method
    for tag, on in (("synthetic_", synthetic), ("insample_", in_sample), ("smoke_", smoke)):
        if on and tag not in name:
            name = tag + name
    return name + ".jsonl"


def is_flagged_set_name(name: str) -> bool:
    """Whether a scored pair set's file name marks it as smoke-test, SYNTHETIC or in-sample.

    The one check shared by :func:`write_scored_sets` (which names the files) and the Space.

    >>> is_flagged_set_name("synthetic_memory_aware_rm.jsonl"), is_flagged_set_name("study_rm.jsonl")
    (True, False)
    """
    return any(tag in name for tag in SET_TAGS)


def summarize_scored_set(path: str | Path) -> dict[str, object]:
    """:func:`mirage_bench.metrics.reward.reward_accuracy` of a scored pair set (accuracy, majority,
    memory rates, selective accuracy, per generator)."""
    rows = read_jsonl(path, ScoredPair)
    if not rows:
        raise DataError(f"{path}: empty scored pair set")
    return reward_accuracy(
        [r.p_memory for r in rows],
        [int(r.human_prefers_memory) for r in rows],
        generators=[r.generator for r in rows],
        coverages=COVERAGES,
    )
