"""Word rarity, truecasing and name parts: identifiers that writers type in lowercase.

An NER model leans on capital letters. A participant who writes "user's manager is denise okonkwo"
or "works at access bank, ikeja branch" gives it none. Two steps here use one signal, whether a
word is *rare as an English word*, read from the spaCy pipeline's own vocabulary: a word without a
vector in ``en_core_web_md`` (514k keys; "okonkwo", "ikeja", "tolulope" have none, while "kitchen",
"jollof", "braai", "reyes" have one). It costs nothing: the pipeline is already loaded.

* :func:`truecased_entities` — in a text whose sentences start in lowercase, the rare lowercase
  words are capitalised on a copy, the copy goes through the recognizer, and the *places* it finds
  there over a capitalised word are added, mapped back to the original offsets (capitalising one
  letter keeps every offset). Only places: on the copy the model also calls foreign common words
  persons ("imposto de renda", "goshugi") and organisations ("vakantiedagen"), while people and
  employers written in lowercase have their own cues.
* :func:`extend_known_names` — a person the participant's texts already name, followed by a rare
  lowercase word, is that person's full name ("denise okonkwo" where "Denise" is known).
* :func:`find_cued_places` — a capitalised word after "in"/"near"/"from" that NER left unlabelled
  is a place when its lowercase form is rare or a home or workplace stands before ("from home in
  Vell"); :func:`find_short_names` — a short form NER found of a known first name is that person.

On the eight planted corpora in ``tests/fixtures/dataset/``, ``wordfreq``'s Zipf frequency (below
3) as the rarity test found the same identifiers as the vocabulary and lost more must-keep phrases
("scones", "sourdough" and "chama" are rare words there), so it is not used.

>>> truecased("user's manager is denise okonkwo.", lambda w: w in {"denise", "okonkwo"})
"user's manager is Denise Okonkwo."
>>> truecased("Dinner with Ana in Porto.", lambda w: True) is None  # a writer who capitalises
True
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from typing import Any

from .detectors import Entity, Recognizer

__all__ = [
    "extend_known_names",
    "find_cued_places",
    "find_rare_places",
    "find_short_names",
    "rare_word_test",
    "truecased",
    "truecased_entities",
    "writes_lowercase",
]

#: Lowercase words: letters (Latin with accents), apostrophes and hyphens inside; not part of an
#: e-mail address, handle, URL or file name.
_WORD = re.compile(
    r"(?<![\w@#/.])[a-z\u00df-\u024f][a-z\u00df-\u024f'\u2019-]*[a-z\u00df-\u024f](?![\w@/]|\.\w)"
)
#: The first letter of each sentence.
_SENTENCE_START = re.compile(r"(?:^|[.!?]\s+|\n)\s*[\"'(]?(?P<c>[^\W\d_])")
#: The kinds a truecased copy may add (see the module docstring).
_KINDS = frozenset({"LOCATION"})


def _spacy_vocab(recognizer: Recognizer) -> Any:
    """The vocabulary of the loaded spaCy pipeline behind ``recognizer``, if it has word vectors."""
    vocab = getattr(recognizer, "vocab", None)  # SpacyRecognizer.vocab; other recognizers have none
    if vocab is None or not len(getattr(vocab, "vectors", ())):
        return None
    return vocab


def rare_word_test(recognizer: Recognizer | None) -> Callable[[str], bool] | None:
    """A test for "rare as an English word": no vector in the vocabulary of ``recognizer``'s
    loaded spaCy pipeline. ``None`` for a recognizer without one (``en_core_web_sm`` has no
    vectors, a non-spaCy recognizer no vocabulary): then the steps of this module do nothing."""
    vocab = _spacy_vocab(recognizer) if recognizer is not None else None
    if vocab is None:
        return None
    return lambda word: not vocab.has_vector(word)


def writes_lowercase(text: str) -> bool:
    """True when at least half the text's sentences start in lowercase: its writer does not
    capitalise, so a lowercase word can be a name ("kunle says my slip is wrong")."""
    starts = [m.group("c") for m in _SENTENCE_START.finditer(text)]
    return bool(starts) and sum(c.islower() for c in starts) * 2 >= len(starts)


def _base(word: str) -> str:
    """A word without a trailing apostrophe or possessive "'s"."""
    return re.sub(r"['\u2019]s$", "", word.rstrip("'\u2019"))


def _cased_run_on(span: str) -> bool:
    """True for a span whose first word is capitalised and a later one lowercase ("Aoife pozdrawia")."""
    words = span.split()
    return len(words) > 1 and words[0][:1].isupper() and any(w[:1].islower() for w in words[1:])


def truecased(text: str, rare: Callable[[str], bool], *, stop: frozenset[str] = frozenset()) -> str | None:
    """A copy of ``text`` with its rare lowercase words capitalised, or ``None`` when the text's
    writer capitalises or no word is rare. ``stop`` words and words under three letters stay."""
    if not writes_lowercase(text):
        return None
    chars = list(text)
    changed = False
    for m in _WORD.finditer(text):
        base = _base(m.group(0))
        if len(base) < 3 or base in stop or not rare(base):
            continue
        first = chars[m.start()].upper()
        if len(first) == 1:  # "ß" would become "SS" and shift every offset
            chars[m.start()] = first
            changed = True
    return "".join(chars) if changed else None


_SPAN_WORD = re.compile(r"\S+")


def _raised_run(text: str, copy: str, start: int, end: int) -> tuple[int, int] | None:
    """The part of the copy's span ``start:end`` made of words the copy capitalised or the writer
    did: the first run of such words that holds one the copy capitalised ("the Umeda office" →
    "Umeda"); ``None`` when there is none."""
    runs: list[list[tuple[int, int, bool]]] = [[]]
    for m in _SPAN_WORD.finditer(text, start, end):
        word = m.group(0)
        raised = text[m.start()] != copy[m.start()]
        if raised or (word[:1].isupper() and not word.isupper()):
            runs[-1].append((m.start(), m.end(), raised))
        elif runs[-1]:
            runs.append([])
    for run in runs:
        if any(raised for _, _, raised in run):
            return run[0][0], run[-1][1]
    return None


def truecased_entities(
    found: dict[str, list[Entity]],
    recognizer: Recognizer,
    *,
    stop: frozenset[str] = frozenset(),
) -> dict[str, list[Entity]]:
    """``found`` (text → the recognizer's entities) with the places NER finds on truecased copies.

    A place from the copy is added when it covers a word the copy capitalised and overlaps no named
    span of the original, or contains the original's named spans ("mapo" → "mapo-gu"); its text is
    the original's. One more recognizer call, over the lowercase texts only. Returns ``found``
    itself when there is no rarity test (see :func:`rare_word_test`).
    """
    rare = rare_word_test(recognizer)
    if rare is None:
        return found
    copies = {text: copy for text in found if (copy := truecased(text, rare, stop=stop)) is not None}
    if not copies:
        return found
    originals = list(copies)
    result = dict(found)
    for text, extra in zip(originals, recognizer([copies[t] for t in originals]), strict=True):
        copy = copies[text]
        entities = list(found[text])
        for entity in extra:
            if entity.kind not in _KINDS:
                continue
            span = _raised_run(text, copy, entity.start, entity.end)
            if span is None:
                continue
            start, end = span
            named = ("PERSON", "LOCATION", "ORGANIZATION")
            overlapping = [e for e in entities if e.kind in named and e.start < end and e.end > start]
            if overlapping and not all(
                start <= e.start and e.end <= end and (e.start, e.end) != (start, end) for e in overlapping
            ):
                continue  # the original's reading of the same words stands
            entities = [e for e in entities if e not in overlapping]
            entities.append(Entity(start, end, entity.kind, text[start:end], entity.source))
        result[text] = sorted(entities, key=lambda e: (e.start, e.end))
    return result


def _fold(text: str) -> str:
    """Lowercase without accents, one character per character (offsets kept)."""
    return "".join((unicodedata.normalize("NFKD", c)[:1] or c).lower()[:1] for c in text)


#: The lowercase word right after a name (a family name, possibly hyphenated or possessive).
_NEXT_WORD = re.compile(
    r"[ \t]+(?P<w>[a-z\u00df-\u024f][a-z\u00df-\u024f'\u2019]*(?:-[a-z\u00df-\u024f]+)*)(?![\w@])"
)


def extend_known_names(
    text: str,
    entities: list[Entity],
    known: set[str],
    rare: Callable[[str], bool],
    *,
    stop: frozenset[str] = frozenset(),
) -> list[Entity]:
    """``entities`` plus the participant's known people written with rare lowercase words after
    them, as one person: "denise okonkwo" where "Denise" is known and "okonkwo" is rare (and every
    rare word after that, up to a possessive: "denise okonkwo vimbeku's").

    ``known`` holds folded person names (the participant's gazetteer). A span the new one contains
    that NER alone labelled another kind ("kunle bakare" as an organisation) gives way to it; a
    span of a pattern or cue that reaches past it blocks it.

    >>> found = extend_known_names("ask denise okonkwo", [], {"denise"}, lambda w: w == "okonkwo")
    >>> [(e.text, e.kind) for e in found]
    [('denise okonkwo', 'PERSON')]
    """
    names = sorted((n for n in known if len(n) >= 2), key=len, reverse=True)
    if not names:
        return entities
    pattern = re.compile(r"(?<![\w@.])(?:" + "|".join(re.escape(n) for n in names) + r")(?![\w@])")
    result = list(entities)
    for m in pattern.finditer(_fold(text)):
        nxt = _NEXT_WORD.match(text, m.end())
        if nxt is None:
            continue
        base = _base(nxt.group("w"))
        if len(base) < 3 or base in stop or not rare(base):
            continue
        start, end = m.start(), nxt.start("w") + len(base)
        while base == nxt.group("w") and (nxt := _NEXT_WORD.match(text, end)) is not None:
            base = _base(nxt.group("w"))  # more rare words: the rest of the name ("… okonkwo vimbeku")
            if len(base) < 3 or base in stop or not rare(base):
                break
            end = nxt.start("w") + len(base)
        if _cased_run_on(text[start:end]):
            continue  # a capitalised known name is not extended by lowercase words ("Aoife pozdrawia!")
        inside = [e for e in result if e.start < end and e.end > start]
        if any(e.kind == "PERSON" and e.start <= start and e.end >= end for e in inside):
            continue  # already one person
        if any(
            not (start <= e.start and e.end <= end) or (e.kind != "PERSON" and e.source != "ner")
            for e in inside
        ):
            continue
        result = [e for e in result if e not in inside]
        result.append(Entity(start, end, "PERSON", text[start:end], "namepart"))
    return sorted(result, key=lambda e: (e.start, e.end))


#: A place preposition before a lowercase word ("in kilimani", "near umeda", "around yaba").
_PLACE_BEFORE = re.compile(
    r"\b(?:in|near|around|outside|across|towards|nearby)\s+"
    r"(?P<v>[a-z\u00df-\u024f][a-z\u00df-\u024f'\u2019]*(?:-[a-z\u00df-\u024f]+)*)(?![\w@/]|\.\w)"
)


def find_rare_places(
    text: str, entities: list[Entity], rare: Callable[[str], bool], *, stop: frozenset[str] = frozenset()
) -> list[Entity]:
    """``entities`` plus the rare lowercase words after a place preposition in a lowercase text
    ("a party at home in kilimani"), as places; not a word another span covers."""
    if not writes_lowercase(text):
        return entities
    result = list(entities)
    for m in _PLACE_BEFORE.finditer(text):
        base = _base(m.group("v"))
        start, end = m.start("v"), m.start("v") + len(base)
        if len(base) < 4 or base in stop or not rare(base):
            continue
        if any(e.start < end and e.end > start for e in result):
            continue
        result.append(Entity(start, end, "LOCATION", base, "rareplace"))
    return sorted(result, key=lambda e: (e.start, e.end))


#: A place preposition, then a capitalised word or two that NER left unlabelled ("climbs at
#: Brenzow Loft in Drevnik"); not an all-capitals word ("works in HR").
_CAPITAL_AFTER_PLACE = re.compile(
    r"\b(?:in|near|around|outside|from)\s+"
    r"(?P<v>[A-Z\u00c0-\u00de][a-z\u00df-\u024f'\u2019]+(?:[ -][A-Z\u00c0-\u00de][a-z\u00df-\u024f]+)?)"
    r"(?![\w@/]|\.\w)"
)
#: A home, workplace or stay right before "in": what follows is where someone lives or works
#: ("from home in Vell", "our flat in Drevnik"); not "works in", which also takes a field.
_HOME_IN = re.compile(
    r"\b(?:lives?|lived|living|based|home|house|flat|apartment|place|office|studio|shop|business)\s+in\s+$",
    re.IGNORECASE,
)


def find_cued_places(
    text: str,
    entities: list[Entity],
    rare: Callable[[str], bool] | None,
    *,
    taken: Sequence[Entity] = (),
    stop: frozenset[str] = frozenset(),
    public: frozenset[str] | set[str] = frozenset(),
) -> list[Entity]:
    """``entities`` plus a capitalised name after a place preposition that no span covers: a place
    when it is rare as an English word in lowercase ("in Drevnik": ``rare``; ``None`` skips this
    test) or when a home or workplace stands before the preposition ("from home in Vell").

    ``taken`` holds spans NER gave any label (titles and products too): such a word is not this
    rule's. ``stop`` words and ``public`` names (folded) stay.

    >>> [e.text for e in find_cued_places("We run a shop in Vell.", [], None)]
    ['Vell']
    """
    result = list(entities)
    for m in _CAPITAL_AFTER_PLACE.finditer(text):
        start, end = m.start("v"), m.start("v") + len(_base(m.group("v")))
        key = _fold(text[start:end])
        if len(key) < 3 or key in stop or key in public or any(w in stop for w in key.split()):
            continue
        if any(e.start < end and e.end > start for e in [*result, *taken]):
            continue
        cued = bool(_HOME_IN.search(text[:start]))
        if not cued and not (rare is not None and all(rare(w) for w in re.split(r"[ -]", key))):
            continue
        result.append(Entity(start, end, "LOCATION", text[start:end], "rareplace"))
    return sorted(result, key=lambda e: (e.start, e.end))


def find_short_names(
    text: str, entities: list[Entity], candidates: Sequence[Entity], known: set[str]
) -> list[Entity]:
    """``entities`` plus the one-word names NER found (any named kind) that begin a known person's
    first name and are at least two letters shorter: a short form ("Ani" for a known "Anika"), kept
    as a person even where a response alone uses it; and a known first name NER labelled another
    kind before a lowercase suffix ("Anika-didi", "Tanaka-san") is that person. ``known`` holds
    folded person names.

    >>> found = find_short_names("Ani, try this.", [], [Entity(0, 3, "LOCATION", "Ani", "ner")], {"anika"})
    >>> [(e.text, e.kind) for e in found]
    [('Ani', 'PERSON')]
    """
    firsts = {name.split()[0] for name in known if name.split()}
    result = list(entities)
    for cand in candidates:
        word = _fold(cand.text)
        if word in firsts and re.match(r"-[a-z]", text[cand.end : cand.end + 2]):
            # a known name with a lowercase suffix ("Anika-didi", "Tanaka-san"), labelled otherwise
            same = [e for e in result if (e.start, e.end) == (cand.start, cand.end) and e.source == "ner"]
            if same and same[0].kind != "PERSON":
                result = [e for e in result if e not in same]
                result.append(Entity(cand.start, cand.end, "PERSON", cand.text, "namepart"))
            continue
        if not re.fullmatch(r"[^\W\d_]{3,}", word) or not cand.text[:1].isupper() or word in firsts:
            continue
        if not any(f.startswith(word) and len(f) >= len(word) + 2 for f in firsts):
            continue
        if any(e.start < cand.end and e.end > cand.start for e in result):
            continue
        result.append(Entity(cand.start, cand.end, "PERSON", cand.text, "namepart"))
    return sorted(result, key=lambda e: (e.start, e.end))
