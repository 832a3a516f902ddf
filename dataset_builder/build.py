"""``mirage-bench build-dataset``: write the Hub-layout dataset repository.

Layout written under ``out``::

    README.md                                   dataset card (YAML: configs, dataset_info, …)
    eval.yaml                                   evaluation-results description
    data/<config>/<split>-0000K-of-0000N.parquet
    _private/build_report.json                  inputs, omitted configs, validation (not published)
    _private/deid_review.jsonl                  per raw record: action, fields touched, entity kinds

``_private/`` is never uploaded by ``mirage-bench publish``: the review file names raw record ids
so that a human reviewer can find the records; it never reproduces removed text.
"""

from __future__ import annotations

import hashlib
import json
import math
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from dataset_builder.configs import CONFIG_ORDER, BuildError, ConfigTable, encode_frame
from dataset_builder.deidentify import WithholdPolicy
from dataset_builder.detectors import Recognizer

__all__ = ["BuildReport", "PRIVATE_DIR", "build_dataset", "write_config"]

PRIVATE_DIR = "_private"
#: Rows per parquet shard (keeps shards well under the Hub's recommended size).
MAX_SHARD_ROWS = 500_000


@dataclass
class BuildReport:
    """What a build wrote, left out and found (also saved as ``_private/build_report.json``)."""

    out: Path
    configs: dict[str, dict[str, int]] = field(default_factory=dict)
    omitted: list[dict[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)
    timings_s: dict[str, float] = field(default_factory=dict)
    deid: dict[str, Any] | None = None
    pii_eval: dict[str, Any] | None = None

    @property
    def valid(self) -> bool:
        """True when validation found no problem."""
        return not self.problems

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "valid": self.valid,
            "configs": self.configs,
            "omitted": self.omitted,
            "notes": self.notes,
            "problems": self.problems,
            "files": self.files,
            "timings_s": self.timings_s,
            "deid": self.deid,
            "pii_eval": self.pii_eval,
        }


def write_config(out: Path, table: ConfigTable, *, max_shard_rows: int = MAX_SHARD_ROWS) -> Any:
    """Write one config's parquet shards; returns its ``datasets.DatasetInfo`` (features, splits, sizes)."""
    from datasets import Dataset, DatasetInfo, SplitDict, SplitInfo

    folder = out / "data" / table.name
    folder.mkdir(parents=True, exist_ok=True)
    splits = SplitDict()
    download = 0
    for split, frame in table.splits.items():
        encoded = encode_frame(frame, table.features, where=f"config {table.name}/{split}")
        dataset = Dataset.from_pandas(encoded, features=table.features, preserve_index=False)
        shards = max(1, math.ceil(len(dataset) / max_shard_rows))
        for index in range(shards):
            path = folder / f"{split}-{index:05d}-of-{shards:05d}.parquet"
            dataset.shard(shards, index, contiguous=True).to_parquet(str(path))
            download += path.stat().st_size
        splits.add(SplitInfo(name=split, num_bytes=dataset.data.nbytes, num_examples=len(dataset)))
    return DatasetInfo(
        features=table.features,
        splits=splits,
        download_size=download,
        dataset_size=sum(s.num_bytes for s in splits.values()),
    )


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def build_dataset(
    out: str | Path,
    *,
    runs: Sequence[str | Path] = (),
    annotations: Sequence[str | Path] = (),
    validation_samples: Sequence[str | Path] = (),
    preferences: str | Path | None = None,
    recognizer: Recognizer | None = None,
    withhold_policy: WithholdPolicy = "differing_text",
    pii_corpus: str | Path | None = None,
    id_map: str | Path | None = None,
    license: str = "cc-by-4.0",
    repo_hint: str = "<org>/miragebench",
    include_reported: bool = True,
    overwrite: bool = False,
    rng: Any = None,
) -> BuildReport:
    """Build the dataset repository in ``out`` and validate it; returns the :class:`BuildReport`.

    Raises :class:`BuildError` for unusable input (a bad run directory, annotation or study file)
    before anything is written; ``out`` must be empty or absent unless ``overwrite``.
    """
    import time

    from dataset_builder import sources
    from dataset_builder.card import build_card, eval_yaml
    from dataset_builder.validate import validate_build
    from mirage_bench.validation.records import join_annotations, load_annotations, load_validation_sample

    started = time.perf_counter()
    out = Path(out)
    if out.exists() and any(out.iterdir()) and not overwrite:
        raise BuildError(f"{out} is not empty; pass overwrite=True (--overwrite) to replace it")
    report = BuildReport(out)
    run_inputs = [sources.load_run(path) for path in runs]
    ids = [run.run_id for run in run_inputs]
    if len(set(ids)) != len(ids):
        raise BuildError(f"the same run id was given twice: {sorted({i for i in ids if ids.count(i) > 1})}")
    tables: dict[str, ConfigTable] = {
        "personas": sources.personas_config(),
        "tasks": sources.tasks_config(),
        "accum_scripts": sources.accum_config(),
        "responses": sources.responses_config(run_inputs),
        "judged_claims": sources.judged_claims_config(run_inputs),
        "leaderboard": sources.leaderboard_config(run_inputs, include_reported=include_reported),
    }
    if annotations:
        if not validation_samples:
            raise BuildError("annotation files need the validation sample file(s) that hold the judge labels")
        rows, notes = join_annotations(
            load_annotations(annotations), load_validation_sample(validation_samples)
        )
        report.notes += notes
        tables["human_validation"] = sources.human_validation_config(rows)
    else:
        tables["human_validation"] = sources.human_validation_config([])
    review: list[dict[str, object]] = []
    if preferences is not None:
        from dataset_builder.pairs import build_preference_pairs
        from dataset_builder.preferences import load_raw_preferences

        pairs = build_preference_pairs(
            load_raw_preferences(preferences),
            recognizer,
            policy=withhold_policy,
            id_map_path=Path(id_map) if id_map else None,
            rng=rng,
        )
        tables["preference_pairs"] = pairs.table
        review, report.deid = pairs.review, pairs.summary
        if pii_corpus is not None:
            from dataset_builder.pii_eval import evaluate_planted, load_planted_corpus, shipped_corpus

            evaluation = evaluate_planted(load_planted_corpus(pii_corpus), recognizer, policy=withhold_policy)
            report.pii_eval = {
                "corpus": Path(pii_corpus).name,
                "shipped_fixture": shipped_corpus(pii_corpus) is not None,
                **evaluation.as_dict(),
            }
    report.timings_s["read_inputs"] = round(time.perf_counter() - started, 3)

    reasons = {
        "responses": "no run directory with responses was given",
        "judged_claims": "no run directory with a claims table was given",
        "human_validation": "no human annotation file was given",
        "preference_pairs": (
            "every study record was withheld or excluded"
            if preferences is not None
            else "no raw preference-study folder was given"
        ),
        "accum_scripts": "no Accum scripts in the package data",
        "leaderboard": "no reported or measured rows",
    }
    published: list[ConfigTable] = []
    for name in CONFIG_ORDER:
        table = tables.get(name)
        if table is None or table.num_rows == 0:
            report.omitted.append({"name": name, "reason": reasons.get(name, "no rows")})
            continue
        published.append(table)

    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    t0 = time.perf_counter()
    infos = {table.name: write_config(out, table) for table in published}
    report.timings_s["write_parquet"] = round(time.perf_counter() - t0, 3)
    report.configs = {t.name: {split: len(frame) for split, frame in t.splits.items()} for t in published}
    raw = {
        "omitted": report.omitted,
        "built_at": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "repo_hint": repo_hint,
        "deid": report.deid,
        "pii_eval": report.pii_eval,
        "runs": [
            {"run_id": r.run_id, "model": r.model, "judge": r.judge, "smoke_test": r.smoke_test}
            for r in run_inputs
        ],
    }
    card = build_card(published, infos, raw, license=license)
    card.save(out / "README.md")
    (out / "eval.yaml").write_text(
        yaml.safe_dump(eval_yaml(published), sort_keys=False, allow_unicode=True), encoding="utf-8"
    )
    private = out / PRIVATE_DIR
    private.mkdir()
    with (private / "deid_review.jsonl").open("w", encoding="utf-8") as handle:
        for entry in review:
            handle.write(json.dumps(entry, ensure_ascii=False) + "\n")
    t0 = time.perf_counter()
    report.problems = validate_build(out)
    report.timings_s["validate"] = round(time.perf_counter() - t0, 3)
    report.files = {
        str(p.relative_to(out)): _sha256(p)
        for p in sorted(out.rglob("*"))
        if p.is_file() and PRIVATE_DIR not in p.relative_to(out).parts
    }
    report.timings_s["total"] = round(time.perf_counter() - started, 3)
    (private / "build_report.json").write_text(json.dumps(report.as_dict(), indent=1), encoding="utf-8")
    return report
