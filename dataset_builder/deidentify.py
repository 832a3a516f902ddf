"""De-identification of raw preference records (seed 003 Appendix A.4).

For each participant, identifiers found by the patterns, the named-entity recognizer, the
participant's own profile and a per-participant gazetteer (every surface already found anywhere in
that participant's records, plus the parts of multi-word person names) are replaced with typed
placeholders ``[PERSON_1]``, ``[ORGANIZATION_1]``, ``[LOCATION_1]``, … that stay the same across a
memory, its query and both responses; exact dates are generalized to month and year.

A comparison is **withheld** only when redaction changes the basis of its preference (A.4): under
policy ``"bears_on_preference"`` (the default) when redaction erases the difference between the two
responses, or generalizes a remembered or asked-for date inside the text where they differ (a
typed, consistent placeholder keeps the entity and its relations, so it does not withhold);
``"differing_text"`` withholds on any redaction in the differing text (the strict policy this
package used first) and ``"generalized_only"`` on any date generalization there. Every redaction
goes to a review record (field, offsets, kind, replacement, detector) for the human pass A.4
requires; it never reproduces the removed text.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from mirage_bench.structs import field_values

from .detectors import (
    RELATION_WORDS,
    Entity,
    Recognizer,
    find_patterns,
    generalize_date,
    place_names,
    public_mention,
    resolve_overlaps,
)
from .preferences import RawPreferenceRecord
from .public import country_names, media_titles, residence_before

__all__ = [
    "PUBLISHED_FIELDS",
    "DeidentifiedRecord",
    "ParticipantRedactor",
    "Replacement",
    "WITHHOLD_POLICIES",
    "WithholdPolicy",
    "deidentify_records",
    "texts_of",
]

WithholdPolicy = Literal["bears_on_preference", "differing_text", "generalized_only"]
#: The policies, the default first (``build-dataset --withhold-policy`` takes these names).
WITHHOLD_POLICIES: tuple[str, ...] = ("bears_on_preference", "differing_text", "generalized_only")
#: Reasons a comparison is withheld under ``bears_on_preference`` (the review file and card count them).
REASON_ERASED = "redaction erases the difference between the two responses"
REASON_GENERALIZED = (
    "a remembered or asked-for date the responses differ on was generalized (the contrast may rest on it)"
)
REASON_DIFFERING = "redaction falls in text that differs between the two responses"

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
#: Detectors whose label rests on a context cue, a format or the profile (not on NER alone).
_CUED_SOURCES = frozenset(
    {
        "profile",
        "relation",
        "pattern",
        "phonenumbers",
        "places",
        "workplace",
        "jobcue",
        "orgtype",
        "feature",
        "home",
    }
)
#: Detectors whose hits a public use of the same name elsewhere in the participant's text overrides.
_OVERRIDABLE_SOURCES = frozenset(
    {"ner", "orgtype", "workplace", "jobcue", "venue", "feature", "places", "personcue", "home"}
)
_GAZETTEER_KINDS = frozenset(
    {"PERSON", "ORGANIZATION", "LOCATION", "EMAIL", "PHONE", "URL", "HANDLE", "ID_NUMBER"}
)
#: Words that are never taken as a stand-alone part of a person's name.
_NAME_PART_STOP = frozenset(
    {"dr", "mr", "mrs", "ms", "prof", "the", "and", "van", "von", "de", "del", "da", "jr", "sr", "of", "st"}
)
#: First names that are also everyday words: matched in lowercase never, at a sentence start
#: before a determiner or pronoun never ("Will the gym…", "May I…", "Grace period").
_COMMON_WORD_NAMES = frozenset(
    """will may june april august grace rose mark bill art pat ruby jack frank hope joy faith summer
    rich sandy penny holly ivy lily daisy iris amber jade chase dawn drew gene guy ray max victor cliff
    brook sky go rust""".split()
)
_FUNCTION_NEXT = re.compile(
    r"\s+(?:the|a|an|i|you|we|he|she|it|they|this|that|these|those|my|your|our|his|her|their|be|not)\b",
    re.IGNORECASE,
)
_PLACE_BEFORE = frozenset(
    "in to from visit visiting around across through near of at toward towards into".split()
)
_PERSON_BEFORE = frozenset(
    "tell ask text call email with and invite message meet thank remind dear for cousin friend sister".split()
)
_PERSON_AFTER = re.compile(
    r"^(?:'s\b|\s+(?:might|will|would|could|should|can|says|said|wants|loves|likes|hates|usually|"
    r"prefers|needs|asked|and\s+you|finishes|has|had))",
    re.IGNORECASE,
)
#: Words after which a lowercase everyday-word name is the person ("with mark", "tell will").
_SOCIAL_BEFORE = re.compile(
    r"\b(?:with|tell|ask|text|call|invite|message|remind|thank|meet|dear|email|ring)\s+$", re.IGNORECASE
)
_CASED_TEXT = re.compile(r"^\s*[A-Z]")
#: A relation word right before a name ("my mum june", "her son will").
_RELATION_BEFORE = re.compile(
    rf"\b(?:my|our|your|his|her|their|'s)\s+(?:{RELATION_WORDS})\s+$", re.IGNORECASE
)
_PLACE_CUE_BEFORE = re.compile(
    r"(?:\b(?:in|at|to|from|near|around|outside|of|into|towards?)\s+(?:the\s+)?|,\s*)$", re.IGNORECASE
)
_PLACE_AFTER = re.compile(
    r"^\s+(?:(?:is|are|gets|feels)\s+(?:\w+\s+)?)?in\s+(?:january|february|march|april|may|june|july|"
    r"august|september|october|november|december|spring|summer|autumn|fall|winter)\b",
    re.IGNORECASE,
)


_ORG_NOUNS = frozenset(
    """hospital school college university bank clinic surgery practice centre center group ltd inc plc
    co""".split()
)
#: "Spider-Man", "Ant-Man", "Wonder-Woman": hyphenated titles, not people's names.
_COMPOUND_TITLE = re.compile(r"-(?:Man|Men|Woman|Women|Girl|Boy|Verse)$")


def _fold(text: str) -> str:
    return "".join((unicodedata.normalize("NFKD", c)[:1] or c) for c in text).lower()


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
        return field_values(self)


def _key(text: str) -> str:
    """Normal form of an identifier surface: accents folded, lowercase, no "the"/title/possessive."""
    key = re.sub(r"\s+", " ", _fold(text).strip(" .,;:'\"()"))
    key = re.sub(r"^(?:the|dr|mr|mrs|ms|prof)\.?\s+", "", key)
    return re.sub(r"['\u2019]s$", "", key)


def _kind_key(kind: str, text: str) -> str:
    key = _key(text)
    if kind == "HANDLE":
        key = re.sub(r"#\d{4}$", "", key.lstrip("@"))
    elif kind == "PHONE":
        key = re.sub(r"\D", "", key)
    return key


@dataclass
class ParticipantRedactor:
    """Typed, consistent placeholders for one participant's records (entity resolution inside it).

    Every surface seen anywhere in the participant's records is learnt first; :meth:`resolve`
    then joins mentions of one entity — a first or family name with the full name, with or
    without accents, hyphens or case ("Tomás Rivera", "tomas", "Ji-woo", "jiwoo"), an organisation
    with its short form ("Mercy General Hospital", "Mercy General"), a street with its numbered
    address — while a person and a place that share a name ("Jordan") stay two entities, told
    apart per mention by the detector's label or the words around it.

    >>> r = ParticipantRedactor()
    >>> r.learn([Entity(0, 11, "PERSON", "Maya Okafor", "ner")])
    >>> r.redact("Maya Okafor met maya at 4 Elm Street.", [])[0]
    '[PERSON_1] met [PERSON_1] at 4 Elm Street.'
    """

    counters: Counter[str] = field(default_factory=Counter)
    placeholders: dict[tuple[str, str], str] = field(default_factory=dict)
    mentions: dict[tuple[str, str], str] = field(default_factory=dict)
    aliases: dict[tuple[str, str], tuple[str, str]] = field(default_factory=dict)
    surfaces: dict[str, set[tuple[str, str]]] = field(default_factory=dict)
    #: Which detectors named each ``(kind, key)`` (context-cued evidence outweighs NER's label).
    evidence: dict[tuple[str, str], set[str]] = field(default_factory=lambda: defaultdict(set))
    #: Countries this participant names only as places they do not live or work in.
    residences: set[str] = field(default_factory=set)
    #: Place keys seen right after a place preposition or a comma ("in Fitzroy", "Smith St, Fitzroy").
    placed: set[str] = field(default_factory=set)
    kept_countries: set[str] = field(default_factory=set)
    _active: dict[tuple[str, str], str] = field(default_factory=dict)
    _gazetteer: re.Pattern[str] | None = None
    _resolved: bool = False

    def learn(self, entities: Sequence[Entity]) -> None:
        """Add identifier mentions to the participant's gazetteer (resolved on first redaction)."""
        for entity in entities:
            if entity.kind not in _GAZETTEER_KINDS:
                continue
            key = _kind_key(entity.kind, entity.text)
            if not key:
                continue
            if (entity.kind, key) not in self.mentions:
                self.mentions[(entity.kind, key)] = entity.text
            if entity.source not in self.evidence[(entity.kind, key)]:
                self.evidence[(entity.kind, key)].add(entity.source)
                self._resolved = False

    def _label_mentions(self) -> dict[tuple[str, str], str]:
        """The mentions with each surface's kind settled by its evidence.

        A surface the NER model alone gave a second kind ("Leeds" as a person beside "in leeds" as a
        place, "Sofía" as a place beside "my sister Sofía Ibarra") keeps only the kind that a context
        cue, a pattern or the profile gave it; a place the NER model named whose first word is an
        organisation found by a cue ("the Tesco Extra" beside "works at tesco"), or that is the first
        word(s) of one, no known place and never written as a place ("Hillcrest" beside "a nurse at
        Hillcrest Medical Center", unlike "a GP in Fitzroy" beside "fitzroy auto repairs"), is that
        organisation.
        Two kinds that both have such evidence ("Jordan" the friend and the country) stay apart.
        """
        cued = {
            mention
            for mention, sources in self.evidence.items()
            if sources & _CUED_SOURCES and mention in self.mentions
        }
        person_parts = {
            part
            for kind, key in cued
            if kind == "PERSON" and len(key.split()) > 1
            for token in key.split()
            for part in (token, token.replace("-", ""))
        }
        org_keys = {key for kind, key in cued if kind == "ORGANIZATION"}
        kinds_of: dict[str, set[str]] = defaultdict(set)
        for kind, key in self.mentions:
            if kind in _NAMED_KINDS:
                kinds_of[key].add(kind)
        active: dict[tuple[str, str], str] = {}
        streets = {
            re.sub(r"^\d+[a-z]?\s+|\s+\d+[a-z]?$", "", key) for kind, key in cued if kind == "LOCATION"
        }
        for (kind, key), surface in self.mentions.items():
            if kind in _NAMED_KINDS and (kind, key) not in cued:
                others = {k for k in kinds_of[key] if k != kind and (k, key) in cued}
                if others or (kind != "PERSON" and key in person_parts):
                    continue
                if kind != "LOCATION" and key in streets:  # "Karl-Heine-Straße" beside "… Straße 42"
                    active.setdefault(("LOCATION", key), surface)
                    continue
                if kind == "LOCATION" and (
                    (key.split()[0] in org_keys and len(key.split()) > 1)
                    or (
                        key not in place_names()
                        and key not in self.placed
                        and any(o.startswith(f"{key} ") for o in org_keys)
                    )
                ):  # "the Tesco Extra" beside "tesco"; "Hillcrest" beside "Hillcrest Medical Center"
                    active.setdefault(("ORGANIZATION", key), surface)
                    continue
            active[(kind, key)] = surface
        return active

    def resolve(self) -> None:
        """Join the mentions learnt so far into entities (aliases) and build the gazetteer."""
        self.aliases.clear()
        self.surfaces.clear()
        self._active = self._label_mentions()
        by_kind: dict[str, list[str]] = defaultdict(list)
        for kind, key in self._active:
            by_kind[kind].append(key)
        # persons: full names first; a name part (or its hyphen-free form) joins the one full name holding it
        people = sorted(by_kind["PERSON"], key=lambda k: -len(k.split()))
        parts: dict[str, set[str]] = defaultdict(set)
        for key in people:
            tokens = key.split()
            if len(tokens) > 1:
                for token in tokens:
                    if token not in _NAME_PART_STOP and len(token) >= 2:
                        parts[token].add(key)
                        parts[token.replace("-", "")].add(key)
        for key in people:
            owners = parts.get(key) or parts.get(key.replace("-", "")) or set()
            owners.discard(key)
            if len(key.split()) == 1 and len(owners) == 1:
                self.aliases[("PERSON", key)] = ("PERSON", next(iter(owners)))
            elif len(key.split()) > 1:
                longer = [o for o in people if o != key and f" {key} " in f" {o} "]
                if len(longer) == 1:
                    self.aliases[("PERSON", key)] = ("PERSON", longer[0])
        for token, owners in parts.items():
            if len(owners) == 1 and ("PERSON", token) not in self._active:
                self.aliases[("PERSON", token)] = ("PERSON", next(iter(owners)))
        # organisations: a token prefix of one longer name; places: a token suffix (street of an address)
        for kind in ("ORGANIZATION", "LOCATION"):
            keys = sorted(by_kind[kind], key=len, reverse=True)
            for key in keys:
                longer = [
                    o
                    for o in keys
                    if len(o) > len(key) and (o.startswith(f"{key} ") or o.endswith(f" {key}"))
                ]
                if len(longer) == 1 and len(key) >= 3:
                    self.aliases[(kind, key)] = (kind, longer[0])
        # "Mercy General Hospital" is also called "Mercy General": drop a generic last noun
        for key in by_kind["ORGANIZATION"]:
            tokens = key.split()
            if (
                len(tokens) >= 3
                and tokens[-1] in _ORG_NOUNS
                and ("ORGANIZATION", " ".join(tokens[:-1])) not in self._active
            ):
                self.aliases.setdefault(("ORGANIZATION", " ".join(tokens[:-1])), ("ORGANIZATION", key))
        for kind, key in [*self._active, *self.aliases]:
            self.surfaces.setdefault(key, set()).add((kind, key))
            if "-" in key:
                self.surfaces.setdefault(key.replace("-", ""), set()).add((kind, key))
        # every alias points at a root: follow chains
        for name, target in list(self.aliases.items()):
            seen = {name}
            while target in self.aliases and target not in seen:
                seen.add(target)
                target = self.aliases[target]
            self.aliases[name] = target
        countries = country_names()
        self.kept_countries = {
            key
            for kind, key in self._active
            if kind == "LOCATION"
            and key in countries
            and key not in self.residences
            and {k for k, _ in self.surfaces.get(key, ())} == {"LOCATION"}
        }
        self._gazetteer = None
        self._resolved = True

    def _entity(self, kind: str, key: str) -> tuple[str, str]:
        return self.aliases.get((kind, key), (kind, key))

    def _placeholder(self, kind: str, key: str) -> str:
        entity = self._entity(kind, key)
        if entity not in self.placeholders:
            self.counters[entity[0]] += 1
            self.placeholders[entity] = f"[{entity[0]}_{self.counters[entity[0]]}]"
        return self.placeholders[entity]

    def _choose(self, candidates: set[tuple[str, str]], text: str, start: int, end: int) -> tuple[str, str]:
        """Which of the entities sharing a surface this mention names (person vs place)."""
        kinds = {kind for kind, _ in candidates}
        if len(kinds) == 1:
            return sorted(candidates)[0]
        before = re.findall(r"[\w']+", text[:start].lower())[-1:]
        after = text[end:]
        by_kind = {kind: entity for kind, entity in sorted(candidates)}
        if "LOCATION" in by_kind and (set(before) & _PLACE_BEFORE or _PLACE_AFTER.match(after)):
            return ("LOCATION", by_kind["LOCATION"][1])
        if "PERSON" in by_kind and (set(before) & _PERSON_BEFORE or _PERSON_AFTER.match(after)):
            return ("PERSON", by_kind["PERSON"][1])
        kind = "PERSON" if "PERSON" in by_kind else sorted(by_kind)[0]
        return (kind, by_kind[kind][1])

    def _gazetteer_matches(self, text: str) -> list[Entity]:
        if not self._resolved:
            self.resolve()
        if self._gazetteer is None:
            surfaces = sorted(self.surfaces, key=len, reverse=True)
            if not surfaces:
                return []
            alternation = "|".join(re.escape(s).replace(r"\ ", r"\s+") for s in surfaces)
            self._gazetteer = re.compile(rf"(?<![\w@#/.-])(?:{alternation})(?![\w@-]|\.\w)")
        found = []
        folded = _fold(text)
        for m in self._gazetteer.finditer(folded):
            surface = text[m.start() : m.end()]
            candidates = self.surfaces.get(m.group(0)) or self.surfaces.get(_key(m.group(0)), set())
            if not candidates:
                continue
            kind, key = self._choose(candidates, text, m.start(), m.end())
            if kind in _NAMED_KINDS and not _plausible_name(surface, text, m.start(), m.end(), kind):
                continue
            found.append(Entity(m.start(), m.end(), kind, surface, "gazetteer"))
        return found

    def redact(self, text: str, entities: Sequence[Entity]) -> tuple[str, list[tuple[Entity, str]]]:
        """Replace ``entities`` plus every gazetteer surface in ``text``.

        Returns ``(text, applied)``: ``applied`` pairs each replaced span with its replacement.
        """
        gazetteer = self._gazetteer_matches(text)
        # a detector's span wins; a gazetteer hit at the same place corrects its person/place label
        by_span = {(g.start, g.end): g for g in gazetteer}
        chosen = []
        for entity in entities:
            hit = by_span.get((entity.start, entity.end))
            if hit is not None and hit.kind in _NAMED_KINDS and entity.kind in _NAMED_KINDS:
                entity = Entity(entity.start, entity.end, hit.kind, entity.text, entity.source)
            if entity.kind in _NAMED_KINDS and not _plausible_name(
                entity.text, text, entity.start, entity.end, entity.kind
            ):
                continue
            chosen.append(entity)
        spans = [_with_house_number(span, text) for span in resolve_overlaps([*chosen, *gazetteer])]
        pieces: list[str] = []
        applied: list[tuple[Entity, str]] = []
        cursor = 0
        for span in spans:
            if span.kind == "DATE":
                replacement = generalize_date(span.text)
            else:
                key = _kind_key(span.kind, span.text)
                candidates = self.surfaces.get(key, set())
                same_kind = {c for c in candidates if c[0] == span.kind}
                if same_kind:
                    kind, key = sorted(same_kind)[0]
                elif candidates and span.kind in _NAMED_KINDS:  # its evidence gave the surface another kind
                    kind, key = self._choose(candidates, text, span.start, span.end)
                else:
                    kind = span.kind
                if kind == "LOCATION" and key in self.kept_countries:
                    continue  # a country is no direct identifier (see :func:`country_names`)
                replacement = self._placeholder(kind, key)
            pieces.append(text[cursor : span.start])
            pieces.append(replacement)
            applied.append((span, replacement))
            cursor = span.end
        pieces.append(text[cursor:])
        return "".join(pieces), applied


_HOUSE_NUMBER_BEFORE = re.compile(r"(?:^|(?<=[\s,(]))(\d{1,5}[A-Za-z]?)\s+$")


def _with_house_number(span: Entity, text: str) -> Entity:
    """A street the recognizers found without its house number ("1188 Grand Concourse") takes the
    number: a multi-word place that is no known town, right after a 1–5 digit number."""
    if span.kind != "LOCATION" or len(span.text.split()) < 2 or _fold(span.text) in place_names():
        return span
    m = _HOUSE_NUMBER_BEFORE.search(text[: span.start])
    if m is None:
        return span
    return Entity(m.start(1), span.end, span.kind, text[m.start(1) : span.end], span.source)


#: Pattern sources that are exact formats (an NER span overlapping one is clipped to the words
#: outside it); the contextual recognizers (relation words, place names, workplaces) lose ties to NER.
_STRONG_SOURCES = frozenset({"pattern", "phonenumbers"})
_LEADING_VERB = re.compile(
    r"^(?:call|ring|text|email|ask|tell|message|visit|book|thank|invite|wish|suggest|remind|congratulate|"
    r"meet|hug|help|let|get|send|ping|phone)\s+",
    re.IGNORECASE,
)


_MODAL = re.compile(r"^(?:will|may|can|could|should|would|shall|must|does|did|do|is|are|was|were)\s+", re.I)


def _combine(text: str, patterns: Sequence[Entity], ner: Sequence[Entity]) -> list[Entity]:
    """Pattern matches plus NER entities; an NER span overlapping a pattern match keeps only the
    words outside it ("Manchester M20" beside the postcode "M20 3ED"); implausible or public
    named-entity spans are dropped before they can seed the gazetteer."""
    strong = [p for p in patterns if p.source in _STRONG_SOURCES]
    weak = [p for p in patterns if p.source not in _STRONG_SOURCES]
    kept: list[Entity] = []
    for entity in ner:
        modal = _MODAL.match(entity.text)
        if modal and public_mention(
            entity.text[modal.end() :], text, entity.start + modal.end(), entity.end, kind=entity.kind
        ):
            continue  # "Will Hanukkah overlap…": a question's verb and a holiday
        lead = _LEADING_VERB.match(entity.text)
        if lead and lead.end() < len(entity.text):
            entity = Entity(
                entity.start + lead.end(), entity.end, entity.kind, entity.text[lead.end() :], entity.source
            )
        overlapping = [p for p in strong if p.start < entity.end and p.end > entity.start]
        if overlapping:
            rest = entity
            for p in overlapping:
                if p.start <= rest.start < p.end:
                    rest = Entity(p.end, rest.end, rest.kind, text[p.end : rest.end], rest.source)
                elif rest.start < p.start < rest.end:
                    rest = Entity(rest.start, p.start, rest.kind, text[rest.start : p.start], rest.source)
            surface = rest.text.strip(" ,.;:'\"()")
            if len(surface) < 2 or not surface[0].isalpha() or rest.start >= rest.end:
                continue
            offset = rest.start + rest.text.find(surface)
            entity = Entity(offset, offset + len(surface), rest.kind, surface, rest.source)
        kept.append(entity)
    named = [
        e
        for e in [*strong, *kept, *weak]
        if e.kind not in _NAMED_KINDS or _plausible_name(e.text, text, e.start, e.end, e.kind)
    ]
    return resolve_overlaps(named)


def _plausible_name(surface: str, text: str, start: int, end: int, kind: str | None = None) -> bool:
    """False for a name-shaped span that is an everyday word in context.

    A lowercase everyday-word name ("will", "grace"), a capitalized one at the start of a sentence
    before a determiner or pronoun ("Will the…", "Grace period"), and a part of a hyphenated word
    ("Spider" in "Spider-Man") are not names; nor is a public mention (:func:`public_mention`).
    """
    if public_mention(surface, text, start, end, kind=kind) or _COMPOUND_TITLE.search(surface):
        return False
    if (end < len(text) and text[end] == "-" and text[end + 1 : end + 2].isalpha()) or (
        start > 0 and text[start - 1] == "-"
    ):
        return False
    key = _fold(surface)
    if key in _COMMON_WORD_NAMES:
        cued = _SOCIAL_BEFORE.search(text[:start]) or _RELATION_BEFORE.search(text[:start])
        if surface.islower() and not (cued and not _FUNCTION_NEXT.match(text[end:])):
            return False  # "grace period", "i will": but "a picnic with mark" names him
        sentence_start = not text[:start].strip() or text[:start].rstrip()[-1:] in ".!?:;\n"
        following = text[end:]
        if sentence_start and (
            _FUNCTION_NEXT.match(following)
            or (re.match(r"\s+[a-z]", following) and not _PERSON_AFTER.match(following))
        ):
            return False
    return True


@dataclass
class DeidentifiedRecord:
    """The published fields of one record after redaction, its decision and review entry."""

    record: RawPreferenceRecord
    fields: dict[str, str | list[str]]
    touched: dict[str, Counter[str]]
    action: Literal["publish", "withhold", "exclude"]
    reason: str
    replacements: list[Replacement] = field(default_factory=list)
    #: Named-entity spans the recognizer found but the de-identifier kept (public mentions,
    #: everyday words): offsets only, for the human reviewer to confirm.
    kept: list[dict[str, object]] = field(default_factory=list)

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
            "kept_for_review": self.kept,
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


def _withhold_reason(
    record: RawPreferenceRecord,
    fields: dict[str, str | list[str]],
    applied: dict[str, list[Entity]],
    policy: WithholdPolicy,
) -> str:
    """Why this comparison must be withheld under ``policy`` (``""``: publish it).

    ``bears_on_preference`` (A.4: withhold "if removing identifying or sensitive information changes
    the basis of a preference"): a typed placeholder keeps the entity and its relations, so a
    redaction withholds only when it erases the difference between the two responses, or when it
    generalizes a date inside the differing text whose exact value the participant's query or
    retrieved memories carry (the memory-conditioned response may be preferred for using it).
    ``differing_text`` withholds on any redaction in differing text; ``generalized_only`` on any
    date generalization there.
    """
    ranges_with, ranges_without = _differing_ranges(
        record.response_with_memory, record.response_without_memory
    )
    in_diff = [
        span
        for name, ranges in (
            ("response_with_memory", ranges_with),
            ("response_without_memory", ranges_without),
        )
        for span in applied[name]
        if any(span.start < end and span.end > start for start, end in ranges)
    ]
    if policy == "differing_text":
        return REASON_DIFFERING if in_diff else ""
    if policy == "generalized_only":
        return REASON_DIFFERING if any(span.kind == "DATE" for span in in_diff) else ""
    raw_differ = record.response_with_memory.strip().lower() != record.response_without_memory.strip().lower()
    published_with = str(fields["response_with_memory"]).strip().lower()
    if raw_differ and published_with == str(fields["response_without_memory"]).strip().lower():
        return REASON_ERASED
    context = _fold(" ".join([record.query, *record.retrieved_memories]))
    for span in in_diff:
        if span.kind == "DATE":
            digits = re.findall(r"\d+", span.text)
            if digits and all(re.search(rf"(?<!\d){d}(?!\d)", context) for d in digits):
                return REASON_GENERALIZED
    return ""


def _public_in_context(entity: Entity, text: str, public: set[str]) -> bool:
    """True when the span, alone or with up to three words before it, is (part of) a public name:
    "lotus" in "the white lotus" beside the public title "White Lotus"."""
    key = _key(entity.text)
    if _public_key(key, public):
        return True
    before = re.findall(r"[\w'\u00c0-\u024f-]+", _fold(text[: entity.start]))[-3:]
    return any(_public_key(" ".join([*before[i:], key]), public) for i in range(len(before)))


def _lowercase_words(records: Sequence[RawPreferenceRecord]) -> dict[str, set[str]]:
    """Per participant, the words the responses (model-written, with capitals) use in lowercase in
    mid-sentence: a name NER found that the responses also write in lowercase is a common word
    ("Jollof starts with…" beside "your nan's jollof")."""
    words: dict[str, set[str]] = defaultdict(set)
    for record in records:
        for text in (record.response_with_memory, record.response_without_memory):
            if not _CASED_TEXT.search(text):
                continue
            for m in re.finditer(r"(?<=[\s(\"'])[a-z\u00df-\u024f][\w'\u00df-\u024f-]*", text):
                if text[: m.start()].rstrip()[-1:] not in ".!?:;\n":
                    words[record.participant_id].add(_fold(re.sub(r"['\u2019]s$", "", m.group(0))))
    return words


def _common_phrase(key: str, common: set[str]) -> bool:
    """True when every word of ``key`` is written in lowercase by the responses (and it is not an
    everyday-word first name such as "will" or "hope", which have their own rule)."""
    tokens = key.split()
    return bool(tokens) and key not in _COMMON_WORD_NAMES and all(t in common for t in tokens)


def _public_key(key: str, public: set[str]) -> bool:
    """True when ``key`` is a public name, or two or more consecutive words of one ("bake off" of
    "great british bake off")."""
    if key in public:
        return True
    if len(key.split()) < 2:
        return False
    return any(f" {key} " in f" {name} " for name in public)


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
    policy: WithholdPolicy = "bears_on_preference",
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
    # a name used publicly anywhere in the participant's records ("play Stardew Valley or Hades") is
    # public in all of them
    public: dict[str, set[str]] = defaultdict(set)
    patterns = {text: find_patterns(text) for text in unique}
    countries = country_names()
    for (pid, _, text), ner_entities in zip(jobs, ner, strict=True):
        public[pid].update(media_titles(text))
        public[pid].update(_key(e.text) for e in ner_entities if e.kind == "PUBLIC")
        for entity in [*ner_entities, *patterns[text]]:
            if entity.kind not in _NAMED_KINDS:
                continue
            if entity.source in _OVERRIDABLE_SOURCES and public_mention(
                entity.text, text, entity.start, entity.end, kind=entity.kind
            ):
                public[pid].add(_key(entity.text))
            if entity.kind == "LOCATION" and _PLACE_CUE_BEFORE.search(text[: entity.start]):
                redactors[pid].placed.add(_key(entity.text))
            if entity.kind == "LOCATION" and residence_before(text, entity.start):
                if _key(entity.text) in countries:
                    redactors[pid].residences.add(_key(entity.text))
    common = _lowercase_words(records)
    ner_raw: dict[str, list[Entity]] = {}
    for (pid, slot, text), ner_entities in zip(jobs, ner, strict=True):
        if slot:
            ner_raw[slot] = [e for e in ner_entities if e.kind in _NAMED_KINDS]
        ner_entities = [
            e
            for e in ner_entities
            if e.kind != "PUBLIC"
            and not _public_in_context(e, text, public[pid])
            and not _common_phrase(_key(e.text), common[pid])
        ]
        cued = [
            e
            for e in patterns[text]
            if e.source not in _OVERRIDABLE_SOURCES or not _public_key(_key(e.text), public[pid])
        ]
        entities = _combine(text, cued, ner_entities)
        redactors[pid].learn(entities)
        # a cue's label for the very span NER also labelled ("my sister Sofía Ibarra", which NER calls
        # an organisation; "a trip to paris") is evidence for the resolver, though NER's span won
        redactors[pid].learn(
            [
                e
                for e in cued
                if any((c.start, c.end) == (e.start, e.end) and c.source != e.source for c in entities)
            ]
        )
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
            kept: list[dict[str, object]] = []
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
                for entity in ner_raw.get(f"{record.record_id}\0{name}", []):
                    if not any(entity.start < sp.end and entity.end > sp.start for sp in spans):
                        public_use = _key(entity.text) in public[pid]
                        kept.append(
                            {
                                "field": name,
                                "start": entity.start,
                                "end": entity.end,
                                "kind": entity.kind,
                                "why": "public mention" if public_use else "everyday word or title",
                            }
                        )
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
                reason = _withhold_reason(record, fields, applied, policy)
                if reason:
                    action = "withhold"
            results[record.record_id] = DeidentifiedRecord(
                record, fields, touched, action, reason, replacements, kept
            )
    return [results[record.record_id] for record in records]
