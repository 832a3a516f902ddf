"""Data behind the Space's Browse tab: personas, and judged responses read from run directories.

A *judged run directory* is anything holding the engine's ``judgments.jsonl`` (and, for the
response text, ``responses.jsonl``): a finished submission's result folder in the store or a run
made with ``mirage-bench run``. Nothing here calls a model.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from mirage_bench.fileio import read_jsonl_lenient
from mirage_bench.types import Label

#: Colour of each label in the Browse tab (G, R, S, F), matching the paper's Figure 2 ordering.
LABEL_COLOURS: dict[str, str] = {
    Label.GROUNDED.value: "#c8e6c9",
    Label.INFERRED_REASONABLE.value: "#fff3b0",
    Label.INFERRED_STEREOTYPE.value: "#ffd0a6",
    Label.FABRICATED.value: "#ffb3b3",
}
#: Short human names of the labels.
LABEL_NAMES: dict[str, str] = {
    Label.GROUNDED.value: "Grounded",
    Label.INFERRED_REASONABLE.value: "Reasonable",
    Label.INFERRED_STEREOTYPE.value: "Stereotype",
    Label.FABRICATED.value: "Fabricated",
}


def judged_run_dirs(store_root: Path | None, run_dirs: Iterable[Path] = ()) -> list[Path]:
    """Every folder with a ``judgments.jsonl``: the store's results, then the given run dirs."""
    found: list[Path] = []
    if store_root is not None:
        found.extend(sorted(p.parent for p in (Path(store_root) / "results").glob("*/judgments.jsonl")))
    found.extend(Path(d) for d in run_dirs if (Path(d) / "judgments.jsonl").exists())
    return found


def judged_responses(
    dirs: Sequence[Path],
    task_id: str,
    *,
    persona_id: str | None = None,
    models: Sequence[str] = (),
    labels: Sequence[str] = (),
) -> list[dict[str, Any]]:
    """Judged responses to ``task_id`` (optionally of one persona / some models), with their claims.

    Each item: ``model``, ``judge``, ``persona_id``, ``response``, ``claims`` (``claim``, ``label``,
    ``reasoning``), ``smoke_test`` and ``injection_signals`` (the judge stage's injection signals
    when it flagged the response, else empty) — claims filtered to ``labels`` when given (items left
    without claims are
    dropped), later records superseding earlier ones with the same key.
    """
    out: list[dict[str, Any]] = []
    for run_dir in dirs:
        # lenient: the worker appends to these files while the Space reads them (a half-written last
        # line is judged again by the worker; this read-only view just shows it later)
        rows = read_jsonl_lenient(run_dir / "responses.jsonl", objects_only=True)
        responses = {(r["persona_id"], r["task_id"]): r for r in rows}
        latest: dict[tuple[str, str], dict[str, Any]] = {}
        for rec in read_jsonl_lenient(run_dir / "judgments.jsonl", objects_only=True):
            latest[(rec["persona_id"], rec["task_id"])] = rec
        for (pid, tid), rec in sorted(latest.items()):
            if tid != task_id or (persona_id and pid != persona_id) or rec.get("status") != "ok":
                continue
            if models and rec.get("model") not in models:
                continue
            claims = [c for c in rec.get("claims", []) if not labels or c.get("label") in labels]
            if labels and not claims:
                continue
            out.append(
                {
                    "model": rec.get("model", ""),
                    "judge": rec.get("judge", ""),
                    "persona_id": pid,
                    "response": (responses.get((pid, tid)) or {}).get("response") or "",
                    "claims": claims,
                    "smoke_test": bool(rec.get("smoke_test", False)),
                    "injection_signals": [str(x) for x in rec.get("injection_signals") or []]
                    if rec.get("injection_flag")
                    else [],
                }
            )
    return out


def models_in(dirs: Sequence[Path]) -> list[str]:
    """Model names found in the judged run directories."""
    names = set()
    for run_dir in dirs:
        for rec in read_jsonl_lenient(run_dir / "judgments.jsonl", objects_only=True):
            names.add(str(rec.get("model", "")))
    return sorted(n for n in names if n)


def highlight_response(response: str, claims: Sequence[dict[str, Any]]) -> str:
    """HTML of a response with each claim that occurs verbatim marked in its label colour.

    >>> highlight_response("I like <tea>.", [{"claim": "like <tea>", "label": "GROUNDED"}])
    'I <mark style="background:#c8e6c9" title="Grounded">like &lt;tea&gt;</mark>.'
    """
    spans: list[tuple[int, int, str]] = []
    lowered = response.lower()
    for claim in claims:
        text = str(claim.get("claim", "")).strip()
        if len(text) < 4:
            continue
        start = lowered.find(text.lower())
        if start >= 0 and not any(s < start + len(text) and start < e for s, e, _ in spans):
            spans.append((start, start + len(text), str(claim.get("label", ""))))
    out, pos = [], 0
    for start, end, label in sorted(spans):
        out.append(html.escape(response[pos:start], quote=False))
        colour, name = LABEL_COLOURS.get(label, "#eee"), LABEL_NAMES.get(label, label)
        out.append(
            f'<mark style="background:{colour}" title="{name}">'
            f"{html.escape(response[start:end], quote=False)}</mark>"
        )
        pos = end
    out.append(html.escape(response[pos:], quote=False))
    return "".join(out)


#: The Browse tab when no judged run exists yet: what to do, with the exact commands.
NO_RUNS_HTML = (
    "<p><em>No judged responses yet.</em> They appear here when a submission on the <b>Submit</b> tab "
    "has been judged, or when the Space is started with a judged engine run:</p>"
    "<pre>mirage-bench run --model MODEL_SPEC --judge JUDGE_SPEC --out runs/my-run\n"
    "mirage-bench space --runs runs/my-run</pre>"
    "<p>(for an offline try: <code>--model scripted --judge scripted</code>, the engine's simulation).</p>"
)


def render_judged(items: Sequence[dict[str, Any]], *, show_reasoning: bool = False, limit: int = 30) -> str:
    """HTML cards for judged responses: highlighted text, then every claim as a coloured chip.

    The judge's reasoning sits in a collapsed ``<details>`` (or is shown open with ``show_reasoning``).
    """
    if not items:
        return (
            "<p><em>No judged responses match. Judged responses appear here once a submission has "
            "been judged or a run directory is passed with <code>--runs</code>.</em></p>"
        )
    parts = []
    for item in items[:limit]:
        chips = []
        for c in item["claims"]:
            label = str(c.get("label", ""))
            reasoning = html.escape(str(c.get("reasoning", "")))
            chips.append(
                f'<li><span class="mb-chip" style="background:{LABEL_COLOURS.get(label, "#eee")}">'
                f"{LABEL_NAMES.get(label, html.escape(label))}</span> {html.escape(str(c.get('claim', '')))}"
                f"<details{' open' if show_reasoning else ''}><summary>judge's reasoning</summary>"
                f"{reasoning or '<em>none given</em>'}</details></li>"
            )
        smoke = (
            ' <span class="mb-chip" style="background:#ddd">smoke test</span>' if item["smoke_test"] else ""
        )
        signals = item.get("injection_signals") or []
        if signals:
            kinds = ", ".join(html.escape(x) for x in signals)
            smoke += (
                f' <span class="mb-chip mb-injection" style="background:#f4c7ff" '
                f'title="the judge stage flagged this response as trying to instruct the judge">'
                f"⚠ injection: {kinds}</span>"
            )
        parts.append(
            f'<div class="mb-card"><h4>{html.escape(item["model"])} · '
            f'persona {html.escape(item["persona_id"])}'
            f" · judge {html.escape(item['judge'])}{smoke}</h4>"
            f"<p>{highlight_response(item['response'], item['claims'])}</p><ul>{''.join(chips)}</ul></div>"
        )
    more = (
        f"<p><em>{len(items) - limit} more not shown; narrow the filters.</em></p>"
        if len(items) > limit
        else ""
    )
    return "".join(parts) + more


def persona_markdown(persona: Any) -> str:
    """Markdown for one persona: group, revealed facts (numbered) and the ground-truth profile."""
    facts = "\n".join(f"{i}. {f}" for i, f in enumerate(persona.revealed_facts, start=1))
    truth = "\n".join(
        f"| {k.replace('_', ' ')} | {', '.join(map(str, v)) if isinstance(v, list) else v} |"
        for k, v in persona.ground_truth.items()
    )
    group = re.sub("_", "-", persona.stereotype_type)
    return (
        f"### {persona.persona_id} · {group}\n\n**Revealed facts** (all the model is told)\n\n{facts}\n\n"
        f"**Ground truth** (hidden from the model; the judge uses it only for the accuracy check)\n\n"
        f"| attribute | value |\n|---|---|\n{truth}\n"
    )
