"""Drive a whole run: Task -> Judge per instance, Probe per persona, Accum per script; resumable.

Records are appended to the run directory as they complete. On a restart, records already on
disk are skipped (``call_failure`` / ``failed`` ones are retried by default), and calls that
completed before the interruption come back from the response cache. At the end every record
file is compacted (one record per key, sorted), so a resumed run's files equal an uninterrupted
run's.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rich.progress import ProgressColumn as ProgressColumnBase

from mirage_bench.instruments.records import ResponseRecord

if TYPE_CHECKING:  # pragma: no cover
    from mirage_bench.client import Client
    from mirage_bench.runs import RunDir
    from mirage_bench.types import Persona


@dataclass
class RunSettings:
    """What to run and how (everything but the backends)."""

    personas: Sequence[Persona]
    task_ids: Sequence[str]
    stages: Sequence[str]
    model_name: str
    judge_name: str | None
    seed: int = 0
    max_tokens: int = 1024
    audit_max_tokens: int = 2048
    judge_max_tokens: int = 4096
    max_attempts: int = 3
    retry_failed: bool = True
    smoke_test: bool = False
    accum_scripts: Sequence[Any] = field(default_factory=tuple)
    #: The judge's :class:`~mirage_bench.judges.config.JudgeConfig` (None: the G.2 defaults).
    judge_config: Any = None


class _Rate(ProgressColumnBase):
    """Completed units per second (or per minute when slow)."""

    def render(self, task: Any) -> Any:
        from rich.text import Text

        speed = task.finished_speed or task.speed
        if not speed:
            return Text("  -- /s", style="progress.data.speed")
        shown = f"{speed:5.1f}/s" if speed >= 0.1 else f"{speed * 60:5.1f}/min"
        return Text(shown, style="progress.data.speed")


class _Counts(ProgressColumnBase):
    """``failed N  retrying M`` of one stage (retrying: calls of its client waiting out a backoff)."""

    def __init__(self, retrying: Callable[[str], int]) -> None:
        super().__init__()
        self._retrying = retrying

    def render(self, task: Any) -> Any:
        from rich.text import Text

        failed = task.fields.get("failed", 0)
        retrying = self._retrying(task.fields.get("role", ""))
        text = Text()
        text.append(f"failed {failed}", style="red" if failed else "dim")
        text.append("  ")
        text.append(f"retrying {retrying}", style="yellow" if retrying else "dim")
        return text


class _Progress:
    """One rich progress display, a row per stage: done/total, failed, retrying, rate, ETA.

    A no-op when disabled. It writes to stderr, so ``--json`` output on stdout stays clean.
    """

    def __init__(self, enabled: bool, clients: dict[str, Client | None] | None = None) -> None:
        self._bar: Any = None
        self._tasks: dict[str, Any] = {}
        self._failed: dict[str, int] = {}
        self._clients = clients or {}
        if enabled:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

            self._bar = Progress(
                TextColumn("{task.description:<6}"),
                BarColumn(),
                MofNCompleteColumn(),
                _Counts(self._retrying),
                _Rate(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                console=Console(stderr=True),
                transient=False,
            )

    def _retrying(self, role: str) -> int:
        client = self._clients.get(role)
        return client.retrying if client is not None else 0

    @contextlib.contextmanager
    def running(self) -> Iterator[_Progress]:
        if self._bar is None:
            yield self
            return
        with self._bar:
            yield self

    def add(self, name: str, total: int, role: str) -> None:
        if self._bar is not None:
            self._tasks[name] = self._bar.add_task(name, total=total, failed=0, role=role)

    def advance(self, name: str, failed: bool = False) -> None:
        if self._bar is not None and name in self._tasks:
            self._failed[name] = self._failed.get(name, 0) + int(failed)
            self._bar.update(self._tasks[name], advance=1, failed=self._failed[name])


def quiet_libraries() -> None:
    """Silence transformers', datasets' and huggingface_hub's own progress bars inside a run.

    Sets the libraries' environment switches (read when they are first imported) and calls their
    ``disable_progress_bar(s)`` when they are already imported; nothing heavy is imported here.
    """
    import os
    import sys

    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")
    if "transformers" in sys.modules:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
        hf_logging.set_verbosity_error()
    if "datasets" in sys.modules:
        import datasets

        datasets.disable_progress_bars()
    if "huggingface_hub" in sys.modules:
        from huggingface_hub.utils import disable_progress_bars

        disable_progress_bars()


#: Allocations between two young-generation collections inside a run (CPython's default is 700).
RUN_GC_THRESHOLD0 = 10_000
_GC_LOCK = threading.Lock()
_GC_USERS = 0
_GC_BEFORE: tuple[int, ...] = ()


@contextlib.contextmanager
def throughput_gc(threshold0: int = RUN_GC_THRESHOLD0) -> Iterator[None]:
    """Inside the block, keep the cyclic garbage collector off the hot path of many concurrent calls.

    ``gc.freeze()`` moves every object alive at entry (the imported modules, the SDK clients,
    the personas: ~90,000 objects) out of the collector's generations, so a full collection no
    longer walks them; the young generation is collected every ``threshold0`` allocations
    instead of 700. Measured on the judge stage at 50 ms / concurrency 64 (1,500 requests, a
    fresh process per pass): the collector took ~165-180 ms of a ~2 s pass, two full collections
    of ~50 ms each stalling the event loop with 64 requests in flight; with both settings ~8 ms
    (``docs/engine-backends.md``). Reference counting frees everything that is not in a cycle
    either way, and on exit the threshold is restored and the frozen objects go back to the
    oldest generation (``gc.unfreeze()``), so nothing is kept for good.

    The setting is process-wide, so it is reference-counted: runs that overlap in one process
    (the Space's worker thread beside a CLI call in tests, two worker threads) share it; the first
    to enter sets it and the last to leave restores what was there before the first.
    """
    import gc

    global _GC_USERS, _GC_BEFORE
    with _GC_LOCK:
        if _GC_USERS == 0:
            _GC_BEFORE = gc.get_threshold()
            gc.freeze()
            gc.set_threshold(max(_GC_BEFORE[0], threshold0), *_GC_BEFORE[1:])
        _GC_USERS += 1
    try:
        yield
    finally:
        with _GC_LOCK:
            _GC_USERS -= 1
            if _GC_USERS == 0:
                gc.set_threshold(*_GC_BEFORE)
                gc.unfreeze()


def _record_failed(record: Any) -> bool:
    """Whether a finished record counts as failed in the progress display."""
    if getattr(record, "status", "ok") != "ok":
        return True
    audit = getattr(record, "self_audit", None)
    return audit is not None and audit.status in ("parse_failure", "call_failure")


async def drain(units: Iterable[Callable[[], Awaitable[None]]], workers: int) -> None:
    """Run ``units`` (zero-argument coroutine factories) on ``workers`` concurrent workers.

    Units are pulled lazily, one per free worker, so work finishes in the order it was started
    (streaming: the first records arrive in the first seconds) and memory stays bounded. The first
    exception (e.g. :class:`~mirage_bench.client.FatalBackendError`) cancels every other worker
    and is re-raised.
    """
    iterator = iter(units)

    async def worker() -> None:
        for make in iterator:
            await make()

    tasks = [asyncio.ensure_future(worker()) for _ in range(max(1, workers))]
    try:
        await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


def _needs_redo(record: Any, retry_failed: bool) -> bool:
    if record is None:
        return True
    if not retry_failed:
        return False
    status = getattr(record, "status", "ok")
    if status in ("failed", "call_failure"):
        return True
    audit = getattr(record, "self_audit", None)
    if audit is not None and audit.status == "call_failure":
        return True
    judgment = getattr(record, "judgment", None)
    return judgment is not None and judgment.status == "call_failure"


async def execute(
    run: RunDir,
    settings: RunSettings,
    model_client: Client | None,
    judge_client: Client | None,
    *,
    progress: bool = False,
    on_record: Callable[[], None] | None = None,
    workers: int | None = None,
) -> None:
    """Run every pending unit of work of ``settings`` into ``run``, streaming per instance.

    Each backend is checked first with one cheap request (:meth:`Client.preflight`: the judge too,
    before any model call is spent). Then ``workers`` workers (default: the clients' concurrency
    summed, so every client can be kept full) take one unit at a time: an instance runs task ->
    self-audit -> judge before the worker takes the next, so records and judge calls start in the
    first seconds. A :class:`~mirage_bench.client.FatalBackendError` stops every worker at once.
    """
    from mirage_bench.instruments.accum import ACCUM_CONDITIONS, run_accum
    from mirage_bench.instruments.judge import judge_response
    from mirage_bench.instruments.probe import run_probe
    from mirage_bench.instruments.task import run_task
    from mirage_bench.tasks import get_task
    from mirage_bench.usage import stage as usage_stage

    s = settings
    quiet_libraries()
    #: Keyword arguments every instrument call shares.
    common: dict[str, Any] = {"seed": s.seed, "max_attempts": s.max_attempts, "smoke_test": s.smoke_test}
    stores = {name: run.store(name) for name in ("responses", "judgments", "probe", "accum")}
    done = {name: store.read() for name, store in stores.items()}
    bars = _Progress(progress, {"model": model_client, "judge": judge_client})

    async def record(name: str, rec: Any) -> None:
        # fsync in a worker thread: concurrent appends overlap instead of stalling the event loop
        await asyncio.to_thread(stores[name].append, rec)
        done[name][rec.key()] = rec
        if on_record is not None:
            on_record()

    async def instance(persona: Persona, task_id: str) -> None:
        key = (persona.persona_id, task_id)
        rec: ResponseRecord | None = done["responses"].get(key)
        if "task" in s.stages:
            if _needs_redo(rec, s.retry_failed):
                assert model_client is not None
                rec = await run_task(
                    model_client,
                    persona,
                    get_task(task_id),
                    model_name=s.model_name,
                    max_tokens=s.max_tokens,
                    audit_max_tokens=s.audit_max_tokens,
                    **common,
                )
                await record("responses", rec)
            bars.advance("task", failed=rec is None or _record_failed(rec))
        if "judge" in s.stages:
            judged: Any = None
            if rec is not None and rec.status == "ok":
                judged = done["judgments"].get(key)
                if _needs_redo(judged, s.retry_failed) or (judged is not None and judged.model != rec.model):
                    assert judge_client is not None and s.judge_name is not None
                    judged = await judge_response(
                        judge_client, rec, persona, judge_name=s.judge_name, max_tokens=s.judge_max_tokens,
                        config=s.judge_config, **common,
                    )
                    await record("judgments", judged)
            bars.advance("judge", failed=judged is None or _record_failed(judged))

    async def unit(name: str, key: tuple[str, ...], make: Callable[[], Awaitable[Any]]) -> None:
        """Run one Probe / Accum unit unless its record is already done."""
        rec = done[name].get(key)
        if _needs_redo(rec, s.retry_failed):
            assert model_client is not None
            with usage_stage(name):
                rec = await make()
            await record(name, rec)
        bars.advance(name, failed=_record_failed(rec))

    def probe(persona: Persona) -> Awaitable[None]:
        return unit("probe", (persona.persona_id,), lambda: run_probe(
            model_client, persona, model_name=s.model_name, judge_client=judge_client,
            judge_name=s.judge_name, max_tokens=s.audit_max_tokens, judge_max_tokens=s.judge_max_tokens,
            judge_config=s.judge_config, **common,
        ))

    def accum(persona: Persona, script: Any, condition: str) -> Awaitable[None]:
        return unit("accum", (condition, persona.persona_id), lambda: run_accum(
            model_client, persona, script.utterances, script.contradictions, model_name=s.model_name,
            condition=condition, max_tokens=s.audit_max_tokens, **common,
            judge_client=judge_client, judge_name=s.judge_name, judge_max_tokens=s.judge_max_tokens,
        ))

    n_instances = len(s.personas) * len(s.task_ids)
    scripts = {sc.persona_id: sc for sc in s.accum_scripts}
    accum_personas = [p for p in s.personas if p.persona_id in scripts]

    def units() -> Iterator[Callable[[], Awaitable[None]]]:
        if "task" in s.stages or "judge" in s.stages:
            for p in s.personas:
                for t in s.task_ids:
                    yield lambda p=p, t=t: instance(p, t)
        if "probe" in s.stages:
            for p in s.personas:
                yield lambda p=p: probe(p)
        if "accum" in s.stages:
            for c in ACCUM_CONDITIONS:
                for p in accum_personas:
                    yield lambda p=p, c=c: accum(p, scripts[p.persona_id], c)

    # one cheap request per backend before the first real one: a bad key stops the run here
    distinct = {id(c): c for c in (judge_client, model_client) if c is not None}
    for client in distinct.values():
        await client.preflight()
    if workers is None:
        workers = sum(c.config.concurrency for c in distinct.values()) or 1
    with bars.running(), throughput_gc():
        for stage, total, role in (
            ("task", n_instances, "model"),
            ("judge", n_instances, "judge"),
            ("probe", len(s.personas), "model"),
            ("accum", len(accum_personas) * len(ACCUM_CONDITIONS), "model"),
        ):
            if stage in s.stages:
                bars.add(stage, total, role)
        await drain(units(), workers)


# --- entry points used by the CLI ----------------------------------------------------------------
def select_personas(spec: str) -> list[Persona]:
    """``all``, a count ``N`` (the first N personas) or comma-separated persona ids."""
    from mirage_bench.personas import get_persona, load_personas

    spec = spec.strip()
    personas = load_personas()
    if spec == "all":
        return personas
    if spec.isdigit():
        n = int(spec)
        if not 1 <= n <= len(personas):
            raise ValueError(f"--personas {n}: choose 1..{len(personas)}")
        return personas[:n]
    return [get_persona(pid.strip()) for pid in spec.split(",") if pid.strip()]


def select_tasks(spec: str) -> list[str]:
    """``all`` or comma-separated task ids (validated)."""
    from mirage_bench.tasks import TASK_IDS, get_task

    if spec.strip() == "all":
        return list(TASK_IDS)
    return [get_task(t.strip()).task_id for t in spec.split(",") if t.strip()]


def select_stages(spec: str) -> list[str]:
    """Comma-separated stages, validated and put in execution order."""
    from mirage_bench.runs import STAGES

    wanted = {s.strip() for s in spec.split(",") if s.strip()}
    unknown = sorted(wanted - set(STAGES))
    if unknown or not wanted:
        raise ValueError(f"unknown stage(s) {unknown}; choose from {', '.join(STAGES)}")
    return [s for s in STAGES if s in wanted]


FREE_KINDS = ("scripted", "local", "transformers", "llamacpp", "vllm")


@dataclass
class Session:
    """One process working on a run directory: backends, clients, manifest, usage bookkeeping.

    Usage lives in the run's :class:`~mirage_bench.runs.UsageLedger` (every request journalled
    before it is sent, over all sessions); the manifest is rewritten from it.
    """

    run: RunDir
    manifest: Any
    clients: dict[str, Client]
    prices: dict[str, tuple[float, float] | None]
    ledger: Any
    records_since_save: int = 0

    def stage_usage(self) -> dict[str, dict[str, int]]:
        """Usage per stage (:mod:`mirage_bench.usage`) over every session: the ledger's ``stage:*`` rows."""
        from mirage_bench.client import ClientStats

        zero = ClientStats().as_dict()
        return {
            role.partition(":")[2]: {**zero, **counters}
            for role, counters in sorted(self.ledger.totals.items())
            if role.startswith("stage:")
        }

    def usage(self) -> dict[str, dict[str, int]]:
        """Counters per role over every session of the run."""
        from mirage_bench.client import ClientStats

        zero = ClientStats().as_dict()
        return {role: {**zero, **self.ledger.totals.get(role, {})} for role in self.clients}

    def save(self, status: str | None = None) -> None:
        from mirage_bench.runs import utc_now

        m = self.manifest
        m.usage = self.usage()
        costs = []
        for role, u in m.usage.items():
            price = self.prices.get(role)
            if price is None:
                costs.append(None)
            else:
                costs.append((u["input_tokens"] * price[0] + u["output_tokens"] * price[1]) / 1e6)
        m.cost_estimate_usd = None if any(c is None for c in costs) else round(sum(costs), 6)
        from mirage_bench.usage import STAGE_ROLES

        m.usage_by_stage = self.stage_usage()
        m.cost_by_stage_usd = {}
        for name, u in m.usage_by_stage.items():
            price = self.prices.get(STAGE_ROLES.get(name, "model"))
            m.cost_by_stage_usd[name] = (
                None if price is None
                else round((u["input_tokens"] * price[0] + u["output_tokens"] * price[1]) / 1e6, 6)
            )
        if status is not None:
            m.status = status
            m.finished_at = utc_now() if status != "running" else None
        self.run.write_manifest(m)

    def tick(self) -> None:
        self.records_since_save += 1
        if self.records_since_save >= 25:
            self.records_since_save = 0
            self.save()


def _price(spec: str | None, given: tuple[float, float] | None) -> tuple[float, float] | None:
    """The price of ``spec``: ``given``, else the price table (:func:`mirage_bench.cost.lookup_price`)."""
    from mirage_bench.cost import lookup_price

    if given is not None:
        return given
    if spec is not None and spec.split(":")[0] in FREE_KINDS:
        return (0.0, 0.0)
    return lookup_price(spec)


def run_session(
    identity: Any,
    run_dir: Any,
    settings: RunSettings,
    *,
    model_backend: Any,
    judge_backend: Any,
    concurrency: int = 8,
    cache_path: Any = None,
    prices: dict[str, tuple[float, float] | None] | None = None,
    progress: bool = False,
    responses_to_seed: Sequence[ResponseRecord] = (),
    client_options: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Open (or continue) ``run_dir``, execute the pending work, finalise the files; returns the summary."""
    from pathlib import Path

    from mirage_bench.cache import ResponseCache
    from mirage_bench.client import Client, ClientConfig, FatalBackendError, run_closing
    from mirage_bench.instruments.records import write_json_atomic
    from mirage_bench.instruments.summary import summarize
    from mirage_bench.runs import RunDir, write_claims

    run = RunDir(run_dir)
    run.path.mkdir(parents=True, exist_ok=True)
    with run.lock():
        manifest = run.open(identity, smoke_test=settings.smoke_test)
        if settings.judge_config is not None:
            manifest.judge_config = settings.judge_config.manifest_entry()
        if responses_to_seed:
            store = run.store("responses")
            have = store.read()
            for rec in responses_to_seed:
                if rec.key() not in have:
                    store.append(rec)
        # group commit: the puts of one loop iteration share a commit (cache.py: a kill -9 can cost
        # the last iteration's rows one repeated call each; records and usage are written apart)
        cache = ResponseCache(Path(cache_path) if cache_path else run.path / "cache.sqlite",
                              group_commit=True)
        config = ClientConfig(**{"concurrency": concurrency, **(client_options or {})})
        ledger = run.ledger()
        ledger.seed(manifest.usage)
        clients: dict[str, Client] = {}
        if not any(role.startswith("stage:") for role in ledger.totals):
            for name, counters in manifest.usage_by_stage.items():  # runs written before the ledger
                for counter, n in counters.items():
                    if n:
                        ledger.add(f"stage:{name}", counter, int(n))
        for role, backend in (("model", model_backend), ("judge", judge_backend)):
            if backend is not None:
                clients[role] = Client(backend, config, cache, role=role, ledger=ledger)
        session = Session(run, manifest, clients, prices or {}, ledger)
        try:
            run_closing(
                execute(
                    run,
                    settings,
                    clients.get("model"),
                    clients.get("judge"),
                    progress=progress,
                    on_record=session.tick,
                ),
                *clients.values(),
            )
        except FatalBackendError:
            session.save("failed")
            raise
        except BaseException:
            session.save("interrupted")
            raise
        finally:
            cache.close()
            ledger.close()
        run.compact()
        responses, judgments = run.read("responses"), run.read("judgments")
        if "judge" in settings.stages:
            write_claims(run.path, judgments)
        summary = summarize(
            responses,
            judgments,
            run.read("probe"),
            run.read("accum"),
            model=settings.model_name,
            judge=settings.judge_name,
            smoke_test=settings.smoke_test,
        )
        write_json_atomic(run.path / "summary.json", summary)
        session.save("complete")
        return summary
