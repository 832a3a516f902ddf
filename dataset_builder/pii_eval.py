"""Measure the de-identifier on a planted-PII corpus: removal per kind, over-redaction, consistency.

The corpus is JSONL, one object per line::

    {"record": <RawPreferenceRecord>,
     "planted": [{"kind": <entity kind>, "text": <identifier>, "entity": <id>, "context": <snippet>}, ...],
     "must_keep": [<non-identifier phrase>, ...]}

``entity`` (optional) names the real entity a mention refers to, within its participant: every
mention of one entity should get one placeholder, and two entities never share one. ``context``
(optional) locates one occurrence when the same text names two entities ("Jordan" the friend and
"Jordan" the country); without it every whole-word occurrence of ``text`` is that item's.

The measures, all computed against the raw text's character offsets and the de-identifier's
replacement spans:

* **removal** — an identifier counts as removed only when no *fragment* of it is left: every
  distinctive token of every occurrence (house numbers, postcode halves, day numbers, e-mail user
  names — not street suffixes, titles, month names or ``com``) lies inside a replacement, and its
  text appears in no published field (in its own case for an item with a ``context``: the friend
  "Will" is not left by the verb "will"; and for such an item, outside the record's ``must_keep``
  phrases: the friend "jordi" is not left by the day "Sant Jordi" the corpus says to keep);
* **over-redaction** — ``must_keep`` phrase occurrences lost between the raw and the published
  fields (over the must-keep occurrences of all records);
* **placeholder consistency** — entities whose mentions got two or more placeholders (split) and
  placeholders shared by two or more entities (merged).

The corpora shipped in ``tests/fixtures/dataset/`` were written by this project (not study data);
all of them are tuning corpora since 2026-12-01 (the four ``deid_heldout*`` ones were held out until
their misses had been seen, the third and fourth written blind to the code by someone else; see
``docs/deidentification.md``).
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from mirage_bench.paths import PACKAGE_DIR
from mirage_bench.structs import field_values

from .deidentify import WithholdPolicy, deidentify_records, texts_of
from .detectors import ENTITY_KINDS, Recognizer
from .preferences import PreferenceFormatError, RawPreferenceRecord

__all__ = [
    "DEFAULT_CORPUS",
    "PlantedCorpus",
    "bar_cell",
    "bar_failures",
    "PlantedItem",
    "PiiEvaluation",
    "distinctive_tokens",
    "evaluate_planted",
    "load_planted_corpus",
    "markdown_table",
    "screening_label",
    "shipped_corpus",
]

#: Where the planted-PII corpora written for this package's tests live in a source checkout.
FIXTURE_DIR = PACKAGE_DIR.parent / "tests" / "fixtures" / "dataset"
#: The corpus ``build-dataset`` measures the de-identifier on by default (source checkout only).
DEFAULT_CORPUS = FIXTURE_DIR / "planted_pii_corpus.jsonl"
_SHIPPED = (
    "planted_pii_corpus.jsonl",
    "planted_pii_heldout.jsonl",
    "deid_tuning_memories.jsonl",
    "deid_heldout_memories.jsonl",
    "deid_heldout2_memories.jsonl",
    "deid_heldout3_memories.jsonl",
    "deid_heldout4_memories.jsonl",
    "deid_heldout5_memories.jsonl",
    "deid_heldout6_memories.jsonl",
    "deid_heldout7_memories.jsonl",
)
_PLACEHOLDER = re.compile(r"\[[A-Z_]+_\d+\]")
#: Tokens that identify nobody on their own: street types, direction letters, titles, mail words,
#: month names (dates are generalized to the month by design), four-digit years and the generic
#: nouns of organisation names ("hospital", "school": "[ORGANIZATION_1] hospital" names nobody).
_GENERIC = frozenset(
    """street st road rd avenue ave boulevard blvd lane ln drive dr court ct way place pl terrace
    parkway pkwy highway hwy circle square crescent close n s e w ne nw se sw north south east west
    mr mrs ms miss prof dr doctor the of and at dot com org net co uk io gmail outlook protonmail
    yahoo hotmail icloud www http https f u january february march april may june july august
    september october november december jan feb mar apr jun jul aug sep sept oct nov dec hospital
    school college university bank surgery practice clinic centre center medical plant inc ltd""".split()
)


def _fold(text: str) -> str:
    """Lowercase, accents stripped, one character per character (offsets are preserved)."""
    return "".join((unicodedata.normalize("NFKD", c)[:1] or c).lower()[:1] for c in text)


def _strip(text: str) -> str:
    """Accents stripped, case kept, one character per character."""
    return "".join((unicodedata.normalize("NFKD", c)[:1] or c)[:1] for c in text)


def distinctive_tokens(kind: str, text: str) -> list[str]:
    """The folded tokens of an identifier that must not survive redaction.

    >>> distinctive_tokens("LOCATION", "1420 N Maple Ave"), distinctive_tokens("DATE", "June 3rd, 2025")
    (['1420', 'maple'], ['3rd'])
    """
    tokens = [t for t in re.findall(r"\w+", _fold(text)) if t not in _GENERIC]
    if kind == "DATE":
        tokens = [t for t in tokens if t[0].isdigit() and not re.fullmatch(r"(19|20)\d\d", t)]
    return tokens or re.findall(r"\w+", _fold(text))


@dataclass(frozen=True)
class PlantedItem:
    """One planted identifier: kind, text, the entity it names (optional) and a locating snippet."""

    kind: str
    text: str
    entity: str | None = None
    context: str | None = None


@dataclass(frozen=True)
class PlantedCorpus:
    """Raw records and, per record id, the identifiers planted in it and its must-keep phrases.

    ``planted`` keeps the plain ``(kind, text)`` pairs; ``items`` the full :class:`PlantedItem`\\ s.
    """

    records: list[RawPreferenceRecord]
    planted: dict[str, list[tuple[str, str]]]
    items: dict[str, list[PlantedItem]] = field(default_factory=dict)
    must_keep: dict[str, list[str]] = field(default_factory=dict)


@dataclass(frozen=True)
class PiiEvaluation:
    """Removal per kind, leaks, over-redaction, placeholder consistency and withholding counts."""

    per_kind: dict[str, dict[str, float]]
    missed: list[dict[str, str]]
    leaks_in_published: int
    records: int
    published: int
    withheld: int
    excluded: int
    recognizer: str
    over_redaction: dict[str, float] = field(default_factory=dict)
    consistency: dict[str, object] = field(default_factory=dict)
    per_participant: dict[str, dict[str, object]] = field(default_factory=dict)

    @property
    def comparisons(self) -> int:
        """Records that are comparisons eligible for release (not excluded)."""
        return self.records - self.excluded

    def as_dict(self) -> dict[str, object]:
        """JSON-ready form (``missed`` lists record ids and kinds, never the identifier text)."""
        counts = ("records", "published", "withheld", "excluded")
        return {
            "recognizer": self.recognizer,
            **field_values(self, only=counts),
            "published_fraction": self.published / self.comparisons if self.comparisons else 0.0,
            **field_values(self, exclude=("recognizer", *counts)),
            "bar_failures": bar_failures(self),
        }


def load_planted_corpus(path: str | Path) -> PlantedCorpus:
    """Read a planted-PII corpus; raises :class:`PreferenceFormatError` on a bad line."""
    records: list[RawPreferenceRecord] = []
    planted: dict[str, list[tuple[str, str]]] = {}
    items: dict[str, list[PlantedItem]] = {}
    must_keep: dict[str, list[str]] = {}
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
            record = RawPreferenceRecord.model_validate(obj["record"])
            found = [
                PlantedItem(str(p["kind"]), str(p["text"]), p.get("entity"), p.get("context"))
                for p in obj["planted"]
            ]
            keep = obj.get("must_keep", [])
            if not isinstance(keep, list) or not all(isinstance(k, str) and k for k in keep):
                raise ValueError("must_keep must be a list of non-empty strings")
            for item in found:
                if item.kind not in ENTITY_KINDS:
                    raise ValueError(f"unknown entity kind {item.kind!r} (one of {', '.join(ENTITY_KINDS)})")
                if item.context is not None and _fold(item.text) not in _fold(item.context):
                    raise ValueError(f"context {item.context!r} does not contain {item.text!r}")
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise PreferenceFormatError(f"{path}:{number}: {exc}") from exc
        if record.record_id in planted:
            raise PreferenceFormatError(f"{path}:{number}: record_id {record.record_id!r} appears twice")
        records.append(record)
        planted[record.record_id] = [(item.kind, item.text) for item in found]
        items[record.record_id] = found
        must_keep[record.record_id] = keep
    return PlantedCorpus(records, planted, items, must_keep)


def shipped_corpus(path: str | Path) -> str | None:
    """The name of the package's own planted-PII fixture whose bytes ``path`` holds, else ``None``.

    Those corpora were written for this project (the third to seventh ``deid_heldout`` ones blind to
    the code, by someone else). All but the seventh are tuning corpora, so recall on them is a
    regression check; none of them is an estimate on real records.
    """
    content = Path(path).read_bytes()
    for name in _SHIPPED:
        fixture = FIXTURE_DIR / name
        if fixture.is_file() and fixture.read_bytes() == content:
            return name
    return None


def _occurrences(
    fields: dict[str, str], items: Sequence[PlantedItem]
) -> list[tuple[PlantedItem, str, int, int]]:
    """Where each planted item occurs in the raw fields: ``(item, field, start, end)``, no overlaps.

    Items with a ``context`` take the occurrence inside that snippet; the others every whole-word
    occurrence of their text; context-located and then longer occurrences win overlaps.
    """
    folded = {name: _fold(text) for name, text in fields.items()}
    located: list[tuple[int, int, PlantedItem, str, int, int]] = []
    for item in items:
        needle = _fold(item.text)
        if item.context:
            snippet = _fold(item.context)
            for name, text in folded.items():
                at = text.find(snippet)
                if at >= 0:
                    inner = snippet.find(needle)
                    located.append((0, -len(needle), item, name, at + inner, at + inner + len(needle)))
                    break
            continue
        pattern = re.compile(rf"(?<!\w){re.escape(needle)}(?!\w)")
        for name, text in folded.items():
            for m in pattern.finditer(text):
                located.append((1, -len(needle), item, name, m.start(), m.end()))
    taken: list[tuple[PlantedItem, str, int, int]] = []
    for _, _, item, name, start, end in sorted(located, key=lambda x: (x[0], x[1])):
        if all(name != n or end <= s or start >= e for _, n, s, e in taken):
            taken.append((item, name, start, end))
    return taken


def _must_keep_counts(phrase: str, folded_texts: Sequence[str]) -> int:
    """Whole-word occurrences of ``phrase`` in texts already passed through :func:`_fold`."""
    pattern = re.compile(rf"(?<!\w){re.escape(_fold(phrase))}(?!\w)")
    return sum(len(pattern.findall(text)) for text in folded_texts)


def evaluate_planted(
    corpus: PlantedCorpus, recognizer: Recognizer | None, *, policy: WithholdPolicy | None = None
) -> PiiEvaluation:
    """De-identify the corpus and measure removal, over-redaction and placeholder consistency."""
    results = deidentify_records(corpus.records, recognizer, **({"policy": policy} if policy else {}))
    planted_n: Counter[str] = Counter()
    caught_n: Counter[str] = Counter()
    missed: list[dict[str, str]] = []
    leaks = 0
    keep_total = keep_lost = 0
    lost_phrases: Counter[str] = Counter()
    entity_placeholders: dict[tuple[str, str], set[str]] = defaultdict(set)
    placeholder_entities: dict[tuple[str, str], set[str]] = defaultdict(set)
    per_participant: dict[str, dict[str, object]] = {}
    for result in results:
        record = result.record
        raw = dict(texts_of(record))
        published = result.published_fields()
        published_cased = _strip(_PLACEHOLDER.sub(" ", "\n".join(published.values())))
        published_all = published_cased.lower()
        outside_keep = published_cased
        for phrase in corpus.must_keep.get(record.record_id, []):
            outside_keep = re.sub(rf"(?<!\w){re.escape(_strip(phrase))}(?!\w)", " ", outside_keep, flags=re.I)
        spans: dict[str, list[tuple[int, int, str]]] = defaultdict(list)
        for rep in result.replacements:
            spans[rep.field].append((rep.start, rep.end, rep.replacement))
        items = corpus.items.get(record.record_id) or [
            PlantedItem(kind, text) for kind, text in corpus.planted[record.record_id]
        ]
        left: dict[int, bool] = {}
        for item, name, start, end in _occurrences(raw, items):
            covering = [(s, e, r) for s, e, r in spans[name] if s < end and e > start]
            segment = raw[name][start:end]
            for m in re.finditer(r"\w+", _fold(segment)):
                token = m.group(0)
                if token not in distinctive_tokens(item.kind, item.text):
                    continue
                t0, t1 = start + m.start(), start + m.end()
                if not any(s <= t0 and e >= t1 for s, e, _ in covering):
                    left[id(item)] = True
            if item.entity and item.kind != "DATE":
                for _, _, replacement in covering:
                    if _PLACEHOLDER.fullmatch(replacement):
                        entity_placeholders[(record.participant_id, item.entity)].add(replacement)
                        placeholder_entities[(record.participant_id, replacement)].add(item.entity)
        for item in items:
            planted_n[item.kind] += 1
            if item.context:  # an ambiguous text ("Will" the friend, "will" the verb): match its case,
                # outside the record's must-keep phrases ("jordi" the friend, "Sant Jordi" the day)
                exact = re.search(rf"(?<!\w){re.escape(_strip(item.text))}(?!\w)", outside_keep)
            else:
                exact = re.search(rf"(?<!\w){re.escape(_fold(item.text))}(?!\w)", published_all)
            if left.get(id(item)) or exact:
                missed.append({"record_id": record.record_id, "kind": item.kind})
                leaks += result.action == "publish"
            else:
                caught_n[item.kind] += 1
        keep = corpus.must_keep.get(record.record_id, [])
        raw_folded = [_fold(text) for text in raw.values()] if keep else []  # once per record, not per phrase
        published_folded = [_fold(text) for text in published.values()] if keep else []
        for phrase in keep:
            before = _must_keep_counts(phrase, raw_folded)
            after = _must_keep_counts(phrase, published_folded)
            keep_total += before
            keep_lost += max(0, before - after)
            if before > after:
                lost_phrases[phrase] += before - after
        row = per_participant.setdefault(
            record.participant_id, {"records": 0, "published": 0, "withheld": 0, "excluded": 0, "reasons": {}}
        )
        row["records"] += 1  # type: ignore[operator]
        row[{"publish": "published", "withhold": "withheld", "exclude": "excluded"}[result.action]] += 1  # type: ignore[operator]
        if result.action == "withhold":
            reasons: dict[str, int] = row["reasons"]  # type: ignore[assignment]
            reasons[result.reason] = reasons.get(result.reason, 0) + 1
    per_kind = {
        kind: {
            "planted": planted_n[kind],
            "caught": caught_n[kind],
            "recall": caught_n[kind] / planted_n[kind],
        }
        for kind in sorted(planted_n)
    }
    split = sorted(key for key, values in entity_placeholders.items() if len(values) > 1)
    merged = sorted(key for key, values in placeholder_entities.items() if len(values) > 1)
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
        over_redaction={
            "must_keep": keep_total,
            "lost": keep_lost,
            "rate": keep_lost / keep_total if keep_total else 0.0,
            "lost_phrases": dict(lost_phrases.most_common()),
        },
        consistency={
            "entities": len(entity_placeholders),
            "split": len(split),
            "merged_placeholders": len(merged),
            "split_entities": [f"{pid}:{entity}" for pid, entity in split],
            "merged": [f"{pid}:{placeholder}" for pid, placeholder in merged],
        },
        per_participant=dict(sorted(per_participant.items())),
    )


#: The release bar of issue #16: recall per kind, published share, over-redaction rate.
BAR_RECALL = 0.95
BAR_PUBLISHED = 0.80
BAR_OVER_REDACTION = 0.05


def bar_failures(evaluation: PiiEvaluation) -> list[str]:
    """What keeps ``evaluation`` under the release bar, in words (empty: the bar is met).

    The bar: recall >= 0.95 for every planted kind, no planted identifier in a published row,
    >= 80% of comparisons published, over-redaction <= 5% of must-keep occurrences (where the corpus
    lists must-keep phrases) and one placeholder per entity (where it tags entities).

    >>> e = PiiEvaluation({"PERSON": {"planted": 20, "caught": 18, "recall": 0.9}}, [], 2, 10, 9, 1, 0, "x")
    >>> bar_failures(e)
    ['PERSON recall 0.90', '2 planted identifiers published']
    """
    failures = [
        f"{kind} recall {row['recall']:.2f}"
        for kind, row in evaluation.per_kind.items()
        if row["recall"] < BAR_RECALL
    ]
    if evaluation.leaks_in_published:
        failures.append(f"{evaluation.leaks_in_published} planted identifiers published")
    if evaluation.comparisons and evaluation.published / evaluation.comparisons < BAR_PUBLISHED:
        failures.append(f"{evaluation.published / evaluation.comparisons:.0%} published")
    over = evaluation.over_redaction
    if over.get("must_keep") and float(over["rate"]) > BAR_OVER_REDACTION:
        failures.append(f"over-redaction {float(over['rate']):.1%}")
    consistency = evaluation.consistency
    if consistency.get("split") or consistency.get("merged_placeholders"):
        failures.append(f"{consistency['split']} split / {consistency['merged_placeholders']} merged")
    return failures


def bar_cell(evaluation: PiiEvaluation) -> str:
    """``met`` or ``not met: …`` for the table; says which parts of the bar the corpus cannot test."""
    failures = bar_failures(evaluation)
    unmeasured = [
        name
        for name, present in (
            ("over-redaction", evaluation.over_redaction.get("must_keep")),
            ("consistency", evaluation.consistency.get("entities")),
        )
        if not present
    ]
    cell = "not met: " + ", ".join(failures) if failures else "met"
    return cell + (f" ({', '.join(unmeasured)} not measured)" if unmeasured else "")


def screening_label(evaluation: PiiEvaluation) -> str:
    """How the records were screened, in words (``spaCy NER + patterns + gazetteer`` or the fallback)."""
    if evaluation.recognizer.startswith("none"):
        return "patterns + gazetteer only"
    return f"{evaluation.recognizer} + patterns + gazetteer"


def markdown_table(evaluations: Sequence[tuple[str, PiiEvaluation]]) -> str:
    """A Markdown table: one column per ``(corpus name, evaluation)``, one row per planted entity kind.

    Cells are ``removed/planted`` (``–`` where the corpus plants none of that kind; removed means no
    fragment left); the last rows give the records, the share of comparisons published, the
    must-keep occurrences lost, placeholder consistency and the planted identifiers left in published
    rows (the leak count).

    >>> e = PiiEvaluation({"EMAIL": {"planted": 2, "caught": 2, "recall": 1.0}}, [], 0, 3, 2, 1, 0, "none")
    >>> print(markdown_table([("c.jsonl", e)]))  # doctest: +ELLIPSIS
    | entity kind | `c.jsonl`<br>patterns + gazetteer only |
    | --- | ---: |
    | EMAIL | 2/2 |
    | records (published / withheld / excluded) | 3 (2 / 1 / 0) |
    | comparisons published | 67% |
    | must-keep occurrences lost (over-redaction) | – |
    | entities split / placeholders merged | – |
    | **planted identifiers left in published rows** | **0** |
    | bar (recall ≥ 0.95 per kind, 0 left, ≥ 80% published, ≤ 5% lost, one placeholder ...) | not met: ... |
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
    rows: dict[str, Callable[[PiiEvaluation], str]] = {
        "records (published / withheld / excluded)": lambda e: (
            f"{e.records} ({e.published} / {e.withheld} / {e.excluded})"
        ),
        "comparisons published": lambda e: f"{e.published / e.comparisons:.0%}" if e.comparisons else "–",
        "must-keep occurrences lost (over-redaction)": lambda e: (
            f"{e.over_redaction['lost']}/{e.over_redaction['must_keep']}"
            if e.over_redaction.get("must_keep")
            else "–"
        ),
        "entities split / placeholders merged": lambda e: (
            f"{e.consistency['split']} / {e.consistency['merged_placeholders']}"
            f" of {e.consistency['entities']}"
            if e.consistency.get("entities")
            else "–"
        ),
        "**planted identifiers left in published rows**": lambda e: f"**{e.leaks_in_published}**",
        "bar (recall ≥ 0.95 per kind, 0 left, ≥ 80% published, ≤ 5% lost, one placeholder per entity)": (
            bar_cell
        ),
    }
    for label, cell in rows.items():
        lines.append(f"| {label} | " + " | ".join(cell(e) for _, e in evaluations) + " |")
    return "\n".join(lines)
