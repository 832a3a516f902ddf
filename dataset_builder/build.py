"""``mirage-bench build-dataset``: write the Hub-layout dataset repository.

Layout written under ``out``::

    README.md                                   dataset card (YAML: configs, dataset_info, …)
    eval.yaml                                   evaluation-results description (Eval Results spec)
    data/<config>/<split>-0000K-of-0000N.parquet
    gated/README.md, gated/data/<config>/…      the sensitive configs (preference pairs): a second
                                                dataset repository, published gated
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

from mirage_bench.fileio import file_sha256
from mirage_bench.structs import field_values

from .configs import (
    CONFIG_ORDER,
    DEFAULT_CONFIG,
    SENSITIVE_CONFIGS,
    SENSITIVE_DEFAULT_CONFIG,
    BuildError,
    ConfigTable,
    config_categories,
    encode_frame,
)
from .deidentify import WithholdPolicy
from .detectors import Recognizer

__all__ = ["GATED_DIR", "PRIVATE_DIR", "BuildReport", "build_dataset", "write_config"]

PRIVATE_DIR = "_private"
#: Sub-folder holding the sensitive configs: its own dataset repository, published gated.
GATED_DIR = "gated"
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
    #: Raw study records that are the package's own SYNTHETIC fixture records, per config.
    synthetic: dict[str, int] = field(default_factory=dict)

    @property
    def valid(self) -> bool:
        """True when validation found no problem."""
        return not self.problems

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"valid": self.valid, **field_values(self, exclude=("out",))}


def write_config(out: Path, table: ConfigTable, *, max_shard_rows: int = MAX_SHARD_ROWS) -> Any:
    """Write one config's parquet shards; returns its ``datasets.DatasetInfo`` (features, splits, sizes)."""
    from datasets import Dataset, DatasetInfo, SplitDict, SplitInfo

    folder = out / "data" / table.name
    folder.mkdir(parents=True, exist_ok=True)
    splits = SplitDict()
    download = 0
    for split, frame in table.splits.items():
        encoded = encode_frame(
            frame,
            table.features,
            where=f"config {table.name}/{split}",
            categories=config_categories(table.name),
        )
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


#: sha256 fingerprints of the package's SYNTHETIC fixture study records (the planted-PII corpora),
#: shipped as package data so that an installed wheel recognises them too.
FIXTURE_FINGERPRINTS = "fixture_record_fingerprints.txt"


def record_fingerprint(record: Any) -> str:
    """sha256 of a raw study record's ``record_id``, ``participant_id`` and ``query``."""
    key = "\x1f".join((record.record_id, record.participant_id, record.query))
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def fixture_fingerprints() -> frozenset[str]:
    """The shipped fingerprints of the fixture records (empty if the data file is absent)."""
    from mirage_bench.paths import DATA_DIR

    path = DATA_DIR / FIXTURE_FINGERPRINTS
    if not path.is_file():
        return frozenset()
    lines = path.read_text(encoding="utf-8").splitlines()
    return frozenset(line.strip() for line in lines if line.strip() and not line.startswith("#"))


def fixture_record_count(records: Sequence[Any]) -> int:
    """How many raw study records are the package's own synthetic fixture records (planted-PII corpora)."""
    known = fixture_fingerprints()
    return sum(record_fingerprint(r) in known for r in records)


def build_dataset(
    out: str | Path,
    *,
    runs: Sequence[str | Path] = (),
    annotations: Sequence[str | Path] = (),
    validation_samples: Sequence[str | Path] = (),
    preferences: str | Path | None = None,
    recognizer: Recognizer | None = None,
    withhold_policy: WithholdPolicy = "bears_on_preference",
    pii_corpus: str | Path | None = None,
    id_map: str | Path | None = None,
    license: str = "cc-by-4.0",
    repo_hint: str | None = None,
    include_reported: bool = True,
    overwrite: bool = False,
    rng: Any = None,
) -> BuildReport:
    """Build the dataset repository in ``out`` and validate it; returns the :class:`BuildReport`.

    Raises :class:`BuildError` for unusable input (a bad run directory, annotation or study file)
    before anything is written; ``out`` must be empty or absent unless ``overwrite``. Sensitive
    configs (:data:`~dataset_builder.configs.SENSITIVE_CONFIGS`) are written to ``out/gated/``, a
    dataset repository of their own. ``repo_hint`` (default
    :data:`mirage_bench.repo_ids.DATASET_REPO_ID`) is the repo id the card's examples use.
    """
    import time

    from mirage_bench.repo_ids import DATASET_REPO_ID, sensitive_repo_id
    from mirage_bench.validation.records import join_annotations, load_annotations, load_validation_sample

    from . import sources
    from .card import build_card, eval_yaml
    from .validate import validate_build

    started = time.perf_counter()
    repo_hint = repo_hint or DATASET_REPO_ID
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
        from .pairs import build_preference_pairs
        from .preferences import load_raw_preferences

        raw_records = load_raw_preferences(preferences)
        n_fixture = fixture_record_count(raw_records)
        if n_fixture:
            report.synthetic["preference_pairs"] = n_fixture
            report.notes.append(
                f"{n_fixture} raw study record(s) are this package's synthetic test-fixture records "
                "(publish refuses them without --allow-smoke)"
            )
        pairs = build_preference_pairs(
            raw_records,
            recognizer,
            policy=withhold_policy,
            id_map_path=Path(id_map) if id_map else None,
            rng=rng,
        )
        tables["preference_pairs"] = pairs.table
        review, report.deid = pairs.review, pairs.summary
        if pii_corpus is not None:
            from .pii_eval import evaluate_planted, load_planted_corpus, shipped_corpus

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
    public = [t for t in published if t.name not in SENSITIVE_CONFIGS]
    sensitive = [t for t in published if t.name in SENSITIVE_CONFIGS]
    t0 = time.perf_counter()
    infos = {table.name: write_config(out, table) for table in public}
    sensitive_infos = {table.name: write_config(out / GATED_DIR, table) for table in sensitive}
    report.timings_s["write_parquet"] = round(time.perf_counter() - t0, 3)
    report.configs = {t.name: {split: len(frame) for split, frame in t.splits.items()} for t in published}
    raw = {
        "omitted": report.omitted,
        "built_at": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "repo_hint": repo_hint,
        "gated_repo_hint": sensitive_repo_id(repo_hint) if sensitive else None,
        "deid": report.deid,
        "pii_eval": report.pii_eval,
        "runs": [
            {"run_id": r.run_id, "model": r.model, "judge": r.judge, "smoke_test": r.smoke_test}
            for r in run_inputs
        ],
    }
    for folder, tables_, infos_, default, gated in (
        (out, public, infos, DEFAULT_CONFIG, False),
        (out / GATED_DIR, sensitive, sensitive_infos, SENSITIVE_DEFAULT_CONFIG, True),
    ):
        if not tables_:
            continue
        card = build_card(tables_, infos_, raw, license=license, default_config=default, gated=gated)
        card.save(folder / "README.md")
        (folder / "eval.yaml").write_text(
            yaml.safe_dump(eval_yaml(tables_), sort_keys=False, allow_unicode=True), encoding="utf-8"
        )
    private = out / PRIVATE_DIR
    private.mkdir()
    with (private / "deid_review.jsonl").open("w", encoding="utf-8") as handle:
        for entry in review:
            handle.write(json.dumps(entry, ensure_ascii=False) + "\n")
    t0 = time.perf_counter()
    report.problems = validate_build(out)
    if sensitive:
        report.problems += [f"{GATED_DIR}/: {p}" for p in validate_build(out / GATED_DIR, gated=True)]
    report.timings_s["validate"] = round(time.perf_counter() - t0, 3)
    report.files = {
        str(p.relative_to(out)): file_sha256(p)
        for p in sorted(out.rglob("*"))
        if p.is_file() and PRIVATE_DIR not in p.relative_to(out).parts
    }
    report.timings_s["total"] = round(time.perf_counter() - started, 3)
    (private / "build_report.json").write_text(json.dumps(report.as_dict(), indent=1), encoding="utf-8")
    return report
