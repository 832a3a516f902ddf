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
``paper`` otherwise, with the spec above); each board row names its judge config and sha256. The
drift canary (:mod:`mirage_bench.judges.canary`) runs the first time a (non-smoke) judge config or
backend snapshot is used. Error messages are scrubbed of API keys before they are stored or shown.

Endpoint submissions: the worker first sends one tiny chat request to the endpoint (an unreachable
or refusing endpoint fails at once, with the reason), then runs the engine's Task stage against it
in a subprocess whose environment holds no secret (the Space's own API keys never reach a submitted
endpoint), reporting "generating responses: k of n" in the queue as it goes.

Shutdown (:meth:`Worker.stop`, SIGINT/SIGTERM in the CLI and the Space): the worker stops taking
new calls, cancels the calls in flight (a local generation that cannot be interrupted is abandoned in
a daemon thread), records no failure verdict for them, flushes and returns within seconds; the
submission stays RUNNING and the next start resumes it.

One judge per result: a RUNNING submission whose verdicts came from another judge than this
worker's is re-judged from scratch (the old verdicts are set aside in ``judgments.<judge>.discarded``),
and a finished result's ``judgments.jsonl`` holds exactly one verdict per response.

Hub (:mod:`mirage_bench.leaderboard.hub`): when the store has a Hub mirror, every state change asks
for a commit and :meth:`Worker.stop` flushes it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import logging
import os
import re
import threading
import time
from collections.abc import Callable
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
#: The same note for the engine's simulated judge (fast, but its labels are simulated).
SIMULATED_NOTE = "simulated judge: labels simulated, not a model's verdicts; row hidden from the ranked board"


def smoke_note(judge: str) -> str:
    """The queue's note on a submission judged by a smoke-test judge.

    >>> smoke_note("scripted").startswith("simulated judge")
    True
    """
    return SIMULATED_NOTE if judge == "scripted" or judge.startswith("scripted:") else SMOKE_NOTE
#: Shown in the queue while the judge model loads (a local judge loads it before its first verdict).
LOADING_NOTE = "loading the judge model"


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


class _DaemonExecutor(concurrent.futures.ThreadPoolExecutor):
    """Runs each call in its own daemon thread; ``shutdown`` never waits.

    The event loop's default executor (``asyncio.to_thread``, used by local backends) would make
    the interpreter wait at exit for a generation that cannot be interrupted; with this executor a
    stopped worker abandons such a call and the process exits at once.
    """

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> concurrent.futures.Future:
        future: concurrent.futures.Future = concurrent.futures.Future()

        def run() -> None:
            if not future.set_running_or_notify_cancel():
                return
            try:
                future.set_result(fn(*args, **kwargs))
            except BaseException as exc:  # noqa: BLE001 - handed to the awaiting coroutine
                future.set_exception(exc)

        threading.Thread(target=run, name="mirage-judge-call", daemon=True).start()
        return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Never waits: an abandoned call finishes (or not) in its daemon thread."""
        return None


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
        store: SubmissionStore | Path | str | None = None,
        *,
        judge: str | None = None,
        judge_config: str | None = None,
        poll_s: float = 2.0,
        concurrency: int = 8,
        endpoint_concurrency: int = 8,
        endpoint_check_timeout_s: float = 30.0,
        canary: bool | None = None,
    ) -> None:
        self.store = store if isinstance(store, SubmissionStore) else SubmissionStore(store)
        self.judge_config = resolve_judge_config(judge, judge_config)
        self.judge = self.judge_config.spec
        #: Run the drift canary on first use of a config/snapshot: None = only for non-smoke judges.
        self.canary = canary
        self.poll_s = poll_s
        self.concurrency = concurrency
        self.endpoint_concurrency = endpoint_concurrency
        self.endpoint_check_timeout_s = endpoint_check_timeout_s
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

    @property
    def stopping(self) -> bool:
        """True once :meth:`stop` (or :meth:`request_stop`) was called."""
        return self._stop.is_set()

    def request_stop(self) -> None:
        """Ask the worker to stop (safe from a signal handler): no new calls, in-flight calls abandoned."""
        self._stop.set()

    def stop(self, timeout: float = 10.0) -> bool:
        """Stop the worker, wait up to ``timeout`` s for its thread, then flush the Hub mirror.

        Returns True when the worker thread (if any) has ended.
        """
        self._stop.set()
        ended = True
        if self._thread is not None:
            self._thread.join(timeout)
            ended = not self._thread.is_alive()
        if self.store.mirror is not None:
            self.store.mirror.flush()
        return ended

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
            if self._stop.is_set():  # an error caused by the shutdown itself is not a verdict
                log.info("submission %s stopped (%s): stays RUNNING", request.submission_id, exc)
                return True
            reason = redact(f"{type(exc).__name__}: {exc}")
            log.warning("submission %s failed: %s", request.submission_id, reason)
            self.store.update(
                request.submission_id, status=Status.FAILED, reason=reason, finished_at=utc_now()
            )
        return True

    # -- judging -----------------------------------------------------------------------------
    def _make_backend(self) -> Any:
        if self._backend is None:
            from mirage_bench.runs import build_backend

            # ``scripted`` / ``scripted:simulate,...`` is the engine's simulated judge (tests, demos).
            self._backend = build_backend(self.judge)
        return self._backend

    def process(self, request: SubmissionRequest) -> None:
        """Judge one RUNNING submission to the end (resumable; raises :class:`Interrupted` on stop)."""
        from mirage_bench.backends.registry import is_smoke_test
        from mirage_bench.instruments.records import JudgmentRecord

        sid = request.submission_id
        run_dir = self.store.result_dir(sid)
        run_dir.mkdir(parents=True, exist_ok=True)
        responses = self._responses(request, run_dir)
        if self._stop.is_set():
            raise Interrupted
        judgments_path = run_dir / "judgments.jsonl"
        self._one_judge(request, judgments_path)
        done: dict[tuple[str, str], JudgmentRecord] = {}
        if judgments_path.exists():
            for line in judgments_path.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    try:
                        rec = JudgmentRecord.model_validate_json(line)
                    except ValueError:
                        continue  # a torn last line from a crash: that response is judged again
                    if rec.judge == self.judge:
                        done[rec.key()] = rec
        retry = {k for k, r in done.items() if r.status == "call_failure"}
        todo = [
            r
            for r in responses
            if (r["persona_id"], r["task_id"]) not in done or (r["persona_id"], r["task_id"]) in retry
        ]
        backend = self._make_backend()
        smoke = is_smoke_test(backend)
        total = len(responses)
        self.store.update(
            sid,
            judge=self.judge,
            smoke_test=smoke,
            progress_total=total,
            progress_done=total - len(todo),
            n_responses=total,
            rate_per_min=None,
            eta_s=None,
            reason=smoke_note(self.judge) if smoke else "",
        )
        self._canary(backend, smoke)
        if todo:
            self._judge(sid, backend, smoke, todo, total, judgments_path, done)
        self._finish(request, run_dir, list(done.values()), responses, total)
        reported = {j.judge_snapshot for j in done.values() if getattr(j, "judge_snapshot", None)}
        self._canary(backend, smoke, reported)

    def _canary(self, backend: Any, smoke: bool, reported: set[str] | None = None) -> None:
        """Run the drift canary the first time this judge config / snapshot is used, or when the provider
        reports a model snapshot no canary run saw (never raises)."""
        from mirage_bench.judges.canary import needs_canary, run_canary

        if self.canary is False or (self.canary is None and smoke) or self.stopping:
            return
        try:
            if needs_canary(self.store.root, self.judge_config, getattr(backend, "snapshot", None), reported):
                run_canary(
                    self.store.root,
                    self.judge_config,
                    backend=backend,
                    reason="first use of this judge config / snapshot"
                    + (f" (reported: {', '.join(sorted(reported))})" if reported else ""),
                    concurrency=self.concurrency,
                )
        except Exception as exc:  # noqa: BLE001 - a canary problem never stops judging
            log.warning("drift canary not run: %s", redact(str(exc)))

    def _one_judge(self, request: SubmissionRequest, judgments_path: Path) -> None:
        """Set aside verdicts of another judge (a judge change between two starts): never mix two."""
        from mirage_bench.fileio import read_jsonl_lenient

        judges = {rec.get("judge") for rec in read_jsonl_lenient(judgments_path, objects_only=True)}
        if judges <= {self.judge}:
            return
        others = sorted(str(j) for j in judges - {self.judge})
        safe = re.sub(r"[^A-Za-z0-9._-]", "_", "+".join(others))[:80]
        aside = judgments_path.with_name(f"judgments.{safe}.discarded")
        os.replace(judgments_path, aside)
        log.warning(
            "submission %s: verdicts from judge(s) %s set aside in %s; re-judging from scratch with %s",
            request.submission_id, ", ".join(others), aside.name, self.judge,
        )

    def _judge(
        self,
        sid: str,
        backend: Any,
        smoke: bool,
        todo: list[dict[str, Any]],
        total: int,
        judgments_path: Path,
        done: dict[tuple[str, str], Any],
    ) -> None:
        """Judge ``todo``, appending each verdict as it arrives; progress, rate and ETA in the request."""
        from mirage_bench.cache import ResponseCache
        from mirage_bench.client import Client, ClientConfig, run_closing
        from mirage_bench.instruments.judge import judge_responses

        run_dir = judgments_path.parent
        write_lock = threading.Lock()
        start_done = total - len(todo)
        state: dict[str, Any] = {"done": start_done, "last": 0.0, "first_at": None, "first_done": 0}
        # One append-mode handle for the whole submission: each verdict is written and flushed as it
        # arrives (a killed process loses nothing the OS has); fsync at most twice a second and at the end.
        fh = judgments_path.open("a", encoding="utf-8")

        def progress_fields(now: float) -> dict[str, Any]:
            if state["first_at"] is None or state["done"] - state["first_done"] < 1:
                return {"progress_done": state["done"]}
            elapsed = now - state["first_at"]
            rate = (state["done"] - state["first_done"]) / elapsed if elapsed > 0 else 0.0
            left = total - state["done"]
            return {
                "progress_done": state["done"],
                "rate_per_min": round(rate * 60, 2) if rate else None,
                "eta_s": round(left / rate) if rate else None,
            }

        def on_result(rec: Any) -> None:
            with write_lock:
                if self._stop.is_set() and rec.status == "call_failure":
                    return  # a call cut short by the shutdown is not a verdict: judged again on resume
                fh.write(rec.model_dump_json() + "\n")
                fh.flush()
                done[rec.key()] = rec
                state["done"] += 1
                now = time.monotonic()
                if state["first_at"] is None:  # the rate counts from the first verdict (after loading)
                    state["first_at"], state["first_done"] = now, state["done"]
                    self.store.update(sid, phase="judging")
                if now - state["last"] >= 0.5 or state["done"] == total:
                    state["last"] = now
                    os.fsync(fh.fileno())
                    self.store.update(sid, **progress_fields(now))

        async def main(client: Client) -> None:
            asyncio.get_running_loop().set_default_executor(_DaemonExecutor())
            load = getattr(backend, "load", None) or getattr(backend, "_load", None)
            if callable(load):  # a local judge: load the model first, and say so in the queue
                self.store.update(sid, phase=LOADING_NOTE)
                await self._until_stopped(asyncio.to_thread(load))
            self.store.update(sid, phase="judging")
            await self._until_stopped(
                judge_responses(
                    todo, client, judge_name=self.judge, smoke_test=smoke, on_result=on_result,
                    config=self.judge_config,
                )
            )

        try:
            cache = ResponseCache(run_dir / "judge_cache.sqlite")
            client = Client(backend, ClientConfig(concurrency=self.concurrency), cache=cache)
            run_closing(main(client), client)  # its loop's executor never waits (_DaemonExecutor)
        finally:
            with write_lock:
                fh.flush()
                os.fsync(fh.fileno())
                fh.close()
            self.store.update(sid, **progress_fields(time.monotonic()))
        if self._stop.is_set():
            raise Interrupted

    async def _until_stopped(self, awaitable: Any) -> Any:
        """Await ``awaitable``; when the worker is asked to stop, cancel it and raise :class:`Interrupted`."""
        task = asyncio.ensure_future(awaitable)
        while not task.done():
            await asyncio.wait({task}, timeout=0.2)
            if self._stop.is_set() and not task.done():
                task.cancel()
                try:
                    await asyncio.wait_for(asyncio.shield(task), timeout=2.0)
                except BaseException:  # noqa: BLE001 - cancelled or abandoned: the stop wins
                    pass
                raise Interrupted
        return task.result()

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
                    proc.terminate()  # the engine saves its run directory on SIGTERM; resumed later
                    try:
                        proc.wait(5)
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
        from mirage_bench.leaderboard.store import write_jsonl
        from mirage_bench.runs import load_claims, write_claims

        # exactly one verdict per response, all from this judge (a retried call failure leaves two lines)
        write_jsonl(run_dir / "judgments.jsonl", [j.model_dump(mode="json") for j in judgments])
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
        from mirage_bench.leaderboard.integrity import submission_flags

        flags = submission_flags(responses, judgments)
        if claims.empty:  # Eq. 1 has no value: a submission that says nothing about the user is not ranked
            found = f" (integrity flags: {'; '.join(flags)})" if flags else ""
            self.store.update(sid, flags=flags)
            raise RuntimeError(
                f"the judge found no claim about the user in any of the {len(ok)} judged responses: a "
                f"submission that does not personalize has no OI to rank{found}"
            )
        row = measured_row(claims, responses, meta, n_judged=len(ok), flags=flags)
        row["parse_failures"] = sum(j.status == "parse_failure" for j in failed)
        row["call_failures"] = sum(j.status == "call_failure" for j in failed)
        row["judge_config"] = self.judge_config.name
        row["judge_config_sha256"] = self.judge_config.sha256
        write_row(run_dir / "leaderboard_row.json", row)
        notes = [smoke_note(self.judge)] if self.store.get(sid).smoke_test else []
        if failed:
            notes.append(f"{len(failed)} response(s) could not be judged and are excluded")
        note = "; ".join(notes)
        self.store.update(
            sid,
            status=Status.FINISHED,
            finished_at=utc_now(),
            reason=note,
            progress_done=len(judgments),
            flags=flags,
            phase="",
            eta_s=None,
        )


def _count_lines(path: Path) -> int:
    """Number of complete lines in ``path`` (0 when it does not exist yet)."""
    try:
        with path.open("rb") as fh:
            return sum(chunk.count(b"\n") for chunk in iter(lambda: fh.read(1 << 16), b""))
    except FileNotFoundError:
        return 0


def install_shutdown_signals(on_first: Callable[[], None], *, grace_s: float = 8.0) -> None:
    """Handle SIGINT and SIGTERM alike (call from the main thread).

    The first signal calls ``on_first`` (e.g. :meth:`Worker.request_stop`, or raise
    ``KeyboardInterrupt`` to close a server) and arms a watchdog that ends the process after
    ``grace_s`` seconds if the orderly shutdown has not finished by then; a second signal ends it at
    once. Verdicts are flushed to the OS as they are written, so neither exit loses one.
    """
    import signal
    import sys

    state = {"armed": False}

    def handler(signum: int, frame: Any) -> None:
        name = signal.Signals(signum).name
        if state["armed"]:
            sys.stderr.write(f"{name} again: exiting now (RUNNING submissions resume on the next start)\n")
            sys.stderr.flush()
            os._exit(128 + signum)
        state["armed"] = True
        sys.stderr.write(f"{name}: stopping (no new judge calls; in-flight calls abandoned, not failed)\n")
        sys.stderr.flush()

        def watchdog() -> None:
            sys.stderr.write(f"shutdown took longer than {grace_s:g} s: exiting now\n")
            sys.stderr.flush()
            os._exit(0)

        timer = threading.Timer(grace_s, watchdog)
        timer.daemon = True
        timer.start()
        on_first()

    signal.signal(signal.SIGINT, handler)
    signal.signal(signal.SIGTERM, handler)


#: Modules a transformers-based local judge needs besides the model files (STACK-FACTS).
_TRANSFORMERS_MODULES: tuple[str, ...] = ("torch", "transformers", "gguf", "accelerate")


def judge_problem(judge: str | None = None) -> str:
    """Why the judge ``judge`` (resolved as the worker does) cannot run here, or '' when it can.

    An availability check, not a model call: the backend is built (its SDK imported, its key and
    model files found) and, for a local transformers judge, the libraries it loads with are looked up.

    >>> judge_problem("scripted")
    ''
    """
    import importlib.util

    spec = resolve_judge(judge)
    try:
        from mirage_bench.runs import build_backend

        backend = build_backend(spec)
    except Exception as exc:  # noqa: BLE001 - every reason is reported, none raised
        return redact(f"the judge {spec!r} cannot be loaded: {type(exc).__name__}: {exc}")
    if type(backend).__module__.endswith("hf_transformers"):
        missing = [m for m in _TRANSFORMERS_MODULES if importlib.util.find_spec(m) is None]
        if missing:
            return f"the judge {spec!r} needs the Python package(s) {', '.join(missing)} (not installed)"
    return ""
