"""De-identification of raw preference records (seed 003 Appendix A.4).

For each participant, identifiers found by the patterns, the named-entity recognizer, the
participant's own profile and a per-participant gazetteer (every surface already found anywhere in
that participant's records, plus the parts of multi-word person names) are replaced with typed
placeholders ``[PERSON_1]``, ``[ORGANIZATION_1]``, ``[LOCATION_1]``, … that stay the same across a
memory, its query and both responses; exact dates are generalized to month and year.

A comparison is **withheld** when a redaction falls inside text that differs between the two
responses (policy ``"differing_text"``, the default), since the published label would then describe
an altered contrast; policy ``"generalized_only"`` withholds only when a date generalization falls
there. Every decision goes to a review record (fields touched, entity kinds, counts) that never
reproduces the removed text.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from dataset_builder.detectors import Entity, Recognizer, find_patterns, generalize_date, resolve_overlaps
from dataset_builder.preferences import RawPreferenceRecord

__all__ = [
    "PUBLISHED_FIELDS",
    "DeidentifiedRecord",
    "ParticipantRedactor",
    "Replacement",
    "WithholdPolicy",
    "deidentify_records",
    "texts_of",
]

WithholdPolicy = Literal["differing_text", "generalized_only"]

#: Fields of a raw record that reach the published rows (memories are indexed ``retrieved_memories[i]``).
PUBLISHED_FIELDS: tuple[str, ...] = (
    "query",
    "retrieved_memories",
    "response_with_memory",
    "response_without_memory",
)

#: Profile keys whose values are direct identifiers of a known kind.
_PROFILE_KINDS: dict[str, str] = {
    "name": "PERSON",
    "full_name": "PERSON",
    "first_name": "PERSON",
    "last_name": "PERSON",
    "employer": "ORGANIZATION",
    "company": "ORGANIZATION",
    "organization": "ORGANIZATION",
    "school": "ORGANIZATION",
    "university": "ORGANIZATION",
    "workplace": "ORGANIZATION",
    "city": "LOCATION",
    "location": "LOCATION",
    "hometown": "LOCATION",
    "address": "LOCATION",
    "neighborhood": "LOCATION",
    "email": "EMAIL",
    "phone": "PHONE",
    "handle": "HANDLE",
}
_NAMED_KINDS = frozenset({"PERSON", "ORGANIZATION", "LOCATION"})
_GAZETTEER_KINDS = frozenset(
    {"PERSON", "ORGANIZATION", "LOCATION", "EMAIL", "PHONE", "URL", "HANDLE", "ID_NUMBER"}
)
#: Capitalized words that are never taken as a stand-alone part of a person's name.
_NAME_PART_STOP = frozenset(
    {"Dr", "Mr", "Mrs", "Ms", "Prof", "The", "And", "Van", "Von", "De", "Del", "Da", "Jr", "Sr"}
)


@dataclass(frozen=True, slots=True)
class Replacement:
    """One redaction: ``field``'s raw text ``[start, end)`` became ``replacement`` (a placeholder or a
    generalized date); ``kind`` and ``source`` (the detector) say why. It never holds the removed text."""

    field: str
    start: int
    end: int
    kind: str
    replacement: str
    source: str

    def as_dict(self) -> dict[str, object]:
        """JSON-ready form for the private review file."""
        return {
            "field": self.field,
            "start": self.start,
            "end": self.end,
            "kind": self.kind,
            "replacement": self.replacement,
            "source": self.source,
        }


def _key(text: str) -> str:
    return re.sub(r"\s+", " ", text.strip()).lower().removeprefix("the ")


@dataclass
class ParticipantRedactor:
    """Typed, consistent placeholders for one participant's records.

    >>> r = ParticipantRedactor()
    >>> r.learn([Entity(0, 11, "PERSON", "Maya Okafor", "ner")])
    >>> r.redact("Maya Okafor met Maya at 4 Elm Street.", [])[0]
    '[PERSON_1] met [PERSON_1] at 4 Elm Street.'
    """

    placeholders: dict[str, str] = field(default_factory=dict)
    kinds: dict[str, str] = field(default_factory=dict)
    aliases: dict[str, str] = field(default_factory=dict)
    counters: Counter[str] = field(default_factory=Counter)
    _gazetteer: re.Pattern[str] | None = None

    def _placeholder(self, kind: str, key: str) -> str:
        key = self.aliases.get(key, key)
        if key not in self.placeholders:
            kind = self.kinds.setdefault(key, kind)
            self.counters[kind] += 1
            self.placeholders[key] = f"[{kind}_{self.counters[kind]}]"
        return self.placeholders[key]

    def learn(self, entities: Sequence[Entity]) -> None:
        """Add identifier surfaces to the participant's gazetteer (and name parts as aliases)."""
        for entity in entities:
            if entity.kind not in _GAZETTEER_KINDS:
                continue
            key = _key(entity.text)
            if not key or key in self.kinds or key in self.aliases:
                continue
            self.kinds[key] = entity.kind
            self._placeholder(entity.kind, key)
            if entity.kind == "PERSON":
                for part in re.findall(r"[A-Z][a-zA-Z'-]{2,}", entity.text):
                    if part not in _NAME_PART_STOP:
                        self.aliases.setdefault(part.lower(), key)
        self._gazetteer = None

    def _gazetteer_matches(self, text: str) -> list[Entity]:
        if self._gazetteer is None:
            surfaces = sorted({*self.kinds, *self.aliases}, key=len, reverse=True)
            if not surfaces:
                return []
            alternation = "|".join(re.escape(s).replace(r"\ ", r"\s+") for s in surfaces)
            self._gazetteer = re.compile(rf"(?<![\w@])(?:{alternation})(?![\w@])", re.IGNORECASE)
        found = []
        for m in self._gazetteer.finditer(text):
            key = self.aliases.get(_key(m.group(0)), _key(m.group(0)))
            kind = self.kinds.get(key, "PERSON")
            if kind in _NAMED_KINDS and not m.group(0)[0].isupper():
                continue  # a lowercase common word equal to a name ("will", "rose", "apple")
            found.append(Entity(m.start(), m.end(), kind, m.group(0), "gazetteer"))
        return found

    def redact(self, text: str, entities: Sequence[Entity]) -> tuple[str, list[tuple[Entity, str]]]:
        """Replace ``entities`` plus every gazetteer surface in ``text``.

        Returns ``(text, applied)``: ``applied`` pairs each replaced span with its replacement.
        """
        spans = resolve_overlaps([*entities, *self._gazetteer_matches(text)])
        pieces: list[str] = []
        applied: list[tuple[Entity, str]] = []
        cursor = 0
        for span in spans:
            pieces.append(text[cursor : span.start])
            if span.kind == "DATE":
                replacement = generalize_date(span.text)
            else:
                replacement = self._placeholder(span.kind, _key(span.text))
            pieces.append(replacement)
            applied.append((span, replacement))
            cursor = span.end
        pieces.append(text[cursor:])
        return "".join(pieces), applied


@dataclass
class DeidentifiedRecord:
    """The published fields of one record after redaction, its decision and review entry."""

    record: RawPreferenceRecord
    fields: dict[str, str | list[str]]
    touched: dict[str, Counter[str]]
    action: Literal["publish", "withhold", "exclude"]
    reason: str
    replacements: list[Replacement] = field(default_factory=list)

    def published_fields(self) -> dict[str, str]:
        """The published text per field name (memories as ``retrieved_memories[i]``)."""
        out: dict[str, str] = {}
        for name, value in self.fields.items():
            if isinstance(value, list):
                out.update({f"{name}[{i}]": text for i, text in enumerate(value)})
            else:
                out[name] = value
        return out

    def review_entry(self) -> dict[str, object]:
        """Fields touched and entity kinds replaced (counts only, never the removed text)."""
        return {
            "record_id": self.record.record_id,
            "action": self.action,
            "reason": self.reason,
            "fields_touched": {
                name: dict(sorted(kinds.items())) for name, kinds in sorted(self.touched.items())
            },
            "redactions": [replacement.as_dict() for replacement in self.replacements],
        }


def _differing_ranges(a: str, b: str) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """Character ranges of the word tokens of ``a`` and of ``b`` that the other response lacks."""
    tok_a = [(m.start(), m.end()) for m in re.finditer(r"\S+", a)]
    tok_b = [(m.start(), m.end()) for m in re.finditer(r"\S+", b)]
    words_a = [a[s:e].lower() for s, e in tok_a]
    words_b = [b[s:e].lower() for s, e in tok_b]
    ranges_a: list[tuple[int, int]] = []
    ranges_b: list[tuple[int, int]] = []
    matcher = difflib.SequenceMatcher(None, words_a, words_b, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            continue
        if i2 > i1:
            ranges_a.append((tok_a[i1][0], tok_a[i2 - 1][1]))
        if j2 > j1:
            ranges_b.append((tok_b[j1][0], tok_b[j2 - 1][1]))
    return ranges_a, ranges_b


def _touches(spans: Sequence[Entity], ranges: Sequence[tuple[int, int]], policy: WithholdPolicy) -> bool:
    for span in spans:
        if policy == "generalized_only" and span.kind != "DATE":
            continue
        if any(span.start < end and span.end > start for start, end in ranges):
            return True
    return False


def texts_of(record: RawPreferenceRecord) -> list[tuple[str, str]]:
    """The raw published-field texts of a record as ``(field name, text)``, memories indexed."""
    texts = [("query", record.query)]
    texts += [(f"retrieved_memories[{i}]", memory) for i, memory in enumerate(record.retrieved_memories)]
    texts += [("response_with_memory", record.response_with_memory)]
    texts += [("response_without_memory", record.response_without_memory)]
    return texts


def _profile_entities(record: RawPreferenceRecord) -> list[Entity]:
    found = []
    for name, value in record.participant_profile.items():
        kind = _PROFILE_KINDS.get(name.lower())
        if kind and value.strip():
            found.append(Entity(0, len(value), kind, value.strip(), "profile"))
    return found


def deidentify_records(
    records: Sequence[RawPreferenceRecord],
    recognizer: Recognizer | None,
    *,
    policy: WithholdPolicy = "differing_text",
) -> list[DeidentifiedRecord]:
    """De-identify every record (grouped by participant); returns one result per input record.

    Excluded records (quality filter) and test–retest repeats get ``action="exclude"`` without
    being published. ``recognizer=None`` runs the patterns and gazetteers only.
    """
    by_participant: dict[str, list[RawPreferenceRecord]] = defaultdict(list)
    for record in records:
        by_participant[record.participant_id].append(record)
    # One NER pass over every text that is published or that can seed the gazetteer.
    jobs: list[tuple[str, str, str]] = []
    for pid, group in by_participant.items():
        for record in group:
            jobs += [(pid, f"{record.record_id}\0{name}", text) for name, text in texts_of(record)]
            jobs += [(pid, "", text) for text in record.event_memories]
            jobs += [(pid, "", value) for value in record.participant_profile.values()]
            if record.note:
                jobs.append((pid, "", record.note))
    unique = list(dict.fromkeys(text for _, _, text in jobs))  # profiles and events repeat per record
    found = dict(zip(unique, recognizer(unique), strict=True)) if recognizer is not None and unique else {}
    ner = [found.get(text, []) for _, _, text in jobs]
    detected: dict[str, list[Entity]] = {}
    redactors: dict[str, ParticipantRedactor] = defaultdict(ParticipantRedactor)
    for pid, group in by_participant.items():
        for record in group:  # the participant's own profile names the kinds first
            redactors[pid].learn(_profile_entities(record))
    for (pid, slot, text), ner_entities in zip(jobs, ner, strict=True):
        entities = resolve_overlaps([*find_patterns(text), *ner_entities])
        redactors[pid].learn(entities)
        if slot:
            detected[slot] = entities

    results: dict[str, DeidentifiedRecord] = {}
    for pid, group in by_participant.items():
        redactor = redactors[pid]
        for record in sorted(group, key=lambda r: r.record_id):
            fields: dict[str, str | list[str]] = {}
            touched: dict[str, Counter[str]] = {}
            applied: dict[str, list[Entity]] = {}
            replacements: list[Replacement] = []
            memories: list[str] = []
            for name, text in texts_of(record):
                new_text, pairs = redactor.redact(text, detected[f"{record.record_id}\0{name}"])
                spans = [span for span, _ in pairs]
                applied[name] = spans
                replacements += [
                    Replacement(name, span.start, span.end, span.kind, rep, span.source)
                    for span, rep in pairs
                ]
                if spans:
                    touched[name] = Counter(span.kind for span in spans)
                if name.startswith("retrieved_memories["):
                    memories.append(new_text)
                else:
                    fields[name] = new_text
            fields["retrieved_memories"] = memories
            action: Literal["publish", "withhold", "exclude"] = "publish"
            reason = ""
            if record.excluded:
                action, reason = "exclude", f"quality filter: {record.exclusion_reason}"
            elif record.test_retest:
                action, reason = "exclude", "test-retest repeat"
            else:
                ranges_with, ranges_without = _differing_ranges(
                    record.response_with_memory, record.response_without_memory
                )
                if _touches(applied["response_with_memory"], ranges_with, policy) or _touches(
                    applied["response_without_memory"], ranges_without, policy
                ):
                    action = "withhold"
                    reason = "redaction falls in text that differs between the two responses"
            results[record.record_id] = DeidentifiedRecord(
                record, fields, touched, action, reason, replacements
            )
    return [results[record.record_id] for record in records]
