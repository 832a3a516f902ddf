"""The judge drift canary: a fixed set of claims with reference labels, re-labelled by each new judge.

Files, in the submission store (``judges/canary/``)::

    set.jsonl        the canary claims (claim_id, claim, revealed_facts, task_context, reference_label)
    set_meta.json    where the reference labels come from, when the set was built, its size
    labels/<config>-<sha12>-<snapshot>-<time>.jsonl   one run's labels (the ``judge-claims`` format)
    history.jsonl    one record per canary run: date, judge config + sha256, spec, snapshot,
                     agreement with the reference (kappa with bootstrap CI, accuracy, n), failures

The reference labels are the human labels of the store's annotation samples when there are any
(an item labelled by several annotators takes the majority label; a tie leaves it out), otherwise
the labels of the judge that first ranked the board (the earliest finished submission; a
smoke-test judge only when no other has finished, and the set then says so). The set is stratified
by reference label (``per_class`` claims each, seeded) and never changes once built, unless rebuilt
on request.

A canary run happens the first time a judge config (by sha256) or backend snapshot is used by the
worker, and whenever asked (``mirage-bench judges canary``). :func:`drift` compares each run with
the previous run of the same config name: a kappa below the previous run's CI lower bound, or a
reported snapshot that changed, is flagged, so a silent provider change shows before it moves the
board.
"""

from __future__ import annotations

import json
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from mirage_bench.fileio import read_jsonl_lenient
from mirage_bench.types import LABELS

CANARY_SUBDIR = Path("judges") / "canary"


def canary_dir(store_root: str | Path) -> Path:
    """``<store>/judges/canary``."""
    return Path(store_root) / CANARY_SUBDIR


def _write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def human_reference(store_root: str | Path) -> tuple[list[dict[str, Any]], str] | None:
    """Canary candidates labelled by humans in the store's annotation samples, or None."""
    from mirage_bench.judges import annotation_records

    load_validation_sample = annotation_records().load_validation_sample

    root = Path(store_root)
    rows: list[dict[str, Any]] = []
    annotators: set[str] = set()
    for sample_path in sorted((root / "annotation" / "samples").glob("*.jsonl")):
        items = {i.item_id: i for i in load_validation_sample([sample_path])}
        votes: dict[str, Counter[str]] = {}
        for label_file in sorted((root / "annotation" / "labels" / sample_path.stem).glob("*.jsonl")):
            latest: dict[str, str] = {}
            for rec in read_jsonl_lenient(label_file, objects_only=True):
                if rec.get("item_id") in items and rec.get("human_label"):
                    latest[rec["item_id"]] = rec["human_label"]
            if latest:
                annotators.add(label_file.stem)
            for item_id, label in latest.items():
                votes.setdefault(item_id, Counter())[label] += 1
        for item_id, counter in votes.items():
            top = counter.most_common(2)
            if len(top) > 1 and top[0][1] == top[1][1]:
                continue  # annotators tie: no reference
            item = items[item_id]
            rows.append(
                {
                    "claim_id": item_id,
                    "claim": item.claim,
                    "revealed_facts": list(item.revealed_facts),
                    "task_context": item.task_context,
                    "reference_label": top[0][0],
                }
            )
    if not rows:
        return None
    return rows, f"human labels ({len(annotators)} annotator(s), annotation samples of the store)"


def first_ranked_reference(store_root: str | Path) -> tuple[list[dict[str, Any]], str, bool] | None:
    """Claims of the earliest finished submission (its judge's labels as reference), or None."""
    import pandas as pd

    from mirage_bench.judges import annotation_records

    make_item_id = annotation_records().make_item_id
    from mirage_bench.leaderboard.store import Status, SubmissionStore
    from mirage_bench.personas import load_personas
    from mirage_bench.tasks import get_task

    store = SubmissionStore(store_root)
    finished = [r for r in store.list_requests() if r.status == Status.FINISHED and r.finished_at]
    finished = [r for r in finished if (store.result_dir(r.submission_id) / "claims.parquet").exists()]
    if not finished:
        return None
    finished.sort(key=lambda r: (bool(r.smoke_test), r.finished_at or "", r.submission_id))
    first = finished[0]
    claims = pd.read_parquet(store.result_dir(first.submission_id) / "claims.parquet")
    personas = {p.persona_id: p for p in load_personas()}
    rows = []
    for row in claims.to_dict("records"):
        persona = personas.get(str(row["persona_id"]))
        if persona is None:
            continue
        rows.append(
            {
                "claim_id": make_item_id(
                    row["model"], row["judge"], row["persona_id"], row["task_id"], int(row["claim_index"])
                ),
                "claim": row["claim"],
                "revealed_facts": list(persona.revealed_facts),
                "task_context": get_task(str(row["task_id"])).prompt,
                "reference_label": str(row["label"]),
            }
        )
    judge = str(claims["judge"].iloc[0]) if len(claims) else first.judge
    source = f"labels of judge {judge}, the first to rank the board (submission {first.submission_id})"
    return rows, source, bool(first.smoke_test)


def _stratify(rows: list[dict[str, Any]], per_class: int, seed: int) -> list[dict[str, Any]]:
    rng = np.random.default_rng(seed)
    picked: list[dict[str, Any]] = []
    for label in LABELS:
        pool = sorted((r for r in rows if r["reference_label"] == label.value), key=lambda r: r["claim_id"])
        order = rng.permutation(len(pool))[:per_class]
        picked += [pool[i] for i in sorted(order)]
    return picked


def load_canary(store_root: str | Path) -> tuple[list[dict[str, Any]], dict[str, Any]] | None:
    """The canary set and its meta, or None when none was built."""
    directory = canary_dir(store_root)
    if not (directory / "set_meta.json").exists():
        return None
    meta = json.loads((directory / "set_meta.json").read_text())
    return read_jsonl_lenient(directory / "set.jsonl", objects_only=True), meta


def build_canary(
    store_root: str | Path, *, per_class: int = 10, seed: int = 0, rebuild: bool = False
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Build the canary set (kept when it exists, unless ``rebuild``); ``ValueError`` when no source."""
    existing = load_canary(store_root)
    if existing is not None and not rebuild:
        return existing
    smoke = False
    found = human_reference(store_root)
    if found is not None:
        rows, source = found
    else:
        ranked = first_ranked_reference(store_root)
        if ranked is None:
            raise ValueError(
                "no canary can be built yet: the store has neither human labels nor a finished submission"
            )
        rows, source, smoke = ranked
    picked = _stratify(rows, per_class, seed)
    if not picked:
        raise ValueError(f"no canary can be built: no claims in {source}")
    meta = {
        "built_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "reference_source": source,
        "reference_is_human": found is not None,
        "reference_smoke_test": smoke,
        "n": len(picked),
        "per_class": per_class,
        "seed": seed,
        "by_label": dict(Counter(r["reference_label"] for r in picked)),
    }
    directory = canary_dir(store_root)
    _write_atomic(directory / "set.jsonl", "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in picked))
    _write_atomic(directory / "set_meta.json", json.dumps(meta, indent=2))
    return picked, meta


def canary_history(store_root: str | Path) -> list[dict[str, Any]]:
    """Every canary run, oldest first."""
    return read_jsonl_lenient(canary_dir(store_root) / "history.jsonl", objects_only=True)


def needs_canary(
    store_root: str | Path, config: Any, snapshot: str | None, reported: set[str] | None = None
) -> bool:
    """True when no canary run used this config sha256 with this backend snapshot, or when the
    provider ``reported`` a model snapshot (``Completion.model``) that no canary run of it saw."""
    runs = [
        h
        for h in canary_history(store_root)
        if h.get("judge_config_sha256") == config.sha256 and h.get("backend_snapshot") == snapshot
    ]
    if not runs:
        return True
    seen = {s for h in runs for s in h.get("reported_snapshots") or []}
    return bool(reported and seen and not reported <= seen)


def run_canary(
    store_root: str | Path,
    config: Any,
    *,
    backend: Any = None,
    reason: str = "on request",
    concurrency: int = 8,
    n_resamples: int = 1000,
) -> dict[str, Any]:
    """Label the canary set with ``config``, record its agreement with the reference; returns the record."""
    from mirage_bench.judges.agreement_files import compare_labels
    from mirage_bench.judges.claims import judge_claims_file, read_done
    from mirage_bench.runs import build_backend, slug

    rows, meta = build_canary(store_root)
    backend = backend if backend is not None else build_backend(config.spec)
    snapshot = getattr(backend, "snapshot", None)
    directory = canary_dir(store_root)
    # a fresh file per run: a canary re-labels, it never resumes an earlier run's labels
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    out = (
        directory / "labels" / f"{slug(config.name)}-{config.sha256[:12]}-{slug(str(snapshot))}-{stamp}.jsonl"
    )
    counts = judge_claims_file(directory / "set.jsonl", out, config, backend=backend, concurrency=concurrency)
    labels = read_done(out)
    predictions = {k: v.label.value for k, v in labels.items() if v.label is not None}
    references = {r["claim_id"]: r["reference_label"] for r in rows}
    record: dict[str, Any] = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "reason": reason,
        "judge_config": config.name,
        "judge_config_sha256": config.sha256,
        "spec": config.spec,
        "backend_snapshot": snapshot,
        "reported_snapshots": sorted({v.judge_snapshot for v in labels.values() if v.judge_snapshot}),
        "reference_source": meta["reference_source"],
        "reference_is_human": meta["reference_is_human"],
        "n_claims": len(rows),
        "parse_failures": counts["parse_failure"],
        "call_failures": counts["call_failure"],
        "labels_file": str(out.relative_to(Path(store_root))),
    }
    try:
        stats = compare_labels(predictions, references, n_resamples=n_resamples)
    except ValueError:
        record.update(scored=0, kappa=None, kappa_ci=None, accuracy=None, binary_kappa=None)
    else:
        record.update(
            scored=stats["n"],
            kappa=stats["kappa"],
            kappa_ci=list(stats.get("kappa_ci", ())) or None,
            accuracy=stats["accuracy"],
            binary_kappa=stats["binary_kappa"],
        )
    history = directory / "history.jsonl"
    history.parent.mkdir(parents=True, exist_ok=True)
    with history.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(record) + "\n")
    return record


def drift(history: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each record with ``drift``: reasons (empty: none) against the previous run of its config name."""
    out = []
    previous: dict[str, dict[str, Any]] = {}
    for rec in history:
        reasons = []
        prev = previous.get(rec.get("judge_config", ""))
        if prev is not None:
            if (
                prev.get("reported_snapshots")
                and rec.get("reported_snapshots")
                and (prev["reported_snapshots"] != rec["reported_snapshots"])
            ):
                reasons.append(
                    f"snapshot changed: {', '.join(prev['reported_snapshots'])} -> "
                    f"{', '.join(rec['reported_snapshots'])}"
                )
            ci = prev.get("kappa_ci")
            if rec.get("kappa") is not None and ci and rec["kappa"] < ci[0]:
                reasons.append(
                    f"kappa {rec['kappa']:.3f} below the previous run's CI [{ci[0]:.3f}, {ci[1]:.3f}]"
                )
        if rec.get("kappa") is None:
            reasons.append("no claim could be scored")
        out.append({**rec, "drift": reasons})
        previous[rec.get("judge_config", "")] = rec
    return out
