"""What a run will cost before it is spent: the dated price table, token counting and the dry run.

* :func:`load_price_table` reads ``configs/prices.yaml`` (USD per 1M tokens, with its ``as_of`` date
  and sources); :func:`lookup_price` finds a spec's price (free for local kinds, ``None`` when the
  table has none).
* :func:`count_tokens` counts with the provider's tokenizer where one is installed (``tiktoken`` for
  ``openai:`` models, when its encoding is available offline), else estimates ``ceil(chars / 4)``
  and says so.
* :func:`estimate_run` renders every prompt a ``mirage-bench run`` would send and sums, per stage,
  the calls, the input tokens and the output-token caps; nothing is sent and no backend is built.

Prompts that contain a model output not yet produced (the self-audit and judge prompts contain the
response; Accum rounds after the first contain the previous memory; the Probe's judge prompt the
Probe answer) are counted as the rendered prompt without that output (``input_tokens``) and with
it at its cap (``input_tokens_max``). Parse retries are not counted: each would repeat its call.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from mirage_bench.structs import field_values
from mirage_bench.types import Message

#: Spec kinds that run on this machine: no per-token price.
FREE_KINDS = ("scripted", "local", "transformers", "llamacpp", "vllm")
_SNAPSHOT = re.compile(r"-(\d{4}-\d{2}-\d{2}|\d{8})$")


def prices_path() -> Path:
    """``configs/prices.yaml``."""
    from mirage_bench.paths import resource_dir

    return resource_dir("configs") / "prices.yaml"


@lru_cache(maxsize=4)
def _load(path: str, mtime_ns: int) -> dict[str, Any]:
    data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not isinstance(data.get("models"), dict) or not data.get("as_of"):
        raise ValueError(f"{path}: a price table needs 'as_of' and a 'models' mapping")
    for key, value in data["models"].items():
        if not (isinstance(value, dict) and {"input", "output"} <= set(value)):
            raise ValueError(f"{path}: price of {key!r} needs 'input' and 'output' (USD per 1M tokens)")
    return data


def load_price_table(path: str | Path | None = None) -> dict[str, Any]:
    """The price table (``as_of``, ``sources``, ``batch_discount``, ``models``)."""
    p = Path(path) if path else prices_path()
    return _load(str(p), p.stat().st_mtime_ns)


def lookup_price(spec: str | None, table: dict[str, Any] | None = None) -> tuple[float, float] | None:
    """``(input, output)`` USD per 1M tokens of ``spec``; ``(0, 0)`` for local kinds, ``None`` if unknown.

    >>> lookup_price("openai:gpt-4o-mini-2024-07-18")
    (0.15, 0.6)
    >>> lookup_price("scripted"), lookup_price("anthropic:claude-unknown-9")
    ((0.0, 0.0), None)
    """
    if not spec:
        return None
    kind = spec.split(":", 1)[0]
    if kind in FREE_KINDS:
        return (0.0, 0.0)
    models = (table or load_price_table())["models"]
    name = spec.split("@", 1)[0].strip()  # drop an openai base URL
    for candidate in (name, _SNAPSHOT.sub("", name)):
        if candidate in models:
            price = models[candidate]
            return (float(price["input"]), float(price["output"]))
    return None


@lru_cache(maxsize=16)
def _tiktoken_encoding(model: str) -> Any:
    try:
        import tiktoken
    except ImportError:
        return None
    try:
        return tiktoken.encoding_for_model(model)
    except Exception:  # noqa: BLE001 - unknown model or encoding not available offline
        try:
            return tiktoken.get_encoding("o200k_base")
        except Exception:  # noqa: BLE001 - the encoding file cannot be fetched offline
            return None


def tokenizer_for(spec: str | None) -> tuple[Any, str]:
    """``(encode function or None, description)`` for counting a spec's tokens."""
    if spec and spec.startswith("openai:"):
        model = spec.split(":", 1)[1].split("@", 1)[0]
        encoding = _tiktoken_encoding(model)
        if encoding is not None:
            return encoding.encode, f"tiktoken {encoding.name}"
    return None, "estimate: ceil(characters / 4), no tokenizer of this provider installed"


def count_tokens(text: str, spec: str | None = None) -> int:
    """Tokens of ``text`` for ``spec`` (the provider's tokenizer when installed, else an estimate).

    >>> count_tokens("abcdefgh", "anthropic:claude-opus-4")
    2
    """
    encode, _ = tokenizer_for(spec)
    if encode is not None:
        return len(encode(text))
    return math.ceil(len(text) / 4)


def messages_tokens(messages: list[Message], spec: str | None) -> int:
    """Tokens of a chat request's messages (content only; per-message framing is not counted)."""
    return sum(count_tokens(m.content, spec) for m in messages)


@dataclass
class StageEstimate:
    """The estimate of one stage: calls, input tokens (without / with unknown outputs at their cap), caps."""

    stage: str
    role: str
    spec: str | None
    calls: int = 0
    input_tokens: int = 0
    input_tokens_max: int = 0
    output_tokens_max: int = 0
    tokenizer: str = ""
    price: tuple[float, float] | None = None
    notes: list[str] = field(default_factory=list)

    def add(self, prompt_tokens: int, unknown_max: int, output_cap: int) -> None:
        """One call: its rendered prompt, the cap of model output it will contain, its output cap."""
        self.calls += 1
        self.input_tokens += prompt_tokens
        self.input_tokens_max += prompt_tokens + unknown_max
        self.output_tokens_max += output_cap

    def cost_max_usd(self, discount: float = 1.0) -> float | None:
        """Upper bound of the cost (every unknown output and every answer at its cap)."""
        if self.price is None:
            return None
        return (
            discount * (self.input_tokens_max * self.price[0] + self.output_tokens_max * self.price[1]) / 1e6
        )

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            **field_values(self, exclude=("price", "notes")),
            "price_per_1m": list(self.price) if self.price else None,
            "cost_max_usd": self.cost_max_usd(),
            "notes": self.notes,
        }


def estimate_run(
    *,
    model: str,
    judge_config: Any,
    personas: list[Any],
    task_ids: list[str],
    stages: list[str],
    max_tokens: int,
    audit_max_tokens: int,
    seed: int = 0,
    accum_scripts: list[Any] | None = None,
    model_price: tuple[float, float] | None = None,
    judge_price: tuple[float, float] | None = None,
) -> dict[str, Any]:
    """Render every prompt of a run and estimate it per stage; sends nothing, builds no backend."""
    from mirage_bench.instruments.accum import ACCUM_CONDITIONS, initial_memory, memory_dict
    from mirage_bench.instruments.common import render
    from mirage_bench.instruments.judge import build_judge_messages
    from mirage_bench.instruments.probe import probe_message
    from mirage_bench.instruments.task import self_audit_message, task_messages
    from mirage_bench.tasks import get_task

    table = load_price_table()
    judge = judge_config.spec if judge_config is not None else None
    prices = {
        "model": model_price or lookup_price(model, table),
        "judge": judge_price or lookup_price(judge, table),
    }
    specs = {"model": model, "judge": judge}

    def stage(name: str, role: str) -> StageEstimate:
        _, how = tokenizer_for(specs[role])
        return StageEstimate(name, role, specs[role], tokenizer=how, price=prices[role])

    out: dict[str, StageEstimate] = {}
    judge_cap = judge_config.max_tokens if judge_config is not None else 4096
    if "task" in stages:
        task, audit = stage("task", "model"), stage("self_audit", "model")
        audit.notes.append(
            "the prompt holds the response twice (assistant turn + audit text): max adds 2x its cap"
        )
        for persona in personas:
            for task_id in task_ids:
                t = get_task(task_id)
                messages = task_messages(persona, t)
                task.add(messages_tokens(messages, model), 0, max_tokens)
                audit_messages = [
                    *messages,
                    Message(role="assistant", content=""),
                    self_audit_message(persona, t, ""),
                ]
                audit.add(messages_tokens(audit_messages, model), 2 * max_tokens, audit_max_tokens)
        out["task"], out["self_audit"] = task, audit
    if "judge" in stages:
        jst = stage("judge", "judge")
        jst.notes.append("the prompt holds the response: max adds its cap")
        for persona in personas:
            for task_id in task_ids:
                messages = build_judge_messages(
                    persona, get_task(task_id).prompt, "", seed=seed, config=judge_config
                )
                jst.add(messages_tokens(messages, judge), max_tokens, judge_cap)
        out["judge"] = jst
    if "probe" in stages:
        pst = stage("probe", "model")
        pj = stage("probe_judge", "judge") if judge_config is not None else None
        for persona in personas:
            message = probe_message(persona)
            pst.add(messages_tokens([message], model), 0, audit_max_tokens)
            if pj is not None:
                jm = build_judge_messages(persona, message.content, "", seed=seed, config=judge_config)
                pj.add(messages_tokens(jm, judge), audit_max_tokens, judge_cap)
        out["probe"] = pst
        if pj is not None:
            pj.notes.append("the prompt holds the Probe answer: max adds its cap")
            out["probe_judge"] = pj
    if "accum" in stages:
        ast = stage("accum", "model")
        ast.notes.append("rounds after the first hold the previous memory: max adds its cap")
        scripts = {s.persona_id: s for s in (accum_scripts or [])}
        for condition in ACCUM_CONDITIONS:
            for persona in personas:
                script = scripts.get(persona.persona_id)
                if script is None:
                    continue
                memory = json.dumps(memory_dict(initial_memory(persona)), ensure_ascii=False)
                for number, utterance in enumerate(script.utterances, start=1):
                    prompt = render(condition, memory=memory, round=str(number), utterance=utterance).text
                    ast.add(
                        count_tokens(prompt.strip(), model),
                        0 if number == 1 else audit_max_tokens,
                        audit_max_tokens,
                    )
        out["accum"] = ast
        if judge_config is not None:  # the retraction judge: one call per planted contradiction (at most)
            from mirage_bench.instruments.accum.retraction import RETRACTION_TEMPLATE

            rst = stage("accum_retraction_judge", "judge")
            rst.notes.append(
                "at most one call per planted contradiction; the prompt holds three memories: max adds 3x "
                "the Accum output cap"
            )
            for _condition in ACCUM_CONDITIONS:
                for persona in personas:
                    script = scripts.get(persona.persona_id)
                    for planted in script.contradictions if script is not None else ():
                        prompt = render(
                            RETRACTION_TEMPLATE, round=str(planted.round), contradicts=planted.contradicts,
                            utterance=script.utterance(planted.round), memory_before="", memory_after="",
                            next_round=str(planted.round + 1), memory_next="",
                        ).text
                        rst.add(count_tokens(prompt.strip(), judge), 3 * audit_max_tokens, judge_cap)
            if rst.calls:
                out["accum_retraction_judge"] = rst
    rows = [s.as_dict() for s in out.values()]
    known = [r["cost_max_usd"] for r in rows]
    discount = float(table.get("batch_discount", 1.0))
    return {
        "stages": rows,
        "calls": sum(r["calls"] for r in rows),
        "cost_max_usd": None if any(c is None for c in known) else round(sum(known), 6),
        "cost_max_batch_usd": None if any(c is None for c in known) else round(discount * sum(known), 6),
        "prices_as_of": str(table["as_of"]),
        "price_sources": table.get("sources", {}),
        "judge_config": judge_config.name if judge_config is not None else None,
        "notes": [
            "nothing was sent: prompts rendered locally",
            "input_tokens: rendered prompts without model outputs not yet produced; "
            "input_tokens_max: with each such output at its cap",
            "output_tokens_max: every answer at its cap; parse retries are not counted",
        ],
    }


def render_estimate(estimate: dict[str, Any]) -> str:
    """A plain-text table of :func:`estimate_run`."""

    def usd(value: float | None) -> str:
        return "no price" if value is None else f"${value:,.4f}"

    lines = [
        "DRY RUN - nothing sent. Per stage (input tokens: known prompt / with unknown outputs at their cap):",
        f"{'stage':<12} {'role':<6} {'calls':>6} {'input':>11} {'input max':>11} {'output cap':>11} "
        f"{'cost max':>12}  spec",
    ]
    for r in estimate["stages"]:
        lines.append(
            f"{r['stage']:<12} {r['role']:<6} {r['calls']:>6} {r['input_tokens']:>11,} "
            f"{r['input_tokens_max']:>11,} {r['output_tokens_max']:>11,} "
            f"{usd(r['cost_max_usd']):>12}  {r['spec']}"
        )
    priced = [r["cost_max_usd"] for r in estimate["stages"] if r["cost_max_usd"] is not None]
    if estimate["cost_max_usd"] is None:
        lines.append(
            f"total: {estimate['calls']} calls; cost unknown (a stage has no price); "
            f"the priced stages cost at most ${sum(priced):,.4f}"
        )
    else:
        lines.append(
            f"total: {estimate['calls']} calls, cost at most {usd(estimate['cost_max_usd'])} "
            f"({usd(estimate['cost_max_batch_usd'])} at batch prices)"
        )
    tokenizers = sorted({f"{r['spec']}: {r['tokenizer']}" for r in estimate["stages"]})
    lines.append("tokens counted with: " + "; ".join(tokenizers))
    missing = sorted({r["spec"] for r in estimate["stages"] if r["price_per_1m"] is None})
    if missing:
        lines.append(
            f"no price in the table for {', '.join(missing)}: pass --model-price / --judge-price IN,OUT"
        )
    lines.append(f"prices: configs/prices.yaml as of {estimate['prices_as_of']} (USD per 1M tokens)")
    lines += [f"note: {n}" for n in estimate["notes"]]
    for r in estimate["stages"]:
        lines += [f"note ({r['stage']}): {n}" for n in r["notes"]]
    return "\n".join(lines)
