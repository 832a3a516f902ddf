"""Measure the de-identifier on a planted-PII corpus: recall per entity kind, leaks in published rows.

The corpus is JSONL, one object per line: ``{"record": <RawPreferenceRecord>, "planted":
[{"kind": <entity kind>, "text": <identifier>}, ...]}``. A planted identifier counts as caught when
its text (case-insensitive) appears in none of the de-identified published fields of its record.
The shipped fixture is ``tests/fixtures/dataset/planted_pii_corpus.jsonl`` (a test corpus written
for this purpose, not study data).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from mirage_bench.paths import PACKAGE_DIR

from .deidentify import DeidentifiedRecord, WithholdPolicy, deidentify_records
from .detectors import ENTITY_KINDS, Recognizer
from .preferences import PreferenceFormatError, RawPreferenceRecord

__all__ = [
    "DEFAULT_CORPUS",
    "PlantedCorpus",
    "PiiEvaluation",
    "evaluate_planted",
    "load_planted_corpus",
    "markdown_table",
    "published_text",
    "screening_label",
    "shipped_corpus",
]

#: Where the planted-PII corpora written for this package's tests live in a source checkout.
FIXTURE_DIR = PACKAGE_DIR.parent / "tests" / "fixtures" / "dataset"
#: The corpus ``build-dataset`` measures the de-identifier on by default (source checkout only).
DEFAULT_CORPUS = FIXTURE_DIR / "planted_pii_corpus.jsonl"
_SHIPPED = ("planted_pii_corpus.jsonl", "planted_pii_heldout.jsonl")


@dataclass(frozen=True)
class PlantedCorpus:
    """Raw records and, per record id, the identifiers planted in it as ``(kind, text)``."""

    records: list[RawPreferenceRecord]
    planted: dict[str, list[tuple[str, str]]]


@dataclass(frozen=True)
class PiiEvaluation:
    """Recall per kind (``planted``, ``caught``, ``recall``), missed kinds, and published-row leaks."""

    per_kind: dict[str, dict[str, float]]
    missed: list[dict[str, str]]
    leaks_in_published: int
    records: int
    published: int
    withheld: int
    excluded: int
    recognizer: str

    def as_dict(self) -> dict[str, object]:
        """JSON-ready form (``missed`` lists record ids and kinds, never the identifier text)."""
        return {
            "recognizer": self.recognizer,
            "records": self.records,
            "published": self.published,
            "withheld": self.withheld,
            "excluded": self.excluded,
            "per_kind": self.per_kind,
            "missed": self.missed,
            "leaks_in_published": self.leaks_in_published,
        }


def load_planted_corpus(path: str | Path) -> PlantedCorpus:
    """Read a planted-PII corpus; raises :class:`PreferenceFormatError` on a bad line."""
    records: list[RawPreferenceRecord] = []
    planted: dict[str, list[tuple[str, str]]] = {}
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
            record = RawPreferenceRecord.model_validate(obj["record"])
            items = [(str(p["kind"]), str(p["text"])) for p in obj["planted"]]
        except (ValueError, KeyError, TypeError) as exc:
            raise PreferenceFormatError(f"{path}:{number}: {exc}") from exc
        records.append(record)
        planted[record.record_id] = items
    return PlantedCorpus(records, planted)


def shipped_corpus(path: str | Path) -> str | None:
    """The name of the package's own planted-PII fixture whose bytes ``path`` holds, else ``None``.

    Those corpora were written by the engineer who wrote the detectors (the first one was used
    while tuning them): recall on them is a regression check, not an estimate on real records.
    """
    content = Path(path).read_bytes()
    for name in _SHIPPED:
        fixture = FIXTURE_DIR / name
        if fixture.is_file() and fixture.read_bytes() == content:
            return name
    return None


def published_text(result: DeidentifiedRecord) -> str:
    """All published fields of one de-identified record, joined for searching."""
    parts: list[str] = []
    for value in result.fields.values():
        parts.extend(value if isinstance(value, list) else [value])
    return "\n".join(parts)


def evaluate_planted(
    corpus: PlantedCorpus, recognizer: Recognizer | None, *, policy: WithholdPolicy = "differing_text"
) -> PiiEvaluation:
    """De-identify the corpus and count, per kind, the planted identifiers removed from the output."""
    results = deidentify_records(corpus.records, recognizer, policy=policy)
    planted_n: Counter[str] = Counter()
    caught_n: Counter[str] = Counter()
    missed: list[dict[str, str]] = []
    leaks = 0
    for result in results:
        text = published_text(result).lower()
        for kind, identifier in corpus.planted[result.record.record_id]:
            planted_n[kind] += 1
            if identifier.lower() in text:
                missed.append({"record_id": result.record.record_id, "kind": kind})
                leaks += result.action == "publish"
            else:
                caught_n[kind] += 1
    per_kind = {
        kind: {
            "planted": planted_n[kind],
            "caught": caught_n[kind],
            "recall": caught_n[kind] / planted_n[kind],
        }
        for kind in sorted(planted_n)
    }
    actions = Counter(result.action for result in results)
    return PiiEvaluation(
        per_kind=per_kind,
        missed=missed,
        leaks_in_published=leaks,
        records=len(results),
        published=actions["publish"],
        withheld=actions["withhold"],
        excluded=actions["exclude"],
        recognizer=recognizer.name if recognizer is not None else "none (patterns and gazetteer only)",
    )


def screening_label(evaluation: PiiEvaluation) -> str:
    """How the records were screened, in words (``spaCy NER + patterns + gazetteer`` or the fallback)."""
    if evaluation.recognizer.startswith("none"):
        return "patterns + gazetteer only"
    return f"{evaluation.recognizer} + patterns + gazetteer"


def markdown_table(evaluations: Sequence[tuple[str, PiiEvaluation]]) -> str:
    """A Markdown table: one column per ``(corpus name, evaluation)``, one row per planted entity kind.

    Cells are ``removed/planted`` (``–`` where the corpus plants none of that kind); the last rows
    give the records and the planted identifiers left in published rows (the leak count).

    >>> e = PiiEvaluation({"EMAIL": {"planted": 2, "caught": 2, "recall": 1.0}}, [], 0, 3, 2, 1, 0, "none")
    >>> print(markdown_table([("c.jsonl", e)]))
    | entity kind | `c.jsonl`<br>patterns + gazetteer only |
    | --- | ---: |
    | EMAIL | 2/2 |
    | records (published / withheld / excluded) | 3 (2 / 1 / 0) |
    | **planted identifiers left in published rows** | **0** |
    """
    planted_kinds = {kind for _, evaluation in evaluations for kind in evaluation.per_kind}
    kinds = [k for k in ENTITY_KINDS if k in planted_kinds] + sorted(planted_kinds - set(ENTITY_KINDS))
    header = ["entity kind", *(f"`{name}`<br>{screening_label(e)}" for name, e in evaluations)]
    lines = ["| " + " | ".join(header) + " |", "| --- |" + " ---: |" * len(evaluations)]
    for kind in kinds:
        cells = []
        for _, evaluation in evaluations:
            row = evaluation.per_kind.get(kind)
            cells.append(f"{row['caught']}/{row['planted']}" if row else "–")
        lines.append(f"| {kind} | " + " | ".join(cells) + " |")
    records = [f"{e.records} ({e.published} / {e.withheld} / {e.excluded})" for _, e in evaluations]
    lines.append("| records (published / withheld / excluded) | " + " | ".join(records) + " |")
    leaks = [f"**{e.leaks_in_published}**" for _, e in evaluations]
    lines.append("| **planted identifiers left in published rows** | " + " | ".join(leaks) + " |")
    return "\n".join(lines)
