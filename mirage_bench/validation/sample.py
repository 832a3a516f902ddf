"""The H.1 validation sample: judged claims -> a stratified, shuffled sample file in the store.

The draw itself is :func:`mirage_bench.metrics.agreement.stratified_validation_sample` (a pure
function of the claims table); this module turns it into
:class:`~mirage_bench.validation.records.ValidationSampleItem` lines and reads and writes them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from mirage_bench.metrics.agreement import stratified_validation_sample
from mirage_bench.submissions import SubmissionStore, write_jsonl
from mirage_bench.types import Label

__all__ = ["SampleSpec", "claims_from_runs", "create_sample", "load_sample", "save_sample",
           "stratified_validation_sample"]


@dataclass(frozen=True)
class SampleSpec:
    """How the H.1 sample is drawn: claims per judge-predicted class, seed and diversity constraints.

    The fields are the keyword arguments of
    :func:`mirage_bench.metrics.agreement.stratified_validation_sample`; ``strict`` makes a class that
    cannot meet the constraints an error instead of taking what there is.
    """

    per_class: int = 100
    seed: int = 42
    min_models: int = 8
    min_tasks: int = 5
    min_personas: int = 20
    strict: bool = True


def claims_from_runs(paths: list[Path]) -> pd.DataFrame:
    """Judged claims of run directories (or ``claims.parquet`` files), smoke-test claims dropped.

    Smoke-test claims are kept only when nothing else is there. Raises ``FileNotFoundError`` naming a
    missing file and ``ValueError`` when no path is given.
    """
    if not paths:
        raise ValueError("no run directory given")
    frames = []
    for run_dir in paths:
        path = run_dir / "claims.parquet" if run_dir.is_dir() else run_dir
        if not path.exists():
            raise FileNotFoundError(f"{path} not found (not a judged run directory)")
        frames.append(pd.read_parquet(path))
    claims = pd.concat(frames, ignore_index=True)
    if "smoke_test" in claims and not claims["smoke_test"].astype(bool).all():
        claims = claims[~claims["smoke_test"].astype(bool)]
    return claims


def create_sample(claims: pd.DataFrame, spec: SampleSpec | None = None) -> list[Any]:
    """Draw the stratified, shuffled validation sample from judged claims (``claims.parquet`` rows).

    Stratified by judge label (``spec.per_class`` each), with the H.1 diversity constraints
    (``spec.strict``: raise ``ValueError`` naming any class that cannot meet them; otherwise take what
    there is); returns ``ValidationSampleItem``s in presentation order.
    """
    from mirage_bench.personas import load_personas
    from mirage_bench.tasks import get_task
    from mirage_bench.validation.records import ValidationSampleItem, make_item_id

    personas = {p.persona_id: p for p in load_personas()}
    spec = spec or SampleSpec()
    picked = stratified_validation_sample(claims, **asdict(spec))
    items = []
    for position, row in enumerate(picked.itertuples(index=False)):
        items.append(
            ValidationSampleItem(
                item_id=make_item_id(row.model, row.judge, row.persona_id, row.task_id, int(row.claim_index)),
                sample_seed=spec.seed,
                position=position,
                model=row.model,
                judge=row.judge,
                persona_id=row.persona_id,
                stereotype_type=row.stereotype_type,
                task_id=row.task_id,
                claim_index=int(row.claim_index),
                claim=row.claim,
                revealed_facts=list(personas[row.persona_id].revealed_facts),
                task_context=get_task(row.task_id).prompt,
                judge_label=Label(row.label),
            )
        )
    return items


def save_sample(store: SubmissionStore, sample_id: str, items: list[Any]) -> None:
    """Write a sample file into the store (atomically)."""
    write_jsonl(store.sample_path(sample_id), [i.model_dump(mode="json") for i in items])


def load_sample(store: SubmissionStore, sample_id: str) -> list[Any]:
    """The sample's items in presentation order."""
    from mirage_bench.validation.records import load_validation_sample

    return sorted(load_validation_sample([store.sample_path(sample_id)]), key=lambda i: i.position)
