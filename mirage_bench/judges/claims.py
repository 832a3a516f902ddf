"""Fixed-claim judging: a judge labels given claims, without extracting them (``judge-claims``).

The judge sees exactly what the H.1 annotator sees: the revealed facts, the task context and the
claim (no ground truth, no response, no other judge's label). The prompts are the judge config's
``claim_prompts`` (this package's wording, ``prompts/judge_claim_*.txt``). Two judges labelling the
same claims file can then be compared with ``mirage-bench agreement``, and so can a judge and the
human labels of the Annotate tab.

Input (``--claims FILE``): JSONL, one claim per line, with ``claim_id`` (or ``item_id``, the H.1
sample's id), ``claim``, and either ``revealed_facts`` + ``task_context`` or ``persona_id`` +
``task_id`` (looked up in the bundled personas and tasks); other fields (e.g. a sample's
``judge_label``) are ignored and never shown to the judge. A run's ``claims.parquet`` is accepted
too (``claim_id`` = the H.1 item id of each row).

Output: JSONL of :class:`ClaimLabel`, one per claim, appended as each completes (a killed run
resumes: claims already labelled ``ok`` are skipped). A claim the judge's output cannot be parsed
for is written with ``status: parse_failure`` and ``label: null``: counted, never scored.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError, model_validator

from mirage_bench.backends.base import GenerateParams
from mirage_bench.fileio import nonblank_lines, parse_json_line
from mirage_bench.instruments.parsing import (
    SCHEMA_MAX_REASONING_CHARS,
    Parsed,
    ParseError,
    load_json_lenient,
    normalise_enum,
)
from mirage_bench.types import Label, Message

if TYPE_CHECKING:  # pragma: no cover
    from mirage_bench.client import Client
    from mirage_bench.judges.config import JudgeConfig

_LABEL_VALUES = {label.value for label in Label}

#: JSON schema of one claim label (structured output where the backend supports it; bounded, so a
#: constrained local decoder terminates).
CLAIM_LABEL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "label": {"type": "string", "enum": [label.value for label in Label]},
        "reasoning": {"type": "string", "maxLength": SCHEMA_MAX_REASONING_CHARS},
    },
    "required": ["label", "reasoning"],
    "additionalProperties": False,
}


class ClaimInput(BaseModel):
    """One claim to label, with exactly the H.1 annotator's context."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    claim_id: str = Field(min_length=1, validation_alias=AliasChoices("claim_id", "item_id"))
    claim: str = Field(min_length=1)
    revealed_facts: tuple[str, ...] = ()
    task_context: str = ""
    persona_id: str | None = None
    task_id: str | None = None

    @model_validator(mode="after")
    def _context(self) -> ClaimInput:
        if not self.revealed_facts and not self.persona_id:
            raise ValueError("needs revealed_facts or persona_id")
        if not self.task_context and not self.task_id:
            raise ValueError("needs task_context or task_id")
        return self

    def resolved(self) -> ClaimInput:
        """Fill ``revealed_facts`` / ``task_context`` from ``persona_id`` / ``task_id`` when absent."""
        update: dict[str, Any] = {}
        if not self.revealed_facts:
            from mirage_bench.personas import get_persona

            update["revealed_facts"] = tuple(get_persona(str(self.persona_id)).revealed_facts)
        if not self.task_context:
            from mirage_bench.tasks import get_task

            update["task_context"] = get_task(str(self.task_id)).prompt
        return self.model_copy(update=update) if update else self


class ClaimLabel(BaseModel):
    """One judge label of one claim: the line format of label files (``agreement`` reads ``label``)."""

    model_config = ConfigDict(extra="forbid")

    claim_id: str
    #: ``None`` unless ``status`` is ``ok``.
    label: Label | None = None
    status: Literal["ok", "parse_failure", "call_failure"]
    reasoning: str = ""
    error: str | None = None
    attempts: int = 0
    judge_config: str
    judge_config_sha256: str
    judge_spec: str
    #: The model snapshot that answered: as the provider reported it, else the backend's snapshot.
    judge_snapshot: str | None = None
    labelled_at: str


def parse_claim_label(text: str) -> Parsed[tuple[Label, str]]:
    """Parse ``{"label": ..., "reasoning": ...}`` (``category`` is read as ``label``).

    >>> parse_claim_label('{"label": "fabricated", "reasoning": "no fact says so"}').value
    (<Label.FABRICATED: 'FABRICATED'>, 'no fact says so')
    >>> parse_claim_label('{"label": "MAYBE"}')
    Traceback (most recent call last):
    ...
    mirage_bench.instruments.parsing.ParseError: label 'MAYBE' is not one of FABRICATED, GROUNDED, \
INFERRED_REASONABLE, INFERRED_STEREOTYPE
    """
    data, repairs = load_json_lenient(text)
    if isinstance(data, list) and len(data) == 1 and isinstance(data[0], dict):
        data, repairs = data[0], [*repairs, "single_item_list"]
    if not isinstance(data, dict):
        raise ParseError(f"expected a JSON object, got {type(data).__name__}", repairs)
    raw = data.get("label", data.get("category"))
    if raw is None:
        raise ParseError("the object has no 'label'", repairs)
    value, changed = normalise_enum(raw, _LABEL_VALUES)
    if value not in _LABEL_VALUES:
        raise ParseError(f"label {raw!r} is not one of {', '.join(sorted(_LABEL_VALUES))}", repairs)
    if changed:
        repairs.append("label_normalised")
    reasoning = data.get("reasoning", "")
    return Parsed((Label(value), reasoning if isinstance(reasoning, str) else str(reasoning)), repairs)


def build_claim_messages(item: ClaimInput, config: JudgeConfig, *, seed: int = 0) -> list[Message]:
    """The system and user messages that label one claim (the claim is fenced as data)."""
    from mirage_bench.instruments.common import format_facts, render, template
    from mirage_bench.instruments.judge import boundary_token

    item = item.resolved()
    token = boundary_token(item.claim, seed)
    fenced = f"<<<BEGIN CLAIM {token}>>>\n{item.claim}\n<<<END CLAIM {token}>>>"
    user = render(
        config.claim_prompts.user,
        revealed_facts=format_facts(item.revealed_facts),
        task=item.task_context,
        claim=fenced,
    ).text
    return [
        Message(role="system", content=template(config.claim_prompts.system).text.strip()),
        Message(role="user", content=user),
    ]


def claim_params(config: JudgeConfig, *, seed: int = 0, max_tokens: int | None = None) -> GenerateParams:
    """Generation parameters of a claim label under ``config``."""
    schema = CLAIM_LABEL_SCHEMA if config.structured_output == "json_schema" else None
    return GenerateParams(
        temperature=config.temperature,
        max_tokens=max_tokens or min(config.max_tokens, 1024),
        seed=seed,
        json_schema=schema,
    )


async def label_claim(client: Client, item: ClaimInput, config: JudgeConfig, *, seed: int = 0) -> ClaimLabel:
    """Label one claim; never raises for a backend or parse error (the status says what happened)."""
    from mirage_bench.instruments.common import call_and_parse, template

    messages = build_claim_messages(item, config, seed=seed)
    shas = tuple(template(n).sha256 for n in (config.claim_prompts.system, config.claim_prompts.user))
    outcome = await call_and_parse(
        client,
        messages,
        claim_params(config, seed=seed),
        shas,
        parse_claim_label,
        max_attempts=config.parse_attempts,
    )
    label, reasoning = outcome.parsed.value if outcome.parsed is not None else (None, "")
    return ClaimLabel(
        claim_id=item.claim_id,
        label=label,
        status=outcome.status,
        reasoning=reasoning,
        error=outcome.error,
        attempts=outcome.attempts,
        judge_config=config.name,
        judge_config_sha256=config.sha256,
        judge_spec=config.spec,
        judge_snapshot=outcome.model or getattr(client.backend, "snapshot", None),
        labelled_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )


def read_claims_file(path: str | Path) -> list[ClaimInput]:
    """Read a claims file (JSONL or a run's ``claims.parquet``); ``ValueError`` lists every bad line."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"claims file {path} not found")
    rows: list[tuple[int, Any]] = []
    if path.suffix == ".parquet":
        import pandas as pd

        from mirage_bench.judges import annotation_records

        make_item_id = annotation_records().make_item_id

        frame = pd.read_parquet(path)
        for number, row in enumerate(frame.to_dict("records"), start=1):
            row["claim_id"] = make_item_id(
                row["model"], row["judge"], row["persona_id"], row["task_id"], int(row["claim_index"])
            )
            rows.append((number, row))
    else:
        for number, line in nonblank_lines(path.read_text(encoding="utf-8")):
            value, problem = parse_json_line(line)
            rows.append((number, value if problem is None else ValueError(problem)))
    problems: list[str] = []
    items: list[ClaimInput] = []
    seen: dict[str, int] = {}
    for number, row in rows:
        if isinstance(row, Exception):
            problems.append(f"line {number}: {row}")
            continue
        try:
            item = ClaimInput.model_validate(row).resolved()
        except ValidationError as exc:
            first = exc.errors()[0]
            problems.append(f"line {number}: {'.'.join(map(str, first['loc'])) or 'row'}: {first['msg']}")
            continue
        except (KeyError, ValueError) as exc:
            problems.append(f"line {number}: {exc}")
            continue
        if item.claim_id in seen:
            problems.append(f"line {number}: claim_id {item.claim_id!r} repeats line {seen[item.claim_id]}")
            continue
        seen[item.claim_id] = number
        items.append(item)
    if problems:
        shown = problems[:50] + ([f"... and {len(problems) - 50} more"] if len(problems) > 50 else [])
        raise ValueError(f"{path}: {len(problems)} invalid line(s):\n" + "\n".join(shown))
    if not items:
        raise ValueError(f"{path}: no claims")
    return items


def read_done(out: Path) -> dict[str, ClaimLabel]:
    """Labels already in an output file (a torn last line from a kill is ignored)."""
    done: dict[str, ClaimLabel] = {}
    if not out.exists():
        return done
    for line in out.read_text(encoding="utf-8").splitlines():
        try:
            rec = ClaimLabel.model_validate_json(line)
        except ValidationError:
            continue
        done[rec.claim_id] = rec
    return done


async def label_claims(
    items: Sequence[ClaimInput],
    client: Client,
    config: JudgeConfig,
    *,
    seed: int = 0,
    on_result: Callable[[ClaimLabel], None] | None = None,
) -> list[ClaimLabel]:
    """Label many claims concurrently (the client bounds concurrency), in input order."""

    async def one(item: ClaimInput) -> ClaimLabel:
        result = await label_claim(client, item, config, seed=seed)
        if on_result is not None:
            on_result(result)
        return result

    return list(await asyncio.gather(*(one(item) for item in items)))


def judge_claims_file(
    claims: str | Path,
    out: str | Path,
    config: JudgeConfig,
    *,
    backend: Any = None,
    concurrency: int = 8,
    seed: int = 0,
    cache_path: str | Path | None = None,
    retry_failed: bool = True,
    client_options: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Label every claim of ``claims`` into ``out`` (resumable); returns the counts by status.

    A label already in ``out`` with another config sha256 is refused (``ValueError``): one output
    file holds one judge's labels.
    """
    from mirage_bench.cache import ResponseCache
    from mirage_bench.client import Client, ClientConfig, run_closing
    from mirage_bench.runs import build_backend

    items = read_claims_file(claims)
    out = Path(out)
    done = read_done(out)
    others = {r.judge_config_sha256 for r in done.values()} - {config.sha256}
    if others:
        raise ValueError(
            f"{out} holds labels of another judge config (sha256 {sorted(others)[0][:12]}...); "
            "write to another --out"
        )
    redo = {"parse_failure", "call_failure"} if retry_failed else set()
    todo = [i for i in items if i.claim_id not in done or done[i.claim_id].status in redo]
    out.parent.mkdir(parents=True, exist_ok=True)
    cache = ResponseCache(Path(cache_path)) if cache_path else None
    client = Client(
        backend if backend is not None else build_backend(config.spec, seed=seed),
        ClientConfig(**{"concurrency": concurrency, **(client_options or {})}),
        cache,
    )
    handle = out.open("a", encoding="utf-8")

    def append(rec: ClaimLabel) -> None:
        handle.write(rec.model_dump_json() + "\n")
        handle.flush()
        done[rec.claim_id] = rec

    try:
        if todo:
            run_closing(label_claims(todo, client, config, seed=seed, on_result=append), client)
    finally:
        handle.close()
        if cache is not None:
            cache.close()
    # compact: one line per claim, in input order (a resumed file equals an uninterrupted one)
    final = [done[i.claim_id] for i in items if i.claim_id in done]
    tmp = out.with_suffix(out.suffix + ".tmp")
    tmp.write_text("".join(r.model_dump_json() + "\n" for r in final), encoding="utf-8")
    tmp.replace(out)
    counts = {"claims": len(items), "labelled_now": len(todo), "ok": 0, "parse_failure": 0, "call_failure": 0}
    for rec in final:
        counts[rec.status] += 1
    counts["tokens"] = {"input": client.stats.input_tokens, "output": client.stats.output_tokens}
    return counts
