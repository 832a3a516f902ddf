"""De-identification of raw preference records (seed 003 Appendix A.4).

For each participant, identifiers found by the patterns, the named-entity recognizer, the
participant's own profile and a per-participant gazetteer (every surface already found anywhere in
that participant's records, plus the parts of multi-word person names) are replaced with typed
placeholders ``[PERSON_1]``, ``[ORGANIZATION_1]``, ``[LOCATION_1]``, … that stay the same across a
memory, its query and both responses; exact dates are generalized to month and year.

A comparison is **withheld** only when redaction changes the basis of its preference (A.4): under
policy ``"bears_on_preference"`` (the default) when redaction erases the difference between the two
responses, or generalizes a remembered or asked-for date inside the text where they differ and
the generalized date no longer reads as the remembered one (a typed, consistent placeholder keeps
the entity and its relations, so it does not withhold, and neither does a date generalized to the
same form in the memory or query and the response when no other date shares that form);
``"differing_text"`` withholds on any redaction in the differing text (the strict policy this
package used first) and ``"generalized_only"`` on any date generalization there. Every redaction
goes to a review record (field, offsets, kind, replacement, detector) for the human pass A.4
requires; it never reproduces the removed text. Entity resolution lives in
:mod:`dataset_builder.resolver`, the recognizers in :mod:`dataset_builder.detectors`,
:mod:`dataset_builder.entity_cues` and :mod:`dataset_builder.public`.

>>> from dataset_builder.preferences import RawPreferenceRecord
>>> record = RawPreferenceRecord(
...     record_id="r1", participant_id="p1", query="what should i get my sister priya?",
...     retrieved_memories=["user's sister Priya Shah works at monzo."],
...     response_with_memory="Priya might like a book.", response_without_memory="A book.",
...     generator="g", regime="ordinary", memory_position="A", preference="A_slightly_better")
>>> (result,) = deidentify_records([record], None)
>>> result.fields["query"], result.action
('what should i get my sister [PERSON_1]?', 'publish')
>>> result.fields["retrieved_memories"]
["user's sister [PERSON_1] works at [ORGANIZATION_1]."]
"""

from __future__ import annotations

import difflib
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from mirage_bench.structs import field_values

from .detectors import Entity, Recognizer, bare_street, find_patterns, generalize_date, route_names
from .entity_cues import (
    GREETINGS,
    NEVER_NAMES,
    domain_labels,
    extend_place_parts,
    find_domain_names,
    find_nicknames,
)
from .evidence import (
    acronym_or_code,
    articled_by_unaware,
    derived_noun,
    grounded,
    grounded_name,
    modifies_noun,
    own_words,
    sentence_bounds,
    spelled_acronyms,
    unaware_names,
)
from .lexical import (
    extend_known_names,
    find_cued_places,
    find_rare_places,
    find_short_names,
    rare_word_test,
    truecased_entities,
    writes_lowercase,
)
from .preferences import RawPreferenceRecord
from .public import (
    PUBLIC_AGENCIES,
    PUBLIC_ENTITIES,
    PUBLIC_SERVICES,
    alternatives,
    articled_words,
    country_names,
    landmark_name,
    media_titles,
    possessive_title_tail,
    public_mention,
    residence_before,
    trip_places,
    work_context,
)
from .resolver import (
    _CASED_TEXT,
    _COMMON_WORD_NAMES,
    _HONORIFIC_BEFORE,
    _NAMED_KINDS,
    _OVERRIDABLE_SOURCES,
    _PLACE_CUE_BEFORE,
    ParticipantRedactor,
    _combine,
    _fold,
    _key,
    tied_names,
    user_names,
)

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
    retrieved memories carry (the memory-conditioned response may be preferred for using it),
    unless that date is generalized alike there and in the response and no other date of the query,
    memories or memory-free response shares its published form: then the published response still
    visibly repeats the remembered date, as a consistent placeholder repeats a name.
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
    context_dates = [
        _date_value(span.text)
        for name, spans in applied.items()
        if not name.startswith("response_")
        for span in spans
        if span.kind == "DATE"
    ]
    without_dates = [
        _date_value(span.text) for span in applied["response_without_memory"] if span.kind == "DATE"
    ]
    for span in in_diff:
        if span.kind == "DATE":
            digits = re.findall(r"\d+", span.text)
            if digits and all(re.search(rf"(?<!\d){d}(?!\d)", context) for d in digits):
                if not _generalized_alike(_date_value(span.text), context_dates, without_dates):
                    return REASON_GENERALIZED
    return ""


def _date_value(text: str) -> tuple[str, tuple[int, ...]]:
    """A date's published form and its exact value (its numbers): "3 June" and "June 3rd" are one
    date, "June 3" and "June 5" two dates with one published form."""
    return generalize_date(text), tuple(sorted(int(d) for d in re.findall(r"\d+", text)))


def _generalized_alike(
    value: tuple[str, tuple[int, ...]],
    context: list[tuple[str, tuple[int, ...]]],
    without: list[tuple[str, tuple[int, ...]]],
) -> bool:
    """True when a response date the query or memories carry reads as they do once generalized, as
    a consistent placeholder does (A.4: replacements consistent "across a memory, its query, and both
    candidate responses"): the same date is in the context with the same published form, no other
    date there or in the memory-free response shares that form (which would hide which date the
    response used, or a wrong one)."""
    form = value[0]
    same_form = [c for c in context if c[0] == form]
    if value not in same_form:
        return False
    return all(c == value for c in same_form) and all(w == value for w in without if w[0] == form)


#: A government host ("canada.ca/…" is no person's site, nor "gov.uk", "impots.gouv.fr", "gob.mx").
_GOV_HOST = re.compile(r"(?:^|\.)(?:gov|gouv|gob|govt|gv|overheid|bund|admin)\.|\.gov$|^canada\.ca$")


def _public_url(url: str) -> bool:
    """True for the site of an agency or ID scheme ("ameli.fr"), of a government ("my.gov.au",
    "canada.ca") or a platform's home page ("instagram.com", not "instagram.com/ana.b"): no
    participant's own site."""
    host, _, path = re.sub(r"^(?:https?://)?(?:www\.)?", "", url.lower()).partition("/")
    labels = host.split(".")
    if len(labels) < 2:
        return False
    name = labels[-3] if len(labels) >= 3 and labels[-2] in ("co", "com", "gov", "org") else labels[-2]
    if _GOV_HOST.search(host) or (name in PUBLIC_AGENCIES and len(name) > 3):
        return True
    return name in PUBLIC_ENTITIES and not path.strip("/")  # "instagram.com/ana.b" names a person


def url_host(url: str) -> str:
    """The lowercase host of a web address, without a scheme, "www." or user part
    ("https://www.Shop.example.com/menu" → "shop.example.com")."""
    host = re.sub(r"^[a-z][a-z0-9+.-]*://", "", url.strip().lower()).split("/")[0].split("@")[-1]
    return host.removeprefix("www.")


def host_written(url: str, text: str) -> bool:
    """True when ``text`` writes the host of ``url`` itself (in any case, as a whole host, with or
    without "www." or a path, or as an e-mail address's domain): "see kofibakes.com/menu" writes
    the host of "kofibakes.com", while "apartments near the park" does not write "apartments.com"."""
    host = url_host(url)
    if not host:
        return False
    # also as an e-mail address's domain ("ana@kelvorabakes.com" writes "kelvorabakes.com")
    pattern = rf"(?<![\w.-])(?:[a-z][a-z0-9+.-]*://)?(?:www\.)?{re.escape(host)}(?![\w-]|\.\w)"
    return re.search(pattern, text.lower()) is not None


#: A name written as a bare host ("Apartments.com"), which NER may call an organisation.
_HOST_SHAPE = re.compile(r"[^\W_][\w-]*(?:\.[\w-]+)*\.[a-z]{2,12}", re.IGNORECASE)


def _url_grounded(url: str, slot: str, own: frozenset[str], own_text: str) -> bool:
    """True when a response's web address can have come from the participant. The memory-free
    response saw only the query, so a site it names is its own knowledge unless the participant's
    texts write that very host ("fonasa.cl" beside "inscribirme en fonasa" is the agency's site);
    the memory-aware response's is grounded by any word of it the participant wrote."""
    if slot.endswith("\0response_without_memory"):
        return host_written(url, own_text)
    return grounded(url, own)


def _public_word(key: str, public: set[str]) -> bool:
    """True for a name public for the participant or an agency, ID scheme or platform anywhere."""
    return key in public or (key in PUBLIC_AGENCIES and len(key) > 3) or key in PUBLIC_ENTITIES


#: "My" of several languages, before a public service's name ("Mijn Belastingdienst").
_POSSESSIVES = frozenset("my mijn mein meine mon ma mi mio mia min mitt meu minha moj moje".split())


def _public_in_context(entity: Entity, text: str, public: set[str]) -> bool:
    """True when the span, alone or with up to three words before it, is (part of) a public name:
    "lotus" in "the white lotus" beside the public title "White Lotus"."""
    key = _key(entity.text)
    if _public_key(key, public):
        return True
    tail = possessive_title_tail(entity.text, text[entity.end :])
    if tail and _key(text[entity.start : entity.end + len(tail)]) in public:
        return True  # "Schitt" of the public title "Schitt's Creek"
    words = key.split()
    raw_words = entity.text.split()
    if len(words) >= 2 and len(raw_words) == len(words):
        # a public name and the chat words NER ran on into ("coupang pls", "strava bio")
        if _public_word(words[0], public) and all(w.islower() for w in raw_words[1:]):
            return True
        # a public platform's own product ("Bolt Food", "M-Pesa Paybill"), unless the participant
        # works there (an employer is no public name for them)
        if (
            entity.kind == "ORGANIZATION"
            and len(words) == 2
            and words[0] in public
            and words[0] in PUBLIC_SERVICES | PUBLIC_ENTITIES
            and raw_words[0][:1].isupper() == raw_words[1][:1].isupper()
        ):
            return True
        # a public service's own "my" page ("Mijn Belastingdienst", "My Account" of a public name)
        if words[0] in _POSSESSIVES and _public_word(" ".join(words[1:]), public):
            return True
    before = re.findall(r"[\w'\u00c0-\u024f-]+", _fold(text[: entity.start]))[-3:]
    return any(
        _public_key(phrase, public) or phrase in PUBLIC_AGENCIES
        for phrase in (" ".join([*before[i:], key]) for i in range(len(before)))
    )  # "Vitale" of "carte Vitale"


def _lowercase_words(records: Sequence[RawPreferenceRecord]) -> dict[str, set[str]]:
    """Per participant, the words the responses (model-written, with capitals) use in lowercase in
    mid-sentence: a name NER found that the responses also write in lowercase is a common word
    ("Jollof starts with…" beside "your nan's jollof"); also the lowercase words a memory-free
    response spells as acronyms (:func:`dataset_builder.evidence.spelled_acronyms`), the
    capitalised words only a memory-free response uses (:func:`dataset_builder.evidence.unaware_names`)
    or writes after an article (:func:`dataset_builder.evidence.articled_by_unaware`)
    and the rivals offered beside a public name (:func:`dataset_builder.public.alternatives`)."""
    words: dict[str, set[str]] = defaultdict(set)
    for record in records:
        for text in (record.response_with_memory, record.response_without_memory):
            if not _CASED_TEXT.search(text):
                continue
            for m in re.finditer(r"(?<=[\s(\"'])[a-z\u00df-\u024f][\w'\u00df-\u024f-]*", text):
                if text[: m.start()].rstrip()[-1:] not in ".!?:;\n":
                    words[record.participant_id].add(_fold(re.sub(r"['\u2019]s$", "", m.group(0))))
    # a word the participant types in lowercase that a memory-free response spells as an acronym
    # ("is pzu or warta cheaper" / "neither PZU nor Warta"): an insurer, exam or agency
    by_participant: dict[str, list[RawPreferenceRecord]] = defaultdict(list)
    for record in records:
        by_participant[record.participant_id].append(record)
    lexicon = PUBLIC_SERVICES | PUBLIC_ENTITIES | {k for k in PUBLIC_AGENCIES if len(k) > 3}
    for pid, group in by_participant.items():
        own = [t for r in group for name, t in texts_of(r) if not name.startswith("response")]
        own += [t for r in group for t in (*r.event_memories, *r.participant_profile.values(), r.note or "")]
        everything = [t for r in group for _, t in texts_of(r)]
        unaware = [r.response_without_memory for r in group]
        spelled = spelled_acronyms(own, unaware, everything)
        words[pid] |= spelled | unaware_names(own, unaware) | articled_by_unaware(unaware, everything)
        # a rival offered beside a public name ("is kvz or dorna cheaper")
        words[pid] |= alternatives(everything, spelled | lexicon)
    return words


def _common_phrase(key: str, common: set[str]) -> bool:
    """True when every word of ``key`` is written in lowercase by the responses (and it is not an
    everyday-word first name such as "will" or "hope", which have their own rule)."""
    tokens = key.split()
    if len(tokens) >= 2 and tokens[0] in _LEADING_ARTICLES:
        tokens = tokens[1:]  # "el rut", "the itr": the article NER ran on into
    return bool(tokens) and key not in _COMMON_WORD_NAMES and all(t in common for t in tokens)


#: Articles of several languages that NER may take into a span before a common word ("El RUT").
_LEADING_ARTICLES = frozenset("the a an el la le les los las il lo der die das het de".split())


def _public_key(key: str, public: set[str]) -> bool:
    """True when ``key`` is a public name, or two or more consecutive words of one ("bake off" of
    "great british bake off")."""
    if key in public:
        return True
    if len(key.split()) < 2:
        return False
    return any(f" {key} " in f" {name} " for name in public)


#: Before an acronym that is a place whatever NER calls it: "Victoria, TX", "the drive from SA".
_ACRONYM_PLACE_BEFORE = re.compile(r"\b(?:from|near|around|outside)\s+$", re.IGNORECASE)
#: A two-letter state or province after a town and a comma ("Victoria, TX").
_STATE_AFTER_TOWN = re.compile(r"[^\W\d_]{3},\s*$")


#: A model year before a name: the name is a vehicle model ("a 2017 Tacoma"), not a place.
_MODEL_YEAR_BEFORE = re.compile(
    r"\b(?:a|an|my|his|her|our|their|the|your)\s+(?:19|20)\d\d\s+$", re.IGNORECASE
)


#: An article or quantifier right before a name: people's names take none ("the Finanzamt").
_ARTICLE_BEFORE = re.compile(r"\b(?:a|an|the|every|each|any)\s+$", re.IGNORECASE)


#: Kinship words (of several languages) before a name: the name is that relative's.
_KINSHIP_BEFORE = re.compile(
    r"^(?:nonna|nonno|oma|opa|lola|lolo|nanay|tatay|abuela|abuelo|mormor|morfar|farmor|farfar|babcia|"
    r"dziadek|yiayia|halmeoni|halabeoji|tante|oncle|tia|tio|auntie|aunty|aunt|uncle|mamie|bibi|bubbe|"
    r"vovo|avo|bestemor|bestefar)\s+"
)


#: Greetings and closings of several languages: never a name, and not part of the name after them
#: ("Hej Solrosen!", "Saludos,").
_GREETINGS = frozenset(GREETINGS) | frozenset(
    """hejsan hoi ola salve salut servus moin ahoj czesc szia merhaba annyeong howdy greetings saludos
    abrazos besos groetjes groeten halsningar mvh cheers thanks tack gracias grazie merci danke
    obrigado obrigada cordialmente atentamente regards bises baci kisses xoxo""".split()
)


def _without_greeting(entity: Entity) -> Entity | None:
    """A named span without the greeting or closing word it starts with ("Hej Solrosen" →
    "Solrosen"); ``None`` for a span that is only such words ("Saludos")."""
    if entity.kind not in _NAMED_KINDS:
        return entity
    words = list(re.finditer(r"[^\W\d_]+", entity.text))
    if not words or _fold(words[0].group(0)) not in _GREETINGS:
        return entity
    rest = next((w for w in words if _fold(w.group(0)) not in _GREETINGS), None)
    if rest is None:
        return None
    return Entity(
        entity.start + rest.start(), entity.end, entity.kind, entity.text[rest.start() :], entity.source
    )


def _without_honorific(entity: Entity) -> Entity:
    """A person span without the honorific or kinship word before the name ("Mamie Jeanne" →
    "Jeanne", "Doña Célia" → "Célia"): the word is common, the name identifies. A place or
    organisation span that starts with one is that person ("Oma Griet's" → "Griet")."""
    if entity.kind not in ("PERSON", "LOCATION", "ORGANIZATION"):
        return entity
    m = _HONORIFIC_BEFORE.match(_fold(entity.text))
    if not m or m.end() >= len(entity.text):
        return entity
    if entity.kind != "PERSON" and not _KINSHIP_BEFORE.match(_fold(entity.text)):
        return entity  # "Don Quijote" the shop, "Dom Pedro" the street
    # a kinship word or honorific before a name makes it a person whatever NER called it
    # ("Nonna Pina's" labelled a place)
    return Entity(entity.start + m.end(), entity.end, "PERSON", entity.text[m.end() :], entity.source)


def _is_response(slot: str) -> bool:
    """True for a model-written response field (``slot`` is ``record_id\0field``)."""
    return slot.split("\0")[-1].startswith("response")


#: The memories' third-person subject ("user's car is a vw golf"): never a name, whatever NER says.
_SUBJECT_WORDS = frozenset({"user", "the user"})


#: How far (characters) an address may be from a place on its line to count as its neighbour.
_ADDRESS_REACH = 50


def _weak_ner(
    entity: Entity,
    text: str,
    found: Sequence[Entity],
    in_response: bool,
    own: frozenset[str],
    *,
    addresses: Sequence[Entity] = (),
    public: set[str] | frozenset[str] = frozenset(),
) -> bool:
    """True for a span only NER found that names nobody private.

    In a response, one that none of the participant's own words grounds ("the Peak District"
    suggested for a weekend away), unless it is a person or place in a sentence that names one of
    the participant's own places ("Osaka is great; … around Kuromon Market": a place near theirs,
    which NER may call a person), unless that place is ``public`` for them (a trip's destination:
    "see Mount Quorra … hostels in Velmora"). Anywhere, an acronym or code NER calls an organisation or person
    ("UTR", "IR3"), except where a place stands ("Victoria, TX"). See
    :mod:`dataset_builder.evidence`.
    """
    if entity.kind not in _NAMED_KINDS:
        return False
    if _key(entity.text) in _SUBJECT_WORDS:
        return True  # "user's sv-nummer is …": the memories' own subject, which NER may call a firm
    if derived_noun(entity.text):
        return True  # "the Meisterprüfung", "your Lohnsteuerbescheinigung": a German abstract noun
    if _MODEL_YEAR_BEFORE.search(text[: entity.start]):
        return True
    if _HONORIFIC_BEFORE.fullmatch(_fold(entity.text) + " "):
        return True  # a kinship word or honorific alone ("mamie's address", "for my abuela")
    if in_response and not grounded_name(entity.text, own):
        if entity.kind == "ORGANIZATION" or landmark_name(entity.text):
            return True  # a sight the model names by itself ("Brask Park"), also near their town
        start, end = sentence_bounds(text, entity.start, entity.end)
        # an address the participant gave, on the span's line and a few words away, is as near as
        # its sentence
        # ("Calle Francisco Sosa 214, Col. Del Carmen, …, Ciudad de México")
        line_start = text.rfind("\n", 0, entity.start) + 1
        line_end = text.find("\n", entity.end) % (len(text) + 1)
        near = [o for o in found if start <= o.start < end]
        near += [
            o
            for o in addresses
            if o.source == "pattern"
            and line_start <= o.start < line_end
            and max(o.start - entity.end, entity.start - o.end) <= _ADDRESS_REACH
        ]
        # a place public for the participant (a trip's destination, "hostels in Velmora") ties no
        # sight near it to them
        return not any(
            other.kind == "LOCATION"
            and other is not entity
            and grounded_name(other.text, own)
            and _key(other.text) not in public
            for other in near
        )
    return (
        entity.kind != "LOCATION"
        and acronym_or_code(entity.text)
        and not (_ACRONYM_PLACE_BEFORE.search(text[: entity.start]) and not modifies_noun(text[entity.end :]))
        and not (len(entity.text) == 2 and _STATE_AFTER_TOWN.search(text[: entity.start]))
    )


def _jobs_by_participant(jobs: Sequence[tuple[str, str, str]]) -> dict[str, list[tuple[str, str, str]]]:
    """The ``(participant, slot, text)`` jobs grouped by participant."""
    grouped: dict[str, list[tuple[str, str, str]]] = defaultdict(list)
    for job in jobs:
        grouped[job[0]].append(job)
    return grouped


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
    if recognizer is not None and found:  # places typed in lowercase, found on a truecased copy
        found = truecased_entities(found, recognizer, stop=NEVER_NAMES)
    ner = [found.get(text, []) for _, _, text in jobs]
    jobs_by_pid = _jobs_by_participant(jobs)  # the jobs are fixed from here on
    detected: dict[str, list[Entity]] = {}
    redactors: dict[str, ParticipantRedactor] = defaultdict(ParticipantRedactor)
    for pid, group in by_participant.items():
        for record in group:  # the participant's own profile names the kinds first
            redactors[pid].learn(_profile_entities(record))
    # a name used publicly anywhere in the participant's records ("play Stardew Valley or Hades") is
    # public in all of them
    public: dict[str, set[str]] = defaultdict(set)
    # the names NER alone called titles or products: no match for a name typed as an institution
    # ("Bright Stars Montessori", which the small model calls a work of art)
    ner_public: dict[str, set[str]] = defaultdict(set)
    articled: dict[str, set[str]] = defaultdict(set)
    employers: dict[str, set[str]] = defaultdict(set)
    patterns = {text: find_patterns(text) for text in unique}
    # a named route ("the Pennine Way") anywhere in the participant's texts is public in all of them
    routes: dict[str, set[str]] = defaultdict(set)
    countries = country_names()
    # a name NER calls a person, organisation or place in the participant's own words is not made
    # public by NER calling it a title in a response ("your Kilimani building" beside "lives in Kilimani")
    own_named: dict[str, set[str]] = defaultdict(set)
    place_keys: dict[str, set[str]] = defaultdict(set)
    cued_persons: dict[str, set[str]] = defaultdict(set)
    for pid, _, text in jobs:
        cued_persons[pid].update(_key(e.text) for e in patterns[text] if e.kind == "PERSON")
    persons: dict[str, set[str]] = defaultdict(set)
    for (pid, slot, _), ner_entities in zip(jobs, ner, strict=True):
        if not _is_response(slot):
            own_named[pid].update(_key(e.text) for e in ner_entities if e.kind in _NAMED_KINDS)
        # the words of a person's name, also one NER calls an organisation ("Paris Hendricks"; not a
        # run-on clause NER calls one, "o joão quer viajar pra Floripa")
        persons[pid].update(
            _key(e.text)
            for e in ner_entities
            if e.kind == "PERSON" or (e.kind == "ORGANIZATION" and 2 <= len(e.text.split()) <= 3)
        )
        place_keys[pid].update(_key(e.text) for e in ner_entities if e.kind == "LOCATION")
    for (pid, slot, text), ner_entities in zip(jobs, ner, strict=True):
        public[pid].update(media_titles(text))
        routes[pid].update(_key(name) for name in route_names(text))
        titles = [
            _key(e.text)
            for e in ner_entities
            if e.kind == "PUBLIC" and not (_is_response(slot) and _key(e.text) in own_named[pid])
        ]
        public[pid].update(titles)
        ner_public[pid].update(titles)
        # a "person" that takes an article anywhere in the participant's text is a common noun or a
        # title ("a Steuernummer", "the Finanzamt", "a Bedouin camp", "the Tamil way")
        articled[pid].update(
            _key(e.text)
            for e in ner_entities
            if e.kind == "PERSON" and _ARTICLE_BEFORE.search(text[: e.start])
        )
        # a name after a model year is a vehicle model in all the participant's text ("a 2017 Tacoma")
        public[pid].update(_key(e.text) for e in ner_entities if _MODEL_YEAR_BEFORE.search(text[: e.start]))
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
            if entity.kind in _NAMED_KINDS:  # a trip's destination, unless a text anchors it to them
                redactors[pid].note_place(_key(entity.text), text, entity.start, entity.end)
    # a shop or app used by millions is public for the participant, unless their texts tie it to
    # someone's work anywhere ("i work nights at tesco", "ana from glovo asked")
    for pid, _, text in jobs:
        folded = _fold(text)
        for key in PUBLIC_SERVICES:
            if key not in folded:
                continue
            for m in re.finditer(rf"(?<!\w){re.escape(key)}(?!\w)", folded):
                public[pid].add(key)
                if work_context(text, m.start(), m.end()):
                    employers[pid].add(key)
    # a sight or destination the participant names as a trip's, never near a home, family or work
    # ("a trip to petra", "2 days for Wadi Rum") is public for them (see public.trip_places)
    for pid, jobs_of in jobs_by_pid.items():
        name_parts = {part for key in persons[pid] for part in key.split()}
        public[pid] |= trip_places([text for _, _, text in jobs_of], place_keys[pid] - name_parts)
    for pid in public:
        public[pid] -= employers[pid]
    for pid, keys in routes.items():
        public[pid] |= keys
    # a one-word "person" written after an article anywhere in the participant's texts, also where
    # NER did not label it ("the Elterngeld thing"), unless a cue names it a person or it is a word
    # of a longer name
    for pid, jobs_of in jobs_by_pid.items():
        name_parts = {part for key in persons[pid] if " " in key for part in key.split()}
        candidates = {key for key in persons[pid] if " " not in key} - name_parts - cued_persons[pid]
        articled[pid] |= articled_words([text for _, _, text in jobs_of], candidates)
    for pid, _, text in jobs:  # nicknames the texts tie to a name ("Jakub 'Kuba' Nowak")
        redactors[pid].note_text(text)
        for nick, full in find_nicknames(text):
            redactors[pid].learn(
                [
                    Entity(0, len(nick), "PERSON", nick, "nickname"),
                    Entity(0, len(full), "PERSON", full, "nickname"),
                ]
            )
            redactors[pid].nicknames.add((_key(nick), _key(full)))
    common = _lowercase_words(records)
    # the participant's own words: what a model-written response can have learnt from them
    own = {
        pid: own_words(text for (_, slot, text) in jobs_by_pid[pid] if not _is_response(slot))
        for pid in by_participant
    }
    # a date the memory-free response names that none of the participant's own texts carries is
    # general knowledge ("the filing deadline is 30 June"), in both responses of that record
    own_text = {
        pid: " ".join(text for (_, slot, text) in jobs_by_pid[pid] if not _is_response(slot))
        for pid in by_participant
    }
    general_dates: dict[str, set[tuple[str, tuple[int, ...]]]] = defaultdict(set)
    for pid, group in by_participant.items():
        for record in group:
            values = {
                _date_value(e.text)
                for e in patterns[record.response_without_memory]  # found once per text above
                if e.kind == "DATE"
                and not any(
                    re.search(rf"(?<!\d){d}(?!\d)", own_text[pid]) for d in re.findall(r"\d+", e.text)
                )
            }
            for name in ("response_with_memory", "response_without_memory"):
                general_dates[f"{record.record_id}\0{name}"] = values
    # likewise a street the memory-free response names without a number that no word of the
    # participant's grounds ("live jazz on Calder Street"): the model's own knowledge
    general_streets: dict[str, set[str]] = defaultdict(set)
    for pid, group in by_participant.items():
        for record in group:
            keys = {
                _key(e.text)
                for e in patterns[record.response_without_memory]
                if e.kind == "LOCATION" and bare_street(e.text) and not grounded_name(e.text, own[pid])
            }
            for name in ("response_with_memory", "response_without_memory"):
                general_streets[f"{record.record_id}\0{name}"] = keys
    public_not_ner = {pid: public[pid] - ner_public[pid] for pid in by_participant}
    ner_raw: dict[str, list[Entity]] = {}
    combined: dict[str, list[tuple[str, list[Entity]]]] = defaultdict(list)
    for (pid, slot, text), ner_entities in zip(jobs, ner, strict=True):
        if slot:
            ner_raw[slot] = [e for e in ner_entities if e.kind in _NAMED_KINDS]
        raw_ner = ner_entities
        ner_entities = [
            e
            for e in map(_without_honorific, filter(None, map(_without_greeting, ner_entities)))
            if e.kind != "PUBLIC"
            and not _public_in_context(e, text, public[pid])
            and not _common_phrase(_key(e.text), common[pid])
            and not _weak_ner(
                e,
                text,
                ner_entities,
                _is_response(slot),
                own[pid],
                addresses=patterns[text],
                public=public[pid],
            )
            and not (e.kind == "PERSON" and _key(e.text) in articled[pid])
            and not (
                _HOST_SHAPE.fullmatch(e.text) and not _url_grounded(e.text, slot, own[pid], own_text[pid])
            )
        ]
        cued = [
            e
            for e in map(_without_honorific, filter(None, map(_without_greeting, patterns[text])))
            if not (e.kind == "PERSON" and _HONORIFIC_BEFORE.fullmatch(_fold(e.text) + " "))
            and not (
                e.kind == "PERSON" and e.source in _OVERRIDABLE_SOURCES and _key(e.text) in articled[pid]
            )
            and not (
                e.kind == "URL"
                and _is_response(slot)
                and not _url_grounded(e.text, slot, own[pid], own_text[pid])
            )
            and not (e.kind == "URL" and _public_url(e.text))
            and not (e.kind == "LOCATION" and _key(e.text) in routes[pid])
            # a town's name in lowercase in a model-written response that capitalises its sentences
            # is the everyday word ("book lunch in advance", "meet in reading groups")
            and not (
                e.source == "places"
                and _is_response(slot)
                and e.text.islower()
                and not writes_lowercase(text)
            )
            and not (e.kind == "DATE" and _is_response(slot) and _date_value(e.text) in general_dates[slot])
            and not (e.kind == "LOCATION" and _is_response(slot) and _key(e.text) in general_streets[slot])
            # a town's name that is a word of a longer name NER found in a response ("from Kelso
            # Brannock Airport", where "Kelso" is also a town) is no town of its own there
            and not (
                e.source == "places"
                and _is_response(slot)
                and any(o.start <= e.start and o.end > e.end and o.kind in _NAMED_KINDS for o in raw_ner)
            )
        ]
        cued = [
            e
            for e in cued
            if e.source not in _OVERRIDABLE_SOURCES
            or not _public_key(_key(e.text), public_not_ner[pid] if e.source == "orgtype" else public[pid])
        ]
        entities = _combine(text, cued, ner_entities)
        redactors[pid].learn(entities)
        combined[pid].append((text, entities))
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
    for pid, texts in combined.items():  # names the texts tie together ("shazza (sharon kealy)")
        user = next((name for text, spans in texts for name in user_names(text, spans)), None)
        known = {key for kind, key in redactors[pid].mentions if kind == "PERSON"}
        for text, spans in dict.fromkeys((t, tuple(f)) for t, f in texts):
            for nick, full in tied_names(text, spans, user, known):
                redactors[pid].learn([Entity(0, 0, "PERSON", n, "nickname") for n in (nick, full)])
                redactors[pid].nicknames.add((nick, full))
    # the label of a participant's own web address, written as a name elsewhere ("for Crumbhaus")
    labels = {
        pid: domain_labels(
            [e.text for _, slot, _ in jobs_of for e in detected.get(slot, []) if e.kind == "URL"]
        )
        - PUBLIC_ENTITIES
        - PUBLIC_SERVICES
        - public[pid]
        for pid, jobs_of in jobs_by_pid.items()
    }  # not a platform's own name ("github.com/ana" names ana, not github)
    # the keys of one kind the participant's gazetteer holds, rebuilt only when it has grown (its
    # mentions are only ever added to, so an unchanged size is an unchanged set)
    kind_keys: dict[tuple[str, str], tuple[int, set[str]]] = {}

    def keys_of(pid: str, kind: str) -> set[str]:
        mentions = redactors[pid].mentions
        size, keys = kind_keys.get((pid, kind), (-1, set()))
        if size != len(mentions):
            keys = {key for k, key in mentions if k == kind}
            kind_keys[(pid, kind)] = (len(mentions), keys)
        return keys

    for pid, slot, text in jobs:
        if slot:
            places = keys_of(pid, "LOCATION")
            detected[slot] = extend_place_parts(text, detected[slot], places)
            detected[slot] = find_domain_names(text, detected[slot], labels[pid])
            redactors[pid].learn([e for e in detected[slot] if e.source in ("domain", "placepart")])
    rare = rare_word_test(recognizer)
    for pid, slot, text in jobs:
        if not slot:
            continue
        known = keys_of(pid, "PERSON")
        extended = detected[slot]
        if rare is not None:  # "denise okonkwo" beside a known "Denise"; "a party in kilimani"
            extended = extend_known_names(text, extended, known, rare, stop=NEVER_NAMES)
            extended = find_rare_places(text, extended, rare, stop=NEVER_NAMES)
        # "Ani, try this" beside a known "Anika"; "from home in Obs" in the participant's own words
        extended = find_short_names(text, extended, ner_raw.get(slot, []), known)
        if not _is_response(slot):
            extended = find_cued_places(
                text, extended, rare, taken=found.get(text, []), stop=NEVER_NAMES, public=public[pid]
            )
        redactors[pid].learn([e for e in extended if e.source in ("namepart", "rareplace")])
        detected[slot] = extended
    for pid, slot, text in jobs:
        if slot:
            redactors[pid].note_units(text, detected[slot])

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
