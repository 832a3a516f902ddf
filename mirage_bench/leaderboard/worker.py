"""The leaderboard worker: judges queued submissions with the configured judge.

It takes the oldest PENDING submission (marking it RUNNING), judges every response with
:func:`mirage_bench.instruments.judge.judge_responses` into the submission's run directory
(``results/<id>/``: ``responses.jsonl``, ``judgments.jsonl`` appended and flushed as each verdict
arrives, a response cache, then ``claims.parquet`` and ``leaderboard_row.json``) and marks it
FINISHED, or FAILED with the reason. Progress ("judged k of n") is written to the request file.

Crash safety: only one worker holds ``.worker.lock`` at a time, so a RUNNING submission found by a
worker that just took the lock was orphaned by a crash; it is resumed: responses already judged
(read back from ``judgments.jsonl``) are skipped and calls already answered come from the cache,
so nothing is lost or repeated.

The judge is ``MIRAGE_JUDGE`` (read when the worker is created) or the ``judge`` argument; the
default is the engine's embedded ``local`` smoke-test model, whose rows are flagged
``smoke_test``. Its settings come from a judge config (``judge_config`` argument or
``MIRAGE_JUDGE_CONFIG``: a bundled name or a YAML file; default ``local`` for the local model and
``paper`` otherwise, with the spec above); each board row names its judge config and sha256.
Error messages are scrubbed of API keys before they are stored or shown.

Endpoint submissions: the worker first sends one tiny chat request to the endpoint (an unreachable
or refusing endpoint fails at once, with the reason), then runs the engine's Task stage against it
in a subprocess whose environment holds no secret (the Space's own API keys never reach a submitted
endpoint), reporting "generating responses: k of n" in the queue as it goes.

Hub sync (``MIRAGE_HUB_REPO``): after each submission, and when idle if annotation labels or
requests changed, requests, result rows, claims and annotation labels are uploaded to that Hub
dataset repo (created private when missing). A failed sync is logged and retried later; it never
stops the worker.
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
import time
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from mirage_bench.leaderboard.endpoint_check import SECRET_ENV, check_endpoint, keyless_env
from mirage_bench.leaderboard.store import Status, SubmissionRequest, SubmissionStore, utc_now

log = logging.getLogger(__name__)

DEFAULT_JUDGE = "local"
#: A submission fails when more than this share of its responses could not be judged.
MAX_FAILED_SHARE = 0.5
_KEYLIKE = re.compile(r"\b(sk-[A-Za-z0-9_-]{8,}|sk-ant-[A-Za-z0-9_-]{8,}|hf_[A-Za-z0-9]{8,})\b")

#: The queue's note on a submission judged by a smoke-test judge (the embedded ``local`` model).
SMOKE_NOTE = "smoke-test judge: slow on a CPU, labels meaningless, row hidden from the ranked board"
#: What the Hub sync uploads (paths relative to the store root).
HUB_SYNC_PATTERNS: tuple[str, ...] = (
    "requests/*.json",
    "results/*/leaderboard_row.json",
    "results/*/claims.parquet",
    "annotation/labels/*/*.jsonl",
    "judges/canary/*.json*",
    "judges/canary/labels/*.jsonl",
)


def resolve_judge_config(judge: str | None = None, judge_config: str | None = None) -> Any:
    """The :class:`~mirage_bench.judges.config.JudgeConfig` a worker uses (see the module docstring).

    ``judge`` (or ``$MIRAGE_JUDGE``) overrides the config's spec; with no config named, the config is
    ``local`` for the local model and ``paper`` otherwise.

    >>> resolve_judge_config("scripted").spec, resolve_judge_config("scripted").name
    ('scripted', 'paper')
    """
    from mirage_bench.judges.config import effective_judge_config

    name = judge_config or os.environ.get("MIRAGE_JUDGE_CONFIG") or None
    spec = judge or os.environ.get("MIRAGE_JUDGE") or None
    if name is None:
        spec = spec or DEFAULT_JUDGE
        name = "local" if spec == "local" else "paper"
    return effective_judge_config(name, spec)


def resolve_judge(judge: str | None = None) -> str:
    """The judge spec a worker uses: ``judge``, else ``$MIRAGE_JUDGE``, else :data:`DEFAULT_JUDGE`.

    >>> resolve_judge("scripted")
    'scripted'
    """
    return judge or os.environ.get("MIRAGE_JUDGE") or DEFAULT_JUDGE


class Interrupted(Exception):
    """The worker was asked to stop mid-submission; the submission stays RUNNING and is resumed later."""


def redact(text: str, env: dict[str, str] | None = None) -> str:
    """Remove API keys from ``text``: values of secret-looking env vars and key-shaped strings.

    >>> redact("auth failed for key sk-abcdefghijklmnop", env={})
    'auth failed for key [redacted]'
    >>> redact("bad token XyZ123456789", env={"HF_TOKEN": "XyZ123456789"})
    'bad token [redacted]'
    """
    env = dict(os.environ) if env is None else env
    for name, value in env.items():
        if SECRET_ENV.search(name) and value and len(value) >= 8:
            text = text.replace(value, "[redacted]")
    return _KEYLIKE.sub("[redacted]", text)


class Worker:
    """Judges submissions from a :class:`SubmissionStore`, in a background thread or in the foreground."""

    def __init__(
        self,
        store_root: Path | str | None = None,
        *,
        judge: str | None = None,
        judge_config: str | None = None,
        poll_s: float = 2.0,
        concurrency: int = 8,
        hub_repo: str | None = None,
        endpoint_concurrency: int = 8,
        endpoint_check_timeout_s: float = 30.0,
        hub_sync_interval_s: float = 60.0,
        canary: bool | None = None,
    ) -> None:
        self.store = SubmissionStore(store_root)
        self.judge_config = resolve_judge_config(judge, judge_config)
        self.judge = self.judge_config.spec
        #: Run the drift canary on first use of a config/snapshot: None = only for non-smoke judges.
        self.canary = canary
        self.poll_s = poll_s
        self.concurrency = concurrency
        self.hub_repo = hub_repo if hub_repo is not None else os.environ.get("MIRAGE_HUB_REPO") or None
        self.endpoint_concurrency = endpoint_concurrency
        self.endpoint_check_timeout_s = endpoint_check_timeout_s
        self.hub_sync_interval_s = hub_sync_interval_s
        self._hub_synced: tuple[tuple[str, int, int], ...] | None = None
        self._hub_repo_ready = False
        self._hub_last_attempt = 0.0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = FileLock(str(self.store.root / ".worker.lock"))
        self._backend: Any = None

    # -- lifecycle ---------------------------------------------------------------------------
    def start_background(self) -> threading.Thread:
        """Run :meth:`serve` in a daemon thread (the Space's default)."""
        self._thread = threading.Thread(target=self.serve, name="mirage-worker", daemon=True)
        self._thread.start()
        return self._thread

    def stop(self, timeout: float = 10.0) -> None:
        """Ask the loop to stop after the current submission and wait for the thread."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def serve(self, *, once: bool = False) -> None:
        """Loop: hold the worker lock, judge submissions until stopped (or the queue is empty if ``once``)."""
        while not self._stop.is_set():
            try:
                self._lock.acquire(timeout=self.poll_s)
            except Timeout:
                if once:
                    raise RuntimeError(f"another worker holds {self._lock.lock_file}") from None
                continue
            try:
                while not self._stop.is_set():
                    if not self.run_once():
                        if once or time.monotonic() - self._hub_last_attempt >= self.hub_sync_interval_s:
                            self.sync_to_hub()  # annotation labels given since the last sync
                        if once:
                            return
                        self._stop.wait(self.poll_s)
            finally:
                self._lock.release()

    def run_once(self) -> bool:
        """Judge one submission (resuming an orphaned RUNNING one first); False when the queue is empty.

        Call only while holding the worker lock (:meth:`serve` does).
        """
        orphaned = [r for r in self.store.list_requests() if r.status == Status.RUNNING]
        request = orphaned[0] if orphaned else self.store.claim_next()
        if request is None:
            return False
        try:
            self.process(request)
        except Interrupted:
            log.info("submission %s interrupted: stays RUNNING, resumed later", request.submission_id)
            return True
        except Exception as exc:  # a submission never takes the worker down with it
            reason = redact(f"{type(exc).__name__}: {exc}")
            log.warning("submission %s failed: %s", request.submission_id, reason)
            self.store.update(
                request.submission_id, status=Status.FAILED, reason=reason, finished_at=utc_now()
            )
        self.sync_to_hub()
        return True

    # -- judging -----------------------------------------------------------------------------
    def _make_backend(self) -> Any:
        if self._backend is None:
            from mirage_bench.runs import build_backend

            # ``scripted`` / ``scripted:simulate,...`` is the engine's simulated judge (tests, demos).
            self._backend = build_backend(self.judge)
        return self._backend

    def process(self, request: SubmissionRequest) -> None:
        """Judge one RUNNING submission to the end (resumable)."""
        from mirage_bench.backends.registry import is_smoke_test
        from mirage_bench.cache import ResponseCache
        from mirage_bench.client import Client, ClientConfig, run_closing
        from mirage_bench.instruments.judge import judge_responses
        from mirage_bench.instruments.records import JudgmentRecord

        sid = request.submission_id
        run_dir = self.store.result_dir(sid)
        run_dir.mkdir(parents=True, exist_ok=True)
        responses = self._responses(request, run_dir)
        judgments_path = run_dir / "judgments.jsonl"
        done: dict[tuple[str, str], JudgmentRecord] = {}
        if judgments_path.exists():
            for line in judgments_path.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    try:
                        rec = JudgmentRecord.model_validate_json(line)
                    except ValueError:
                        continue  # a torn last line from a crash: that response is judged again
                    done[rec.key()] = rec
        retry = {k for k, r in done.items() if r.status == "call_failure"}
        todo = [
            r
            for r in responses
            if (r["persona_id"], r["task_id"]) not in done or (r["persona_id"], r["task_id"]) in retry
        ]
        backend = self._make_backend()
        smoke = is_smoke_test(backend)
        self._canary(backend, smoke)
        total = len(responses)
        self.store.update(
            sid,
            judge=self.judge,
            smoke_test=smoke,
            progress_total=total,
            progress_done=total - len(todo),
            n_responses=total,
            reason=SMOKE_NOTE if smoke else "",
        )
        write_lock = threading.Lock()
        counter = {"done": total - len(todo), "last": 0.0}

        # One append-mode handle for the whole submission: each verdict is written and flushed as it
        # arrives (a killed process loses nothing the OS has); fsync at most twice a second and at the end.
        fh = judgments_path.open("a", encoding="utf-8")

        def on_result(rec: JudgmentRecord) -> None:
            with write_lock:
                fh.write(rec.model_dump_json() + "\n")
                fh.flush()
                done[rec.key()] = rec
                counter["done"] += 1
                now = time.monotonic()
                if now - counter["last"] >= 0.5 or counter["done"] == total:
                    counter["last"] = now
                    os.fsync(fh.fileno())
                    self.store.update(sid, progress_done=counter["done"])

        try:
            if todo:
                cache = ResponseCache(run_dir / "judge_cache.sqlite")
                client = Client(backend, ClientConfig(concurrency=self.concurrency), cache=cache)
                run_closing(
                    judge_responses(
                        todo,
                        client,
                        judge_name=self.judge,
                        smoke_test=smoke,
                        on_result=on_result,
                        config=self.judge_config,
                    ),
                    client,
                )
        finally:
            fh.flush()
            os.fsync(fh.fileno())
            fh.close()
        self.store.update(sid, progress_done=counter["done"])
        self._finish(request, run_dir, list(done.values()), responses, total)
        self._canary(backend, smoke)

    def _canary(self, backend: Any, smoke: bool) -> None:
        """Run the drift canary the first time this judge config / snapshot is used (never raises)."""
        from mirage_bench.judges.canary import needs_canary, run_canary

        if self.canary is False or (self.canary is None and smoke):
            return
        try:
            if needs_canary(self.store.root, self.judge_config, getattr(backend, "snapshot", None)):
                run_canary(
                    self.store.root,
                    self.judge_config,
                    backend=backend,
                    reason="first use of this judge config / snapshot",
                    concurrency=self.concurrency,
                )
        except Exception as exc:  # noqa: BLE001 - a canary problem never stops judging
            log.warning("drift canary not run: %s", redact(str(exc)))

    def _responses(self, request: SubmissionRequest, run_dir: Path) -> list[dict[str, Any]]:
        """The submission's responses as engine records (also written to ``responses.jsonl`` once)."""
        path = run_dir / "responses.jsonl"
        if request.kind == "endpoint":
            return self._generate(request, run_dir)
        if path.exists():
            return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
        from mirage_bench.leaderboard.store import write_jsonl
        from mirage_bench.personas import load_personas

        groups = {p.persona_id: p.stereotype_type for p in load_personas()}
        records = []
        for r in self.store.load_upload(request.submission_id):
            rec: dict[str, Any] = {
                "model": request.model_name,
                "persona_id": r["persona_id"],
                "task_id": r["task_id"],
                "stereotype_type": groups[r["persona_id"]],
                "response": r["response"],
                "status": "ok",
            }
            if isinstance(r.get("self_audit"), dict):
                audit = dict(r["self_audit"])
                audit.setdefault("status", "ok")
                audit.setdefault("n_claims", len(audit.get("claims") or []))
                rec["self_audit"] = audit
            records.append(rec)
        write_jsonl(path, records)
        return records

    def _generate(self, request: SubmissionRequest, run_dir: Path) -> list[dict[str, Any]]:
        """Endpoint submissions: run the engine's Task stage against the endpoint (resumable run dir).

        A one-message check first (:func:`check_endpoint`); then ``mirage-bench run --stages task`` in a
        subprocess with no secret in its environment, its output in ``generation.log``, progress
        ("generating responses: k of n") in the request. Stopping the worker stops the subprocess and
        leaves the submission RUNNING: the engine's run directory resumes where it stopped.
        """
        import subprocess
        import sys

        from mirage_bench.leaderboard.store import expected_pairs, write_jsonl

        sid = request.submission_id
        base_url, model = request.endpoint_base_url or "", request.endpoint_model or ""
        self.store.update(sid, reason=f"checking the endpoint {base_url}")
        problem = check_endpoint(base_url, model, timeout_s=self.endpoint_check_timeout_s)
        if problem:
            raise RuntimeError(problem)
        gen_dir = run_dir / "generation"
        gen_dir.mkdir(parents=True, exist_ok=True)
        cmd = [
            sys.executable,
            "-m",
            "mirage_bench.cli",
            "run",
            "--model",
            f"openai:{model}@{base_url}",
            "--stages",
            "task",
            "--concurrency",
            str(self.endpoint_concurrency),
            "--out",
            str(gen_dir),
        ]
        expected = len(expected_pairs())
        log_path = run_dir / "generation.log"
        responses_path = gen_dir / "responses.jsonl"
        with log_path.open("ab") as log_fh:
            proc = subprocess.Popen(cmd, stdout=log_fh, stderr=subprocess.STDOUT, env=keyless_env())
            last = -1
            while proc.poll() is None:
                if self._stop.wait(1.0):
                    proc.terminate()
                    try:
                        proc.wait(30)
                    except subprocess.TimeoutExpired:
                        proc.kill()
                        proc.wait()
                    raise Interrupted
                done = _count_lines(responses_path)
                if done != last:
                    last = done
                    self.store.update(sid, reason=f"generating responses: {done} of {expected}")
        if proc.returncode != 0:
            lines = log_path.read_text(encoding="utf-8", errors="replace").splitlines()
            tail = [x for x in lines if x.strip()]
            raise RuntimeError(f"generation from the endpoint failed: {' | '.join(tail[-3:])}")
        lines = responses_path.read_text(encoding="utf-8").splitlines()
        records = [json.loads(x) for x in lines if x.strip()]
        for rec in records:
            rec["model"] = request.model_name
        failed = [r for r in records if r.get("status") != "ok"]
        if failed:
            raise RuntimeError(
                f"the endpoint failed on {len(failed)} of {len(records)} prompts "
                f"(first: {failed[0].get('error')})"
            )
        write_jsonl(run_dir / "responses.jsonl", records)
        self.store.update(sid, reason="")
        return records

    def _finish(
        self,
        request: SubmissionRequest,
        run_dir: Path,
        judgments: list[Any],
        responses: list[dict[str, Any]],
        total: int,
    ) -> None:
        from mirage_bench.leaderboard.board import RowMeta, measured_row, write_row

        ok = [j for j in judgments if j.status == "ok"]
        failed = [j for j in judgments if j.status != "ok"]
        sid = request.submission_id
        if not ok or len(failed) > MAX_FAILED_SHARE * total:
            first = failed[0].error if failed else "no judgments"
            raise RuntimeError(
                redact(f"the judge failed on {len(failed)} of {total} responses (first error: {first})")
            )
        from mirage_bench.runs import load_claims, write_claims

        write_claims(run_dir, ok)
        claims = load_claims(run_dir)
        meta = RowMeta(
            model=request.model_name,
            family=request.family,
            revision=request.revision,
            submitted=request.submitted_at[:10],
            submission_id=sid,
            link=request.link,
        )
        row = measured_row(claims, responses, meta)
        row["parse_failures"] = sum(j.status == "parse_failure" for j in failed)
        row["call_failures"] = sum(j.status == "call_failure" for j in failed)
        row["judge_config"] = self.judge_config.name
        row["judge_config_sha256"] = self.judge_config.sha256
        write_row(run_dir / "leaderboard_row.json", row)
        notes = [SMOKE_NOTE] if self.store.get(sid).smoke_test else []
        if failed:
            notes.append(f"{len(failed)} response(s) could not be judged and are excluded")
        note = "; ".join(notes)
        self.store.update(
            sid, status=Status.FINISHED, finished_at=utc_now(), reason=note, progress_done=len(judgments)
        )

    # -- Hub sync ----------------------------------------------------------------------------
    def _hub_files(self) -> list[Path]:
        return sorted({p for pattern in HUB_SYNC_PATTERNS for p in self.store.root.glob(pattern)})

    def _hub_fingerprint(self) -> tuple[tuple[str, int, int], ...]:
        out = []
        for path in self._hub_files():
            try:
                st = path.stat()
            except OSError:
                continue
            out.append((path.relative_to(self.store.root).as_posix(), st.st_size, st.st_mtime_ns))
        return tuple(out)

    def sync_to_hub(self, *, force: bool = False) -> bool:
        """Upload requests, result rows, claims and annotation labels to the Hub dataset ``hub_repo``.

        Uses ``huggingface_hub`` (``HF_TOKEN`` / ``HF_ENDPOINT`` as usual); the repo is created private
        when missing (request files carry contact addresses). Skipped when nothing changed since the
        last successful sync (unless ``force``). Returns True when an upload succeeded; a failure is
        logged (without keys) and retried at the next call, never raised.
        """
        if not self.hub_repo:
            return False
        self._hub_last_attempt = time.monotonic()
        fingerprint = self._hub_fingerprint()
        if not fingerprint or (fingerprint == self._hub_synced and not force):
            return False
        try:
            from huggingface_hub import HfApi

            api = HfApi()
            if not self._hub_repo_ready:
                api.create_repo(self.hub_repo, repo_type="dataset", private=True, exist_ok=True)
                self._hub_repo_ready = True
            api.upload_folder(
                repo_id=self.hub_repo,
                repo_type="dataset",
                folder_path=str(self.store.root),
                allow_patterns=list(HUB_SYNC_PATTERNS),
                commit_message="MirageBench leaderboard sync",
            )
        except Exception as exc:  # a sync failure never stops the worker
            log.warning("Hub sync to %s failed: %s", self.hub_repo, redact(f"{type(exc).__name__}: {exc}"))
            return False
        self._hub_synced = fingerprint
        log.info("Hub sync to %s: %d file(s)", self.hub_repo, len(fingerprint))
        return True


def _count_lines(path: Path) -> int:
    """Number of complete lines in ``path`` (0 when it does not exist yet)."""
    try:
        with path.open("rb") as fh:
            return sum(chunk.count(b"\n") for chunk in iter(lambda: fh.read(1 << 16), b""))
    except FileNotFoundError:
        return 0
