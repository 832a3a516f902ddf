"""Run directories: a versioned manifest, crash-safe JSONL records, the claims table and a summary.

Layout of a run directory::

    manifest.json      RunManifest (schema_version, identity of the run, usage, cost, status)
    responses.jsonl    one ResponseRecord per persona x task (response + self-audit)
    judgments.jsonl    one JudgmentRecord per judged response
    probe.jsonl        one ProbeRecord per persona
    accum.jsonl        one AccumRecord per (condition, persona) with an Accum script
    claims.parquet     one row per judged claim (columns :data:`CLAIM_COLUMNS`)
    summary.json       headline numbers and failure counts (:mod:`mirage_bench.instruments.summary`)
    cache.sqlite       the response cache (successful completions), so a restart repeats no call
    usage.log          the usage ledger: one line per change of a client's counters, written before
                       each request is sent, so the manifest's counts survive kill -9 (:class:`UsageLedger`)

A run is identified by its :class:`RunIdentity` (model, judge, personas, tasks, seed, generation
settings, prompt sha256s, package version, input file hash). Starting again in the same
directory with the same identity continues the run; a different identity is refused.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from mirage_bench.instruments.records import (
    AccumRecord,
    JsonlStore,
    JudgmentRecord,
    ProbeRecord,
    ResponseRecord,
    write_json_atomic,
)
from mirage_bench.types import SCHEMA_VERSION

#: Stages of ``mirage-bench run``, in execution order.
STAGES: tuple[str, ...] = ("task", "judge", "probe", "accum")
#: Columns of ``claims.parquet``, in order.
CLAIM_COLUMNS: tuple[str, ...] = (
    "model",
    "judge",
    "persona_id",
    "stereotype_type",
    "task_id",
    "claim_index",
    "claim",
    "label",
    "accuracy",
    "reasoning",
    "judge_prompt_sha256",
    "smoke_test",
)
RECORD_FILES: dict[str, tuple[str, type]] = {
    "responses": ("responses.jsonl", ResponseRecord),
    "judgments": ("judgments.jsonl", JudgmentRecord),
    "probe": ("probe.jsonl", ProbeRecord),
    "accum": ("accum.jsonl", AccumRecord),
}


class RunMismatchError(ValueError):
    """The run directory holds a different run; ``differences`` names each differing field."""

    def __init__(self, run_dir: Path, differences: list[str]) -> None:
        self.differences = differences
        super().__init__(
            f"{run_dir} holds a different run, refusing to resume into it; differing: "
            + "; ".join(differences)
            + ". Use another --out directory (or the same arguments as that run)."
        )


class RunIdentity(BaseModel):
    """Everything that determines a run's records; equal identities may share a directory."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = SCHEMA_VERSION
    package_version: str
    model: str
    judge: str | None
    personas: list[str]
    tasks: list[str]
    stages: list[str]
    seed: int = 0
    #: Generation settings that change outputs (max_tokens, parse attempts, ...).
    settings: dict[str, Any] = Field(default_factory=dict)
    prompt_sha256: dict[str, str] = Field(default_factory=dict)
    #: For ``mirage-bench judge``: the sha256 of the responses file judged.
    responses_sha256: str | None = None

    def compute_run_id(self) -> str:
        """A short stable id: the first 12 hex digits of the identity's sha256."""
        blob = json.dumps(self.model_dump(mode="json"), sort_keys=True).encode()
        return hashlib.sha256(blob).hexdigest()[:12]


class RunManifest(RunIdentity):
    """``manifest.json``: the identity plus bookkeeping (times, usage, cost, status)."""

    run_id: str
    smoke_test: bool = False
    started_at: str
    finished_at: str | None = None
    status: Literal["running", "complete", "interrupted", "failed"] = "running"
    #: Backend usage summed over every session of this run, per role (``model``/``judge``).
    usage: dict[str, dict[str, int]] = Field(default_factory=dict)
    cost_estimate_usd: float | None = None
    #: Usage per stage (task, self_audit, judge, probe, probe_judge, accum), summed over sessions.
    usage_by_stage: dict[str, dict[str, int]] = Field(default_factory=dict)
    #: Cost per stage from the tokens above and the role's price (None: no price known).
    cost_by_stage_usd: dict[str, float | None] = Field(default_factory=dict)
    sessions: int = 0
    #: The judge configuration used (``{"config": {...}, "sha256": ...}``), when a judge ran.
    judge_config: dict[str, Any] | None = None

    def identity(self) -> RunIdentity:
        """The identity part of this manifest."""
        return RunIdentity.model_validate({k: getattr(self, k) for k in RunIdentity.model_fields})


class RunLockedError(RuntimeError):
    """Another process holds the run directory's lock."""

    def __init__(self, run_dir: Path) -> None:
        super().__init__(
            f"{run_dir} is in use by another mirage-bench process (lock: {Path(run_dir) / '.lock'}); "
            "wait for it to finish, or use another --out"
        )


class UsageLedger:
    """Append-only per-role counters in ``usage.log``: ``<role> <counter> <n>`` per line.

    Each event's lines (:meth:`add_many`: a client's role and stage counters of one request, say) are
    one ``os.write`` to a file opened with ``O_APPEND`` (no buffering, no fsync), so a process killed
    at any moment, even with SIGKILL, leaves every line it wrote; a request is journalled before it
    is sent. A torn last line (power loss) is ignored.

    >>> import tempfile
    >>> ledger = UsageLedger(Path(tempfile.mkdtemp()) / "usage.log")
    >>> ledger.add("model", "backend_calls", 2); ledger.close()
    >>> UsageLedger(ledger.path).totals
    {'model': {'backend_calls': 2}}
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.totals: dict[str, dict[str, int]] = {}
        if self.path.exists():
            for line in self.path.read_text(encoding="utf-8", errors="replace").splitlines():
                parts = line.split()
                if len(parts) == 3 and parts[2].lstrip("-").isdigit():
                    role = self.totals.setdefault(parts[0], {})
                    role[parts[1]] = role.get(parts[1], 0) + int(parts[2])
        self._fd: int | None = None

    def seed(self, usage: dict[str, dict[str, int]]) -> None:
        """Start an empty ledger from a manifest's counts (runs written before the ledger existed)."""
        if self.totals:
            return
        for role, counters in usage.items():
            for counter, n in counters.items():
                if n:
                    self.add(role, counter, int(n))

    def add(self, role: str, counter: str, n: int) -> None:
        """Add ``n`` to ``role``'s ``counter`` on disk, then in memory."""
        self.add_many(((role, counter, n),))

    def add_many(self, entries: Iterable[tuple[str, str, int]]) -> None:
        """Add several ``(role, counter, n)`` at once: one ``os.write`` of all their lines, then in memory."""
        import os

        entries = list(entries)
        if self._fd is None:
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        os.write(self._fd, "".join(f"{role} {counter} {n}\n" for role, counter, n in entries).encode())
        for role, counter, n in entries:
            counters = self.totals.setdefault(role, {})
            counters[counter] = counters.get(counter, 0) + n

    def journal(self, role: str) -> Any:
        """A ``journal(counter, n)`` callable for :class:`mirage_bench.client.Client`."""
        return lambda counter, n: self.add(role, counter, n)

    def close(self) -> None:
        """Close the file (idempotent)."""
        import os

        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def utc_now() -> str:
    """The current UTC time, ISO 8601 with seconds."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def slug(text: str) -> str:
    """A file-name-safe form of a model spec.

    >>> slug("openai:gpt-4o-mini@http://127.0.0.1:8000/v1")
    'openai-gpt-4o-mini-http-127.0.0.1-8000-v1'
    """
    return re.sub(r"[^A-Za-z0-9._]+", "-", text).strip("-")[:80]


def default_run_dir(identity: RunIdentity, root: Path = Path("runs")) -> Path:
    """``runs/<model slug>-<run id>``: the same arguments always give the same directory."""
    return Path(root) / f"{slug(identity.model)}-{identity.compute_run_id()}"


def identity_differences(old: RunIdentity, new: RunIdentity) -> list[str]:
    """Human-readable list of fields that differ between two identities."""
    out = []
    a, b = old.model_dump(mode="json"), new.model_dump(mode="json")
    for key in RunIdentity.model_fields:
        if a.get(key) != b.get(key):
            if key in ("personas", "tasks") and isinstance(a[key], list) and isinstance(b[key], list):
                out.append(f"{key} ({len(a[key])} in the directory vs {len(b[key])} now)")
            elif key == "prompt_sha256":
                names = sorted(n for n in set(a[key]) | set(b[key]) if a[key].get(n) != b[key].get(n))
                out.append(f"prompt templates changed: {', '.join(names)}")
            else:
                out.append(f"{key} ({a.get(key)!r} in the directory vs {b.get(key)!r} now)")
    return out


class RunDir:
    """A run directory on disk (see the module docstring)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    @property
    def manifest_path(self) -> Path:
        """``manifest.json``."""
        return self.path / "manifest.json"

    def store(self, name: str) -> JsonlStore:
        """The JSONL store ``responses``, ``judgments``, ``probe`` or ``accum``."""
        filename, model = RECORD_FILES[name]
        return JsonlStore(self.path / filename, model)

    def read_manifest(self) -> RunManifest | None:
        """The manifest, or None when the directory holds no run yet."""
        if not self.manifest_path.exists():
            return None
        data = json.loads(self.manifest_path.read_text(encoding="utf-8"))
        version = data.get("schema_version")
        if version != SCHEMA_VERSION:
            raise ValueError(
                f"{self.manifest_path}: schema_version {version!r}, this package reads {SCHEMA_VERSION}"
            )
        manifest = RunManifest.model_validate(data)
        if (self.path / "usage.log").exists():
            # the ledger is journalled before every request: fresher than a manifest a kill left behind
            for role, counters in UsageLedger(self.path / "usage.log").totals.items():
                if role.startswith("stage:"):  # per-stage rows (mirage_bench.usage)
                    name = role.partition(":")[2]
                    manifest.usage_by_stage[name] = {**manifest.usage_by_stage.get(name, {}), **counters}
                else:
                    manifest.usage[role] = {**manifest.usage.get(role, {}), **counters}
        return manifest

    def write_manifest(self, manifest: RunManifest) -> None:
        """Write the manifest atomically."""
        write_json_atomic(self.manifest_path, manifest.model_dump(mode="json"))

    def open(self, identity: RunIdentity, *, smoke_test: bool) -> RunManifest:
        """Create the run, or continue it when the directory holds the same identity.

        Raises :class:`RunMismatchError` if the directory holds a different run, and
        ``FileExistsError`` if it is a non-empty directory without a manifest.
        """
        self.path.mkdir(parents=True, exist_ok=True)
        manifest = self.read_manifest()
        if manifest is None:
            if any(p for p in self.path.iterdir() if p.name not in (".lock", "usage.log")):
                raise FileExistsError(
                    f"{self.path} is not empty and holds no manifest.json; choose another --out"
                )
            manifest = RunManifest(
                **identity.model_dump(),
                run_id=identity.compute_run_id(),
                smoke_test=smoke_test,
                started_at=utc_now(),
            )
        else:
            differences = identity_differences(manifest.identity(), identity)
            if differences:
                raise RunMismatchError(self.path, differences)
        manifest.status = "running"
        manifest.finished_at = None
        manifest.sessions += 1
        self.write_manifest(manifest)
        return manifest

    def lock(self) -> Any:
        """An exclusive, non-blocking lock on the directory; entering it raises :class:`RunLockedError`
        when another process holds it."""
        import contextlib

        from filelock import FileLock, Timeout

        @contextlib.contextmanager
        def held() -> Any:
            lock = FileLock(str(self.path / ".lock"), timeout=0)
            try:
                lock.acquire()
            except Timeout:
                raise RunLockedError(self.path) from None
            try:
                yield lock
            finally:
                lock.release()

        return held()

    def ledger(self) -> UsageLedger:
        """The run's :class:`UsageLedger` (``usage.log``)."""
        return UsageLedger(self.path / "usage.log")

    def compact(self) -> dict[str, int]:
        """Rewrite every record file sorted by key, one record per key; returns the counts."""
        return {
            name: self.store(name).compact()
            for name in RECORD_FILES
            if (self.path / RECORD_FILES[name][0]).exists()
        }

    def read(self, name: str) -> list[Any]:
        """The records of one file (last record per key), sorted by key."""
        records = self.store(name).read()
        return [records[k] for k in sorted(records)]


def claims_table(judgments: list[JudgmentRecord]) -> Any:
    """The claims table (``pyarrow.Table``, :data:`CLAIM_COLUMNS`) of the ``ok`` judgments."""
    import pyarrow as pa

    rows: dict[str, list[Any]] = {c: [] for c in CLAIM_COLUMNS}
    for j in sorted(judgments, key=lambda r: r.key()):
        if j.status != "ok":
            continue
        for index, c in enumerate(j.claims):
            values = (
                j.model,
                j.judge,
                j.persona_id,
                j.stereotype_type,
                j.task_id,
                index,
                c.claim,
                str(c.label),
                str(c.accuracy),
                c.reasoning,
                j.judge_prompt_sha256,
                bool(j.smoke_test),
            )
            for column, value in zip(CLAIM_COLUMNS, values, strict=True):
                rows[column].append(value)
    schema = pa.schema(
        [
            (c, pa.int64() if c == "claim_index" else pa.bool_() if c == "smoke_test" else pa.string())
            for c in CLAIM_COLUMNS
        ]
    )
    return pa.table(rows, schema=schema)


def write_claims(run_dir: str | Path, judgments: list[JudgmentRecord]) -> int:
    """Write ``claims.parquet`` atomically; returns the number of rows."""
    import os

    import pyarrow.parquet as pq

    table = claims_table(judgments)
    path = Path(run_dir) / "claims.parquet"
    tmp = path.with_suffix(".parquet.tmp")
    pq.write_table(table, tmp)
    os.replace(tmp, path)
    return table.num_rows


def load_claims(run_dir: str | Path) -> Any:
    """The claims table of a run as a ``pandas.DataFrame`` (columns :data:`CLAIM_COLUMNS`).

    Raises ``FileNotFoundError`` when the run has no ``claims.parquet`` (yet).
    """
    import pandas as pd

    path = Path(run_dir) / "claims.parquet"
    if not path.exists():
        raise FileNotFoundError(f"{path} not found: the run has not produced its claims table yet")
    frame = pd.read_parquet(path)
    missing = [c for c in CLAIM_COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(f"{path}: missing column(s) {missing}")
    return frame[list(CLAIM_COLUMNS)]


def prompt_shas(names: list[str]) -> dict[str, str]:
    """sha256 of each named prompt template."""
    from mirage_bench.prompts import load_template

    return {name: load_template(name).sha256 for name in sorted(set(names))}


def templates_for(stages: list[str], tasks: list[str]) -> list[str]:
    """The prompt templates a run with these stages and tasks uses."""
    names: list[str] = []
    if "task" in stages:
        from mirage_bench.tasks import get_task

        names += ["task_system", "task_self_audit"]
        for task_id in tasks:
            task = get_task(task_id)
            names += [task.template, task.audit_template]
    if "judge" in stages or "probe" in stages:
        names += ["judge_system", "judge_user", "judge_output_format"]
    if "probe" in stages:
        names.append("probe")
    if "accum" in stages:
        names += ["accum_update", "accum_update_prune_control"]
        names.append("accum_retraction_judge")  # the judged retraction measure (runs with a judge)
    return names


def build_backend(spec: str, *, seed: int = 0) -> Any:
    """A backend for ``spec``; ``scripted`` / ``scripted:simulate[,key=value...]`` is the simulation.

    Options of the simulation: ``latency`` (s), ``faults`` (rate 0..1), ``kinds`` (``+``-joined
    fault kinds), ``leniency``. Any other spec goes to :func:`mirage_bench.backends.registry.make_backend`.

    >>> build_backend("scripted:simulate,latency=0.01,faults=0.2").fault_rate
    0.2
    """
    if spec == "scripted" or spec.startswith("scripted:simulate"):
        from mirage_bench.instruments.simulate import simulated_backend

        options: dict[str, Any] = {}
        for part in spec.partition(":simulate")[2].split(","):
            if not part:
                continue
            key, sep, value = part.partition("=")
            if not sep or key not in ("latency", "faults", "kinds", "leniency"):
                raise ValueError(
                    f"bad simulation option {part!r} in {spec!r} (latency=, faults=, kinds=, leniency=)"
                )
            if key == "kinds":
                options["fault_kinds"] = tuple(value.split("+"))
            else:
                options[{"latency": "latency_s", "faults": "fault_rate"}.get(key, key)] = float(value)
        return simulated_backend(seed=seed, **options)
    from mirage_bench.backends.registry import make_backend

    return make_backend(spec)
