"""Agreement between two label files (judge–judge or judge–human): the glue of ``mirage-bench agreement``.

A label file is JSONL keyed by ``claim_id`` with a ``label`` field: what ``judge-claims`` writes
and what the Annotate tab exports; a run's ``claims.parquet`` is read as the labels of its judge
(``claim_id`` = the H.1 item id, as ``judge-claims`` gives the same claims). ``item_id`` is read as
``claim_id`` and ``human_label`` / ``judge_label`` as ``label``, so H.1 sample and annotation files
work as they are. A line whose
label is null (a parse or call failure of a judge) is counted as unlabelled and never scored.

The two files are joined on ``claim_id``; ids in only one file are reported. The statistics are
:func:`mirage_bench.metrics.agreement.agreement` (the one implementation): file A is the
prediction, file B the reference (put the human labels second).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mirage_bench.fileio import nonblank_lines, parse_json_object
from mirage_bench.types import LABELS, Label

_ID_KEYS = ("claim_id", "item_id")
_LABEL_KEYS = ("label", "human_label", "judge_label")
_VALID = {label.value for label in LABELS}


@dataclass
class LabelFile:
    """One label file: ``labels`` by claim id (``None`` when unlabelled) and who labelled it."""

    path: Path
    labels: dict[str, str | None]
    labeller: str = ""
    statuses: dict[str, int] = field(default_factory=dict)

    @property
    def labelled(self) -> dict[str, str]:
        """Only the claims that carry a label."""
        return {k: v for k, v in self.labels.items() if v is not None}


def _parquet_labels(path: Path) -> LabelFile:
    """A run's ``claims.parquet`` as a label file (``claim_id`` = the H.1 item id of each row)."""
    import pandas as pd

    from mirage_bench.judges import annotation_records

    make_item_id = annotation_records().make_item_id
    frame = pd.read_parquet(path)
    missing = {"model", "judge", "persona_id", "task_id", "claim_index", "label"} - set(frame.columns)
    if missing:
        raise ValueError(f"{path}: not a claims table (missing {sorted(missing)})")
    labels = {
        make_item_id(r["model"], r["judge"], r["persona_id"], r["task_id"], int(r["claim_index"])): str(
            r["label"]
        )
        for r in frame.to_dict("records")
    }
    if not labels:
        raise ValueError(f"{path}: no labels")
    return LabelFile(path, labels, ", ".join(sorted(set(frame["judge"].astype(str)))), {"ok": len(labels)})


def read_label_file(path: str | Path) -> LabelFile:
    """Read a label file (JSONL, or a run's ``claims.parquet``); ``ValueError`` names each bad line."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"label file {path} not found")
    if path.suffix == ".parquet":
        return _parquet_labels(path)
    labels: dict[str, str | None] = {}
    statuses: dict[str, int] = {}
    labellers: set[str] = set()
    problems: list[str] = []
    for number, line in nonblank_lines(path.read_text(encoding="utf-8")):
        row, problem = parse_json_object(line)
        if row is None:
            problems.append(f"line {number}: {problem}")
            continue
        claim_id = next((row[k] for k in _ID_KEYS if row.get(k)), None)
        if not isinstance(claim_id, str):
            problems.append(f"line {number}: no claim_id")
            continue
        key = next((k for k in _LABEL_KEYS if k in row), None)
        if key is None:
            problems.append(f"line {number}: no label field ({', '.join(_LABEL_KEYS)})")
            continue
        value = row[key]
        if value is not None and value not in _VALID:
            problems.append(f"line {number}: label {value!r} is not one of {', '.join(sorted(_VALID))}")
            continue
        if claim_id in labels:
            problems.append(f"line {number}: claim_id {claim_id!r} labelled twice")
            continue
        labels[claim_id] = value
        status = str(row.get("status", "ok" if value is not None else "unlabelled"))
        statuses[status] = statuses.get(status, 0) + 1
        who = row.get("judge_config") or row.get("annotator_id") or row.get("judge")
        if who:
            labellers.add(str(who))
    if problems:
        shown = problems[:20] + ([f"... and {len(problems) - 20} more"] if len(problems) > 20 else [])
        raise ValueError(f"{path}: {len(problems)} invalid line(s):\n" + "\n".join(shown))
    if not labels:
        raise ValueError(f"{path}: no labels")
    return LabelFile(path, labels, ", ".join(sorted(labellers)), statuses)


def compare_labels(
    predictions: dict[str, str], references: dict[str, str], *, n_resamples: int = 1000, seed: int = 0
) -> dict[str, Any]:
    """Agreement statistics on the claims both sides labelled (``ValueError`` when none)."""
    from mirage_bench.metrics.agreement import agreement

    common = sorted(set(predictions) & set(references))
    if not common:
        raise ValueError("the two label files share no labelled claim_id")
    return agreement(
        [predictions[c] for c in common], [references[c] for c in common], n_resamples=n_resamples, seed=seed
    )


def compare_files(a: str | Path, b: str | Path, *, n_resamples: int = 1000, seed: int = 0) -> dict[str, Any]:
    """Join two label files on ``claim_id`` and compute their agreement (A = prediction, B = reference).

    Returns ``a`` / ``b`` (path, labeller, claims, unlabelled, statuses), ``matched``,
    ``only_in_a`` / ``only_in_b`` (counts and up to 10 example ids), ``unlabelled_in_matched`` and
    ``statistics`` (the dict of :func:`mirage_bench.metrics.agreement.agreement`, with κ CIs).
    """
    fa, fb = read_label_file(a), read_label_file(b)
    only_a = sorted(set(fa.labels) - set(fb.labels))
    only_b = sorted(set(fb.labels) - set(fa.labels))
    both = set(fa.labels) & set(fb.labels)
    unlabelled = sorted(c for c in both if fa.labels[c] is None or fb.labels[c] is None)
    stats = compare_labels(fa.labelled, fb.labelled, n_resamples=n_resamples, seed=seed)

    def side(f: LabelFile) -> dict[str, Any]:
        return {
            "path": str(f.path),
            "labeller": f.labeller,
            "claims": len(f.labels),
            "unlabelled": sum(1 for v in f.labels.values() if v is None),
            "statuses": f.statuses,
        }

    return {
        "a": side(fa),
        "b": side(fb),
        "matched": len(both),
        "scored": stats["n"],
        "only_in_a": {"count": len(only_a), "examples": only_a[:10]},
        "only_in_b": {"count": len(only_b), "examples": only_b[:10]},
        "unlabelled_in_matched": len(unlabelled),
        "statistics": stats,
    }


def render_comparison(result: dict[str, Any]) -> str:
    """A plain-text report of :func:`compare_files` (the H.2–H.4 layout for any pair)."""
    s = result["statistics"]
    names = [label.value for label in Label]
    short = {"GROUNDED": "G", "INFERRED_REASONABLE": "R", "INFERRED_STEREOTYPE": "S", "FABRICATED": "F"}
    lines = [
        f"A (prediction): {result['a']['path']}"
        + (f"  [{result['a']['labeller']}]" if result["a"]["labeller"] else ""),
        f"B (reference):  {result['b']['path']}"
        + (f"  [{result['b']['labeller']}]" if result["b"]["labeller"] else ""),
        f"joined on claim_id: {result['matched']} matched, {result['scored']} scored; "
        f"{result['only_in_a']['count']} only in A, {result['only_in_b']['count']} only in B, "
        f"{result['unlabelled_in_matched']} matched but unlabelled (parse/call failures, not scored)",
    ]
    for key, name in (("only_in_a", "A"), ("only_in_b", "B")):
        if result[key]["count"]:
            lines.append(
                f"  only in {name} (first {len(result[key]['examples'])}): "
                + ", ".join(result[key]["examples"])
            )

    def ci(key: str) -> str:
        if key not in s:
            return ""
        lo, hi = s[key]
        return f"  95% CI [{lo:.3f}, {hi:.3f}] (bootstrap, {s['n_resamples']} resamples)"

    total = s["disagreements"]
    lines += [
        "",
        f"four-class: accuracy {s['accuracy']:.4f} ({s['n'] - total}/{s['n']})  "
        f"Cohen's kappa {s['kappa']:.3f}{ci('kappa_ci')}",
        f"            macro-F1 {s['macro_f1']:.3f}",
        f"binary (S+F vs G+R): accuracy {s['binary_accuracy']:.4f}  "
        f"kappa {s['binary_kappa']:.3f}{ci('binary_kappa_ci')}",
        "",
        "per class      precision  recall   F1",
    ]
    for name in names:
        lines.append(
            f"  {short[name]} {name:<22}"[:26].ljust(26)
            + f"{s['per_class_precision'][name]:.3f}     {s['per_class_recall'][name]:.3f}   "
            f"{s['per_class_f1'][name]:.3f}"
        )
    lines += [
        "",
        "confusion (rows = B reference, columns = A prediction)",
        "      " + "".join(f"{short[n]:>6}" for n in names),
    ]
    for name, row in zip(names, s["confusion_matrix"], strict=True):
        lines.append(f"  {short[name]:<4}" + "".join(f"{v:>6}" for v in row))
    d = s["disagreements_by_distance"]
    total = s["disagreements"]
    share = (lambda k: f" ({d[k] / total:.0%})") if total else (lambda k: "")
    lines += [
        "",
        f"disagreements: {total}; by ordinal distance on G-R-S-F: "
        f"1: {d[1]}{share(1)}, 2: {d[2]}{share(2)}, 3: {d[3]}{share(3)}",
    ]
    return "\n".join(lines)
