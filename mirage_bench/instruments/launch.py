"""The two ways to start a run: a full benchmark run of a model, or judging a responses file.

Both resolve their arguments into a :class:`~mirage_bench.runs.RunIdentity` (which names the
default run directory and guards resumption) and then call
:func:`mirage_bench.instruments.pipeline.run_session`.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from mirage_bench.fileio import nonblank_lines, parse_json_line
from mirage_bench.instruments.parsing import AuditClaim
from mirage_bench.instruments.pipeline import (
    RunSettings,
    run_session,
    select_personas,
    select_stages,
    select_tasks,
)
from mirage_bench.instruments.records import ResponseRecord, SelfAudit, SelfAuditClaim


def _package_version() -> str:
    from mirage_bench import __version__

    return __version__


def _is_smoke(spec: str | None, backend: Any) -> bool:
    from mirage_bench.backends.registry import is_smoke_test

    local = spec is not None and spec.split(":")[0] == "local"
    return local or (backend is not None and is_smoke_test(backend))


#: Token budgets when none is given: (Task response, self-audit / Probe / Accum, judgment).
DEFAULT_TOKENS: dict[str, int] = {"max_tokens": 1024, "audit_max_tokens": 2048, "judge_max_tokens": 4096}


def with_default_timeout(options: dict[str, Any] | None, *specs: str | None) -> dict[str, Any]:
    """``options`` with ``timeout_s`` defaulted: 900 s when a backend is the local model, else the client's
    (120 s)."""
    out = dict(options or {})
    if out.get("timeout_s") is None:
        out.pop("timeout_s", None)
        if any(spec is not None and spec.split(":")[0] == "local" for spec in specs):
            from mirage_bench.backends.local import LOCAL_TIMEOUT_S

            out["timeout_s"] = LOCAL_TIMEOUT_S
    return out


def default_tokens(name: str, spec: str | None) -> int:
    """The default budget ``name`` for a model spec: smaller for the embedded ``local`` model.

    >>> default_tokens("judge_max_tokens", "openai:gpt-4o-mini"), default_tokens("judge_max_tokens", "local")
    (4096, 800)
    """
    if spec is not None and spec.split(":")[0] == "local":
        from mirage_bench.backends.local import LOCAL_TOKEN_DEFAULTS

        return LOCAL_TOKEN_DEFAULTS[name]
    return DEFAULT_TOKENS[name]


def start_run(
    *,
    model: str,
    judge: str | None = None,
    judge_config: Any = None,
    personas: str = "all",
    tasks: str = "all",
    stages: str = "task,judge",
    concurrency: int = 8,
    out: str | Path | None = None,
    seed: int = 0,
    max_tokens: int | None = None,
    audit_max_tokens: int | None = None,
    judge_max_tokens: int | None = None,
    max_attempts: int | None = None,
    retry_failed: bool = True,
    cache_path: str | Path | None = None,
    model_price: tuple[float, float] | None = None,
    judge_price: tuple[float, float] | None = None,
    progress: bool = False,
    backends: tuple[Any, Any] | None = None,
    client_options: dict[str, Any] | None = None,
    dry_run: bool = False,
    batch: bool = False,
) -> tuple[Path, dict[str, Any]]:
    """Run (or continue) a benchmark run; returns the run directory and its summary.

    With ``dry_run`` nothing is sent and no backend is built: the second value is the per-stage
    estimate of :func:`mirage_bench.cost.estimate_run` (calls, tokens, output caps, cost).

    ``judge_config`` names the judge (:func:`~mirage_bench.judges.config.effective_judge_config`:
    a bundled name, a YAML path or a config; ``judge`` overrides its spec, ``judge_max_tokens`` and
    ``max_attempts`` its values when given).
    ``backends`` overrides the backends built from the specs (tests); the specs still name them.
    ``client_options`` are extra :class:`~mirage_bench.client.ClientConfig` fields (e.g. backoff).
    ``batch`` sends the calls through the providers' batch APIs (:mod:`mirage_bench.backends.batch`;
    stages task and judge only).
    A token budget left ``None`` takes :func:`default_tokens` for its model (the judge's for
    ``judge_max_tokens``).
    """
    from mirage_bench.instruments.pipeline import _price
    from mirage_bench.judges.config import effective_judge_config
    from mirage_bench.runs import RunIdentity, build_backend, default_run_dir, prompt_shas, templates_for

    max_tokens = default_tokens("max_tokens", model) if max_tokens is None else max_tokens
    if audit_max_tokens is None:
        audit_max_tokens = default_tokens("audit_max_tokens", model)
    if judge_max_tokens is None and judge_config is None and judge:
        # no config named: the paper's settings, with the spec's default budget (smaller for local)
        judge_max_tokens = default_tokens("judge_max_tokens", judge)
    stage_list = select_stages(stages)
    config = effective_judge_config(
        judge_config, judge, max_tokens=judge_max_tokens, parse_attempts=max_attempts
    )
    if ("judge" in stage_list) and config is None:
        raise ValueError("the judge stage needs --judge SPEC or --judge-config NAME|FILE")
    judge = config.spec if config is not None else None
    judge_max_tokens = config.max_tokens if config is not None else (judge_max_tokens or 4096)
    max_attempts = max_attempts or 3
    persona_list = select_personas(personas)
    task_list = select_tasks(tasks)
    # the budgets name the run (identity settings) and drive it (RunSettings): one dict for both
    budgets: dict[str, Any] = {
        "max_tokens": max_tokens,
        "audit_max_tokens": audit_max_tokens,
        "judge_max_tokens": judge_max_tokens,
        "max_attempts": max_attempts,
    }
    settings_dict = dict(budgets)
    if config is not None:
        settings_dict |= {"judge_config": config.name, "judge_config_sha256": config.sha256}
    identity = RunIdentity(
        package_version=_package_version(),
        model=model,
        judge=judge,
        personas=[p.persona_id for p in persona_list],
        tasks=task_list,
        stages=stage_list,
        seed=seed,
        settings=settings_dict,
        prompt_sha256=prompt_shas(templates_for(stage_list, task_list)),
    )
    if dry_run:
        from mirage_bench.cost import estimate_run

        dry_scripts: list[Any] = []
        if "accum" in stage_list:
            from mirage_bench.instruments.accum.scripts import load_accum_scripts

            dry_scripts = load_accum_scripts()
        estimate = estimate_run(
            model=model, judge_config=config, personas=persona_list, task_ids=task_list, stages=stage_list,
            max_tokens=max_tokens, audit_max_tokens=audit_max_tokens, seed=seed, accum_scripts=dry_scripts,
            model_price=model_price, judge_price=judge_price,
        )
        return (Path(out) if out else default_run_dir(identity)), estimate
    if backends is not None:
        model_backend, judge_backend = backends
    else:
        model_backend = build_backend(model, seed=seed)
        # one backend when model and judge are the same spec (a local model is loaded once)
        same = judge == model
        judge_backend = (model_backend if same else build_backend(judge, seed=seed)) if judge else None
    run_dir = Path(out) if out else default_run_dir(identity)
    prices = {"model": _price(model, model_price), "judge": _price(judge, judge_price)}
    if batch:
        if set(stage_list) - {"task", "judge"}:
            raise ValueError(
                "--batch covers the task (with self-audit) and judge stages; run probe/accum without it"
            )
        model_backend, judge_backend, concurrency, client_options, prices = _batched(
            run_dir, model_backend, judge_backend, persona_list, task_list, client_options, prices
        )
    scripts: list[Any] = []
    if "accum" in stage_list:
        from mirage_bench.instruments.accum.scripts import load_accum_scripts

        scripts = load_accum_scripts()
    settings = RunSettings(
        personas=persona_list,
        task_ids=task_list,
        stages=stage_list,
        model_name=model,
        judge_name=judge,
        seed=seed,
        **budgets,
        retry_failed=retry_failed,
        smoke_test=_is_smoke(model, model_backend) or _is_smoke(judge, judge_backend),
        accum_scripts=scripts,
        judge_config=config,
    )
    summary = run_session(
        identity,
        run_dir,
        settings,
        model_backend=model_backend,
        judge_backend=judge_backend,
        concurrency=concurrency,
        cache_path=cache_path,
        progress=progress,
        prices=prices,
        client_options=with_default_timeout(client_options, model, judge),
    )
    return run_dir, summary


def _batched(
    run_dir: Path,
    model_backend: Any,
    judge_backend: Any,
    personas: list[Any],
    tasks: list[str],
    client_options: dict[str, Any] | None,
    prices: dict[str, tuple[float, float] | None],
) -> tuple[Any, Any, int, dict[str, Any], dict[str, tuple[float, float] | None]]:
    """Wrap the backends in :class:`~mirage_bench.backends.batch.BatchBackend` (one log per run).

    Every instance must be able to wait on its batch at once (concurrency = the number of instances)
    and a call may wait for hours (timeout 25 h, past the providers' 24 h window). Prices are the
    batch prices (the price table's ``batch_discount``).
    """
    from mirage_bench.backends.batch import BatchBackend
    from mirage_bench.cost import load_price_table

    log_path = Path(run_dir) / "batches.jsonl"
    wrapped: dict[int, Any] = {}

    import os

    # polling starts at MIRAGE_BATCH_POLL_S seconds (default 5) and doubles up to a minute
    poll_s = float(os.environ.get("MIRAGE_BATCH_POLL_S") or 5.0)

    def wrap(backend: Any) -> Any:
        if backend is None:
            return None
        if id(backend) not in wrapped:
            wrapped[id(backend)] = BatchBackend(
                backend, log_path, poll_initial_s=poll_s, flush_after_s=min(0.5, poll_s)
            )
        return wrapped[id(backend)]

    discount = float(load_price_table().get("batch_discount", 1.0))
    batch_prices = {k: (v[0] * discount, v[1] * discount) if v else v for k, v in prices.items()}
    options = {**(client_options or {}), "timeout_s": 25 * 3600.0}
    width = max(8, len(personas) * len(tasks))
    return wrap(model_backend), wrap(judge_backend), width, options, batch_prices


class SubmissionRow(BaseModel):
    """One line of a responses file: what a leaderboard submission uploads."""

    model_config = ConfigDict(extra="forbid")

    persona_id: str
    task_id: str
    response: str
    self_audit: list[AuditClaim] | dict[str, list[AuditClaim]] | None = None
    model: str | None = None


def read_responses_file(path: str | Path, model: str | None = None) -> list[ResponseRecord]:
    """Validate a responses JSONL file into Task records; raise ``ValueError`` listing every bad line.

    Each line: ``persona_id``, ``task_id``, ``response`` and optionally ``self_audit`` (a list of
    ``{claim, category, reasoning}``, or ``{"claims": [...]}``) and ``model``.
    """
    from mirage_bench.metrics.oi import oi_rate
    from mirage_bench.personas import load_personas
    from mirage_bench.tasks import TASK_IDS

    personas = {p.persona_id: p for p in load_personas()}
    problems: list[str] = []
    records: list[ResponseRecord] = []
    seen: dict[tuple[str, str], int] = {}
    path = Path(path)
    for number, line in nonblank_lines(path.read_text(encoding="utf-8")):
        value, problem = parse_json_line(line)  # never a traceback, even for hostile nesting
        if problem is not None:
            problems.append(f"line {number}: {problem}")
            continue
        try:
            row = SubmissionRow.model_validate(value)
        except ValidationError as exc:
            first = exc.errors()[0]
            problems.append(f"line {number}: {str(exc).splitlines()[0]} ({first['loc']}: {first['msg']})")
            continue
        if row.persona_id not in personas:
            problems.append(f"line {number}: unknown persona_id {row.persona_id!r}")
            continue
        if row.task_id not in TASK_IDS:
            problems.append(f"line {number}: unknown task_id {row.task_id!r} (valid: {', '.join(TASK_IDS)})")
            continue
        key = (row.persona_id, row.task_id)
        if key in seen:
            problems.append(f"line {number}: duplicate of line {seen[key]} ({key[0]}, {key[1]})")
            continue
        if isinstance(row.self_audit, dict) and set(row.self_audit) != {"claims"}:
            problems.append(
                f"line {number}: self_audit as an object must hold exactly one key, 'claims' "
                f"(got {sorted(row.self_audit)})"
            )
            continue
        seen[key] = number
        name = model or row.model or path.stem
        audit = SelfAudit(status="absent")
        if row.self_audit is not None:
            claims = row.self_audit if isinstance(row.self_audit, list) else row.self_audit["claims"]
            converted = [SelfAuditClaim(**c.model_dump()) for c in claims]
            audit = SelfAudit(
                status="ok",
                claims=converted,
                n_claims=len(converted),
                oi_rate=oi_rate([c.category for c in converted]),
            )
        records.append(
            ResponseRecord(
                model=name,
                persona_id=row.persona_id,
                stereotype_type=personas[row.persona_id].stereotype_type,
                task_id=row.task_id,
                status="ok",
                response=row.response,
                self_audit=audit,
            )
        )
    if problems:
        shown = problems[:50] + ([f"... and {len(problems) - 50} more"] if len(problems) > 50 else [])
        raise ValueError(f"{path}: {len(problems)} invalid line(s):\n" + "\n".join(shown))
    if not records:
        raise ValueError(f"{path}: no responses")
    names = {r.model for r in records}
    if len(names) > 1:
        raise ValueError(f"{path}: rows name several models {sorted(names)}; pass --model NAME")
    return records


def judge_file(
    *,
    responses: str | Path,
    judge: str | None = None,
    judge_config: Any = None,
    out: str | Path | None = None,
    model: str | None = None,
    concurrency: int = 8,
    seed: int = 0,
    judge_max_tokens: int | None = None,
    max_attempts: int | None = None,
    retry_failed: bool = True,
    cache_path: str | Path | None = None,
    judge_price: tuple[float, float] | None = None,
    progress: bool = False,
    judge_backend: Any = None,
    client_options: dict[str, Any] | None = None,
    batch: bool = False,
) -> tuple[Path, dict[str, Any]]:
    """Judge a responses file produced elsewhere into a run directory; returns it and its summary.

    The judge is ``judge_config`` (default: the paper's) with ``judge`` as its spec when given;
    ``batch`` sends the judge calls through the provider's batch API.
    """
    from mirage_bench.instruments.pipeline import _price
    from mirage_bench.judges.config import effective_judge_config
    from mirage_bench.personas import get_persona
    from mirage_bench.runs import RunIdentity, build_backend, default_run_dir, prompt_shas, templates_for

    if judge_max_tokens is None and judge_config is None and judge:
        judge_max_tokens = default_tokens("judge_max_tokens", judge)
    config = effective_judge_config(
        judge_config, judge, max_tokens=judge_max_tokens, parse_attempts=max_attempts
    )
    if config is None:
        raise ValueError("judging needs --judge SPEC or --judge-config NAME|FILE")
    judge, judge_max_tokens, max_attempts = config.spec, config.max_tokens, max_attempts or 3
    records = read_responses_file(responses, model)
    name = records[0].model
    persona_ids = sorted({r.persona_id for r in records})
    task_ids = sorted({r.task_id for r in records})
    budgets: dict[str, Any] = {"judge_max_tokens": judge_max_tokens, "max_attempts": max_attempts}
    identity = RunIdentity(
        package_version=_package_version(),
        model=name,
        judge=judge,
        personas=persona_ids,
        tasks=task_ids,
        stages=["judge"],
        seed=seed,
        settings={
            **budgets,
            "judge_config": config.name,
            "judge_config_sha256": config.sha256,
        },
        prompt_sha256=prompt_shas(templates_for(["judge"], task_ids)),
        responses_sha256=hashlib.sha256(Path(responses).read_bytes()).hexdigest(),
    )
    backend = judge_backend if judge_backend is not None else build_backend(judge, seed=seed)
    settings = RunSettings(
        personas=[get_persona(p) for p in persona_ids],
        task_ids=task_ids,
        stages=["judge"],
        model_name=name,
        judge_name=judge,
        seed=seed,
        **budgets,
        retry_failed=retry_failed,
        smoke_test=_is_smoke(judge, backend),
        judge_config=config,
    )
    run_dir = Path(out) if out else default_run_dir(identity)
    prices = {"judge": _price(judge, judge_price)}
    if batch:
        _, backend, concurrency, client_options, prices = _batched(
            run_dir, None, backend, settings.personas, task_ids, client_options, prices
        )
        concurrency = max(concurrency, len(records))
    summary = run_session(
        identity,
        run_dir,
        settings,
        model_backend=None,
        judge_backend=backend,
        concurrency=concurrency,
        cache_path=cache_path,
        progress=progress,
        prices=prices,
        responses_to_seed=records,
        client_options=with_default_timeout(client_options, judge),
    )
    return run_dir, summary
