"""How far each judge on the board has been validated: the data behind the Space's Judges view.

For every judge with rows on the board: its judge config(s), its agreement with human labels
(kappa with bootstrap CI and n, from the store's annotation samples of that judge's claims; for the
paper's judge the paper's own H.3 figure, marked *reported*), its agreement with the paper's judge
config where both labelled the canary claims, and its latest drift-canary run. A judge without
human validation says so. All statistics come from :mod:`mirage_bench.metrics.agreement`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

NOT_VALIDATED = "NOT VALIDATED against human labels"


def _fmt_kappa(kappa: float | None, ci: Any, n: int | None) -> str:
    if kappa is None or n is None:
        return ""
    interval = f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else ""
    return f"{kappa:.3f}{interval} (n={n})"


def human_agreement_by_judge(store_root: str | Path, *, n_resamples: int = 1000) -> dict[str, dict[str, Any]]:
    """Agreement of each judge's labels with the human labels of the annotation samples of its claims."""
    from mirage_bench.judges import annotation_records

    load_validation_sample = annotation_records().load_validation_sample
    from mirage_bench.fileio import read_jsonl_lenient
    from mirage_bench.judges.agreement_files import compare_labels

    root = Path(store_root)
    judge_labels: dict[str, dict[str, str]] = {}
    human: dict[str, dict[str, str]] = {}
    for sample_path in sorted((root / "annotation" / "samples").glob("*.jsonl")):
        try:
            items = load_validation_sample([sample_path])
        except ValueError:
            continue
        by_id = {i.item_id: i for i in items}
        for label_file in sorted((root / "annotation" / "labels" / sample_path.stem).glob("*.jsonl")):
            latest = {
                r["item_id"]: r["human_label"]
                for r in read_jsonl_lenient(label_file, objects_only=True)
                if r.get("item_id") in by_id and r.get("human_label")
            }
            for item_id, label in latest.items():
                item = by_id[item_id]
                key = f"{label_file.stem}:{item_id}"
                judge_labels.setdefault(item.judge, {})[key] = item.judge_label.value
                human.setdefault(item.judge, {})[key] = label
    out = {}
    for judge, predictions in judge_labels.items():
        stats = compare_labels(predictions, human[judge], n_resamples=n_resamples)
        out[judge] = {
            "kappa": stats["kappa"],
            "kappa_ci": stats.get("kappa_ci"),
            "n": stats["n"],
            "accuracy": stats["accuracy"],
        }
    return out


def _canary_labels(store_root: Path, record: dict[str, Any]) -> dict[str, str]:
    from mirage_bench.judges.claims import read_done

    path = store_root / record["labels_file"]
    return {k: v.label.value for k, v in read_done(path).items() if v.label is not None}


def judges_overview(store_root: str | Path, board: pd.DataFrame, *, n_resamples: int = 1000) -> pd.DataFrame:
    """One row per judge on the board (smoke-test judges included and flagged)."""
    from mirage_bench.judges.agreement_files import compare_labels
    from mirage_bench.judges.canary import canary_history, drift
    from mirage_bench.reported import PAPER_JUDGE, reported_statistic

    root = Path(store_root)
    humans = human_agreement_by_judge(root, n_resamples=n_resamples)
    history = drift(canary_history(root))
    latest_paper = next((h for h in reversed(history) if h.get("judge_config") == "paper"), None)
    paper_labels = _canary_labels(root, latest_paper) if latest_paper else {}
    rows = []
    for judge, frame in board.groupby(board["judge"].astype(str), sort=True):
        configs = sorted({str(c) for c in frame.get("judge_config", pd.Series(dtype=str)).dropna() if str(c)})
        sources = sorted(set(frame["source"].astype(str)))
        smoke = bool(frame["smoke_test"].astype(bool).all())
        human = humans.get(judge)
        if human is not None:
            human_text = _fmt_kappa(human["kappa"], human["kappa_ci"], human["n"])
            validation = f"validated against human labels (n={human['n']})"
        elif judge == PAPER_JUDGE and "reported" in sources:
            kappa, n = reported_statistic("agreement_kappa"), 400
            human_text = f"{kappa:.3f} (n={n}, reported: paper App. H.3, no CI printed)"
            validation = "validated in the paper (reported, one annotator)"
        else:
            human_text = ""
            validation = NOT_VALIDATED
        runs = [h for h in history if h.get("spec") == judge]
        last = runs[-1] if runs else None
        vs_paper = ""
        if last is not None and last.get("judge_config") != "paper" and paper_labels:
            mine = _canary_labels(root, last)
            try:
                stats = compare_labels(mine, paper_labels, n_resamples=n_resamples)
                vs_paper = _fmt_kappa(stats["kappa"], stats.get("kappa_ci"), stats["n"])
            except ValueError:
                vs_paper = "no shared claims"
        rows.append(
            {
                "judge": judge,
                "judge config": ", ".join(configs) or ("paper (reported)" if "reported" in sources else ""),
                "rows": int(len(frame)),
                "source": ", ".join(sources),
                "smoke test": smoke,
                "validation": validation,
                "human kappa [95% CI] (n)": human_text,
                "vs paper judge kappa (n)": vs_paper,
                "canary (last)": (
                    f"{last['date'][:10]}: "
                    + _fmt_kappa(last.get("kappa"), last.get("kappa_ci"), last.get("scored"))
                    + f" vs {'human' if last.get('reference_is_human') else 'first-ranking judge'}"
                    if last
                    else "never run"
                ),
                "drift": "; ".join(last["drift"]) if last and last["drift"] else ("none" if last else ""),
            }
        )
    return pd.DataFrame(rows)


def canary_table(store_root: str | Path) -> pd.DataFrame:
    """The canary history with drift flags, newest first."""
    from mirage_bench.judges.canary import canary_history, drift

    rows = []
    for rec in reversed(drift(canary_history(store_root))):
        rows.append(
            {
                "date": rec["date"],
                "judge config": rec["judge_config"],
                "sha256": rec["judge_config_sha256"][:12],
                "spec": rec["spec"],
                "snapshot": ", ".join(rec.get("reported_snapshots") or [])
                or str(rec.get("backend_snapshot")),
                "reason": rec["reason"],
                "kappa [95% CI] (n)": _fmt_kappa(rec.get("kappa"), rec.get("kappa_ci"), rec.get("scored")),
                "failures": rec["parse_failures"] + rec["call_failures"],
                "reference": rec["reference_source"],
                "drift": "; ".join(rec["drift"]) or "none",
            }
        )
    columns = [
        "date",
        "judge config",
        "sha256",
        "spec",
        "snapshot",
        "reason",
        "kappa [95% CI] (n)",
        "failures",
        "reference",
        "drift",
    ]
    return pd.DataFrame(rows, columns=columns)


def validation_note(store_root: str | Path, board: pd.DataFrame, judge: str | None) -> str:
    """A one-line note for a ranked view: how far ``judge`` has been validated."""
    if not judge:
        return ""
    overview = judges_overview(store_root, board[board["judge"].astype(str) == judge], n_resamples=0)
    if overview.empty:
        return ""
    row = overview.iloc[0]
    if row["validation"] == NOT_VALIDATED:
        return f"Judge {judge}: **{NOT_VALIDATED}** (see the Judges tab)."
    return f"Judge {judge}: {row['validation']}; human kappa {row['human kappa [95% CI] (n)']}."
