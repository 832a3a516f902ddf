"""The leaderboard's submission store: requests, uploaded responses, results and annotations as files.

Layout under the store root (``MIRAGE_SUBMISSIONS_DIR``, default ``submissions/store/``)::

    requests/<submission_id>.json      one SubmissionRequest (metadata + status + progress)
    uploads/<submission_id>.jsonl      the validated responses, one per (persona, task)
    results/<submission_id>/           the engine run directory the worker judges into
    annotation/samples/<sample>.jsonl  stratified annotation samples (hold the judge label: server side only)
    annotation/labels/<sample>/<annotator>.jsonl   one file per annotator (durable, resumable)
    reward/*.jsonl                     scored preference-pair sets written by the reward area

Every write is atomic (a temporary file in the same folder, then :func:`os.replace`) and every
read-check-write sequence holds a :class:`filelock.FileLock`, so two submissions (or two
annotators) at the same moment lose nothing.
"""

from __future__ import annotations

import json
import logging
import os
import re
import tempfile
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

from filelock import FileLock
from pydantic import BaseModel, ConfigDict

from mirage_bench.leaderboard.checks import (
    MAX_RESPONSE_CHARS,
    MAX_UPLOAD_BYTES,
    Metadata,
    SubmissionError,
    ValidatedUpload,
    expected_pairs,
    validate_responses_bytes,
)
from mirage_bench.types import SCHEMA_VERSION

log = logging.getLogger(__name__)


class Status(StrEnum):
    """Lifecycle of a submission: PENDING -> RUNNING -> FINISHED or FAILED."""

    PENDING = "PENDING"
    RUNNING = "RUNNING"
    FINISHED = "FINISHED"
    FAILED = "FAILED"


class SubmissionRequest(BaseModel):
    """One queued submission (the file ``requests/<submission_id>.json``)."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = SCHEMA_VERSION
    submission_id: str
    kind: Literal["file", "endpoint"]
    model_name: str
    revision: str = "main"
    family: str
    link: str = ""
    license: str = ""
    contact: str
    #: The submitter's Hugging Face username when they logged in with HF OAuth (the rate-limit key).
    hf_user: str = ""
    #: For ``kind="endpoint"``: the OpenAI-compatible base URL and model id (no key is ever stored).
    endpoint_base_url: str | None = None
    endpoint_model: str | None = None
    status: Status = Status.PENDING
    reason: str = ""
    judge: str | None = None
    smoke_test: bool | None = None
    n_responses: int = 0
    progress_done: int = 0
    progress_total: int = 0
    #: What the worker is doing now: "" (queued or done), "loading the judge model", "judging".
    phase: str = ""
    #: Measured judging rate of the current run (verdicts per minute) and the time left at that rate.
    rate_per_min: float | None = None
    eta_s: float | None = None
    #: Findings about the submission (e.g. degenerate text, injection attempts); empty when clean.
    flags: list[str] = []
    submitted_at: str
    started_at: str | None = None
    finished_at: str | None = None

    @property
    def progress(self) -> str:
        """Human-readable progress, e.g. ``"judged 12 of 900"``."""
        if self.progress_total:
            return f"judged {self.progress_done} of {self.progress_total}"
        return ""

    @property
    def submitter_key(self) -> str:
        """Who submitted, for the rate limit: the HF username when logged in, else the contact."""
        return f"hf:{self.hf_user.lower()}" if self.hf_user else f"contact:{self.contact.strip().lower()}"


def format_rate(per_min: float | None) -> str:
    """A judging rate for people: whole numbers from 10 per minute up, else two significant digits.

    >>> format_rate(2293.93), format_rate(6.0), format_rate(0.4271), format_rate(None)
    ('2,294 per min', '6 per min', '0.43 per min', '')
    """
    if not per_min:
        return ""
    return f"{per_min:,.0f} per min" if per_min >= 10 else f"{per_min:.2g} per min"


def format_duration(seconds: float | None) -> str:
    """A short human duration.

    >>> format_duration(42), format_duration(3 * 3600 + 5 * 60), format_duration(None)
    ('42 s', '3 h 5 min', '')
    """
    if seconds is None:
        return ""
    seconds = max(0, int(round(seconds)))
    if seconds < 90:
        return f"{seconds} s"
    minutes = seconds // 60
    if minutes < 90:
        return f"{minutes} min"
    return f"{minutes // 60} h {minutes % 60} min"


def utc_now() -> str:
    """The current UTC time as an ISO 8601 string (seconds precision)."""
    return datetime.now(UTC).replace(microsecond=0).isoformat()


def default_store_root() -> Path:
    """``$MIRAGE_SUBMISSIONS_DIR`` if set, else ``submissions/store`` of the checkout (or of the cwd)."""
    env = os.environ.get("MIRAGE_SUBMISSIONS_DIR")
    if env:
        return Path(env)
    checkout = Path(__file__).resolve().parents[2]
    if (checkout / "submissions").is_dir() and (checkout / "pyproject.toml").is_file():
        return checkout / "submissions" / "store"
    return Path.cwd() / "submissions" / "store"


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically (temporary file in the same folder, fsync, ``os.replace``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class SubmissionStore:
    """File-backed store of submissions, results, annotation samples/labels and reward sets."""

    def __init__(
        self,
        root: Path | str | None = None,
        *,
        rate_limit: int = 3,
        rate_window: timedelta = timedelta(days=1),
        mirror: Any = None,
    ) -> None:
        self.root = Path(root) if root is not None else default_store_root()
        self.rate_limit = rate_limit
        self.rate_window = rate_window
        #: A :class:`mirage_bench.leaderboard.hub.HubMirror` (or None: local files only).
        self.mirror = mirror
        for sub in ("requests", "uploads", "results", "annotation/samples", "annotation/labels", "reward"):
            (self.root / sub).mkdir(parents=True, exist_ok=True)
        self._lock = FileLock(str(self.root / ".store.lock"))

    # -- paths -------------------------------------------------------------------------------
    def request_path(self, submission_id: str) -> Path:
        """Path of one request file."""
        return self.root / "requests" / f"{submission_id}.json"

    def upload_path(self, submission_id: str) -> Path:
        """Path of one submission's validated responses."""
        return self.root / "uploads" / f"{submission_id}.jsonl"

    def result_dir(self, submission_id: str) -> Path:
        """The engine run directory of one submission."""
        return self.root / "results" / submission_id

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the store-wide lock (re-entrant within a thread)."""
        with self._lock:
            yield

    # -- requests ----------------------------------------------------------------------------
    def list_requests(self) -> list[SubmissionRequest]:
        """Every request, oldest first. An unreadable request file is left on disk and logged as a
        warning naming it (it is not queued until fixed)."""
        out = []
        for path in (self.root / "requests").glob("*.json"):
            try:
                out.append(SubmissionRequest.model_validate_json(path.read_text(encoding="utf-8")))
            except (OSError, ValueError) as exc:
                log.warning("submission request %s is unreadable and is skipped: %s", path, exc)
                continue
        return sorted(out, key=lambda r: (r.submitted_at, r.submission_id))

    def get(self, submission_id: str) -> SubmissionRequest:
        """Load one request (``FileNotFoundError`` if unknown)."""
        return SubmissionRequest.model_validate_json(
            self.request_path(submission_id).read_text(encoding="utf-8")
        )

    def changed(self, *, urgent: bool = False) -> None:
        """Tell the Hub mirror (if any) that files changed: ``urgent`` for a state change."""
        if self.mirror is not None:
            self.mirror.request_push(urgent=urgent)

    def save(self, request: SubmissionRequest, *, urgent: bool = True) -> None:
        """Write one request atomically (and ask the Hub mirror for a commit)."""
        atomic_write_text(self.request_path(request.submission_id), request.model_dump_json(indent=2))
        self.changed(urgent=urgent)

    def update(self, submission_id: str, **changes: Any) -> SubmissionRequest:
        """Apply ``changes`` to a request under the store lock and return the new version."""
        with self.locked():
            current = self.get(submission_id)
            updated = SubmissionRequest.model_validate({**current.model_dump(), **changes})
            self.save(updated, urgent=updated.status != current.status)
            return updated

    def _gate(self, meta: Metadata, now: datetime) -> list[str]:
        """Duplicate and rate-limit checks (call under the lock)."""
        problems = []
        name, rev = meta.model_name.strip().lower(), meta.revision.strip().lower()
        key = f"hf:{meta.hf_user.lower()}" if meta.hf_user else f"contact:{meta.contact.strip().lower()}"
        who = meta.hf_user or meta.contact
        recent = 0
        for req in self.list_requests():
            if req.status != Status.FAILED and req.model_name.lower() == name and req.revision.lower() == rev:
                problems.append(
                    f"model {req.model_name!r} at revision {req.revision!r} is already on the board or "
                    f"in the queue (submission {req.submission_id}, {req.status.value})"
                )
            submitted = datetime.fromisoformat(req.submitted_at)
            if req.submitter_key == key and now - submitted < self.rate_window:
                recent += 1
        if recent >= self.rate_limit:
            hours = self.rate_window.total_seconds() / 3600
            problems.append(
                f"rate limit: {who!r} already submitted {recent} time(s) in the last {hours:g} h "
                f"(limit {self.rate_limit})"
            )
        return problems

    def submit_file(
        self, data: bytes, meta: Metadata, *, pairs: set[tuple[str, str]] | None = None
    ) -> SubmissionRequest:
        """Validate an uploaded responses file and queue it (PENDING); raise :class:`SubmissionError`."""
        problems = meta.problems()
        try:
            upload = validate_responses_bytes(data, pairs=pairs)
        except SubmissionError as exc:
            problems.extend(exc.problems)
            upload = None
        if problems or upload is None:
            raise SubmissionError(problems)
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in upload.records)
        return self._enqueue(meta, "file", n_responses=len(upload.records), upload_text=text)

    def submit_endpoint(self, base_url: str, endpoint_model: str, meta: Metadata) -> SubmissionRequest:
        """Queue an OpenAI-compatible endpoint (the worker generates the responses, then judges them)."""
        problems = meta.problems() + endpoint_url_problems(base_url)
        if not endpoint_model.strip():
            problems.append("endpoint model id is required")
        if problems:
            raise SubmissionError(problems)
        return self._enqueue(
            meta,
            "endpoint",
            endpoint_base_url=base_url.strip().rstrip("/"),
            endpoint_model=endpoint_model.strip(),
        )

    def _enqueue(
        self,
        meta: Metadata,
        kind: Literal["file", "endpoint"],
        *,
        upload_text: str | None = None,
        **extra: Any,
    ) -> SubmissionRequest:
        now = datetime.now(UTC).replace(microsecond=0)
        with self.locked():
            problems = self._gate(meta, now)
            if problems:
                raise SubmissionError(problems)
            # microseconds first, so ids sort in submission order (ties broken under the lock)
            sid = f"{datetime.now(UTC).strftime('%Y%m%dT%H%M%S%f')}-{uuid.uuid4().hex[:6]}"
            if upload_text is not None:
                atomic_write_text(self.upload_path(sid), upload_text)
            request = SubmissionRequest(
                submission_id=sid,
                kind=kind,
                model_name=meta.model_name.strip(),
                revision=meta.revision.strip(),
                family=meta.family.strip(),
                link=meta.link.strip(),
                license=meta.license.strip(),
                contact=(meta.contact.strip() or meta.hf_user),
                hf_user=meta.hf_user,
                submitted_at=now.isoformat(),
                **extra,
            )
            self.save(request)
            return request

    def claim_next(self) -> SubmissionRequest | None:
        """Atomically move the oldest PENDING request to RUNNING and return it (None when idle)."""
        with self.locked():
            for req in self.list_requests():
                if req.status == Status.PENDING:
                    return self.update(
                        req.submission_id, status=Status.RUNNING, started_at=utc_now(), reason=""
                    )
        return None

    def load_upload(self, submission_id: str) -> list[dict[str, Any]]:
        """The validated responses of a file submission."""
        return [
            json.loads(line)
            for line in self.upload_path(submission_id).read_text(encoding="utf-8").splitlines()
            if line.strip()
        ]

    def queue_rows(self) -> list[dict[str, Any]]:
        """Rows for the queue table, newest first (never includes contact details or keys).

        ``position`` is the place of a PENDING submission in the queue (1 = judged next);
        ``state`` says in words what is happening: the position, "loading the judge model", or
        "judged k of n · R/min · about T left".
        """
        requests = self.list_requests()
        positions = {
            r.submission_id: i
            for i, r in enumerate((r for r in requests if r.status == Status.PENDING), start=1)
        }
        running = sum(r.status == Status.RUNNING for r in requests)
        rows = []
        for r in reversed(requests):
            position = positions.get(r.submission_id)
            rows.append(
                {
                    "submission": r.submission_id,
                    "model": r.model_name,
                    "revision": r.revision,
                    "family": r.family,
                    "kind": r.kind,
                    "status": r.status.value,
                    "position": position,
                    "state": queue_state(r, position, running),
                    "progress": r.progress,
                    "judged": r.progress_done,
                    "total": r.progress_total or r.n_responses,
                    "rate_per_min": r.rate_per_min,
                    "eta_s": r.eta_s,
                    "judge": r.judge or "",
                    "smoke_test": bool(r.smoke_test),
                    "flags": list(r.flags),
                    "reason": r.reason,
                    "submitted": r.submitted_at,
                }
            )
        return rows

    def measured_rate(self, judge: str) -> float | None:
        """The last measured judging rate (verdicts per minute) of ``judge`` in this store, if any."""
        rates = [r.rate_per_min for r in self.list_requests() if r.judge == judge and r.rate_per_min]
        return rates[-1] if rates else None

    # -- annotation samples and labels --------------------------------------------------------
    def sample_path(self, sample_id: str) -> Path:
        """Path of a stored annotation sample."""
        return self.root / "annotation" / "samples" / f"{sample_id}.jsonl"

    def list_samples(self) -> list[str]:
        """Ids of the stored annotation samples."""
        return sorted(p.stem for p in (self.root / "annotation" / "samples").glob("*.jsonl"))

    def labels_path(self, sample_id: str, annotator_id: str) -> Path:
        """One annotator's label file for one sample."""
        return self.root / "annotation" / "labels" / sample_id / f"{safe_id(annotator_id)}.jsonl"

    def append_label(self, sample_id: str, annotator_id: str, record: dict[str, Any]) -> int:
        """Durably record one label (replacing an earlier label of the same item); returns the count."""
        path = self.labels_path(sample_id, annotator_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(str(path) + ".lock"):
            rows = read_jsonl(path) if path.exists() else []
            rows = [r for r in rows if r.get("item_id") != record["item_id"]] + [record]
            atomic_write_text(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
        self.changed(urgent=True)
        return len(rows)

    def read_labels(self, sample_id: str, annotator_id: str) -> list[dict[str, Any]]:
        """One annotator's labels for a sample (empty if none yet)."""
        path = self.labels_path(sample_id, annotator_id)
        return read_jsonl(path) if path.exists() else []

    # -- reward sets --------------------------------------------------------------------------
    def reward_files(self) -> list[Path]:
        """Scored preference-pair sets (JSONL) written by the reward area."""
        return sorted((self.root / "reward").glob("*.jsonl"))


def queue_state(request: SubmissionRequest, position: int | None, running: int = 0) -> str:
    """What a submission is doing, in words (the queue's ``state`` column).

    >>> r = SubmissionRequest(submission_id="s", kind="file", model_name="m", family="f", contact="c",
    ...                       submitted_at="2026-01-01T00:00:00+00:00", status=Status.RUNNING,
    ...                       progress_done=12, progress_total=900, rate_per_min=6.0, eta_s=8880,
    ...                       phase="judging")
    >>> queue_state(r, None)
    'judged 12 of 900 · 6 per min · about 2 h 28 min left'
    """
    if request.status == Status.PENDING:
        ahead = (position or 1) - 1 + running
        return f"queued: position {position or '?'} ({ahead} ahead)"
    if request.status == Status.RUNNING:
        if request.phase and request.phase != "judging":
            return request.phase
        parts = [request.progress or "starting"]
        if request.rate_per_min:
            parts.append(format_rate(request.rate_per_min))
        if request.eta_s is not None and request.progress_done < request.progress_total:
            parts.append(f"about {format_duration(request.eta_s)} left")
        elif request.progress_total and not request.rate_per_min:
            parts.append("measuring the rate")
        return " · ".join(parts)
    return request.status.value.lower()


def endpoint_url_problems(base_url: str) -> list[str]:
    """Problems of a submitted endpoint base URL (empty when fine). It must be a plain http(s) URL:
    no credentials, query or fragment, since only keyless endpoints are supported and the URL is shown
    in the queue and synced.

    >>> endpoint_url_problems("http://10.0.0.5:8000/v1")
    []
    >>> endpoint_url_problems("https://user:pw@host/v1?api_key=x")  # doctest: +NORMALIZE_WHITESPACE
    ['endpoint URL must not carry credentials, a query string or a fragment (only keyless endpoints
    are supported; the URL is shown in the queue)']
    """
    from urllib.parse import urlsplit

    url = base_url.strip()
    if not re.match(r"^https?://[^\s/]+", url) or any(c.isspace() for c in url):
        return [f"endpoint URL {base_url!r} must start with http:// or https:// and hold no spaces"]
    parts = urlsplit(url)
    if parts.username or parts.password or parts.query or parts.fragment or "@" in parts.netloc:
        return [
            "endpoint URL must not carry credentials, a query string or a fragment (only keyless "
            "endpoints are supported; the URL is shown in the queue)"
        ]
    return []


def safe_id(value: str) -> str:
    """A filesystem-safe version of an identifier (letters, digits, ``._-``).

    >>> safe_id("ann 1/x")
    'ann_1_x'
    """
    cleaned = re.sub(r"[^A-Za-z0-9._-]", "_", value.strip())[:80]
    if not cleaned.strip("._"):
        raise ValueError(f"identifier {value!r} has no usable characters")
    return cleaned


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """Read a JSONL file (blank lines skipped)."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def write_jsonl(path: Path, rows: Iterable[dict[str, Any]]) -> None:
    """Write rows to a JSONL file atomically."""
    atomic_write_text(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))


__all__ = [
    "MAX_RESPONSE_CHARS",
    "MAX_UPLOAD_BYTES",
    "Metadata",
    "Status",
    "SubmissionError",
    "SubmissionRequest",
    "SubmissionStore",
    "ValidatedUpload",
    "atomic_write_text",
    "expected_pairs",
    "validate_responses_bytes",
]
