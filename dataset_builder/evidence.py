"""How much a named-entity model's span alone says: the weak-evidence tests of the de-identifier.

A span that only the NER model found (no context cue, no pattern, no profile or gazetteer entry)
is weak evidence that a text names a private person, organisation or place. Two kinds of such
spans are dropped by :func:`dataset_builder.deidentify.deidentify_records`:

* **not grounded in the participant's own words** — a span in a model-written response no more
  than half of whose words (or inflected forms of them: "Krakowie" for "Kraków"; stop words of
  several languages and lowercase hyphen suffixes left out, :func:`grounded_name`) the
  participant's query, memories, profile or notes contain. A response can only repeat the
  private details it was given; the names it adds ("the Peak District", "Turkish Airlines",
  "Photobox") are public knowledge, and a name it does repeat is found where the participant
  wrote it;
* **acronyms and codes** — an all-capitals word or a letters-and-digits code that NER calls an
  organisation or a person ("UTR", "NZTA", "SA106", "IR3", "A2"): agencies, forms, schemes and
  model numbers. An employer's acronym is found by its cue ("works at the H-E-B"); an airport
  code NER calls a place ("YYZ→AMM") is kept as a place, and so is an acronym after "from"
  unless it modifies the noun after it ("from CLT work", :func:`modifies_noun`).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence

from .detectors import _stop_words

__all__ = [
    "acronym_or_code",
    "articled_by_unaware",
    "derived_noun",
    "grounded",
    "grounded_name",
    "modifies_noun",
    "own_words",
    "sentence_bounds",
    "spelled_acronyms",
    "unaware_names",
]

_WORD = re.compile(r"[^\W\d_]+")
#: An all-capitals word or code: "UTR", "H-E-B", "SA106", "IR3", "A2", "U11", "US-87".
_ACRONYM = re.compile(r"(?:[A-Z]{2,6}|[A-Z](?:-[A-Z]){1,4}|[A-Z]{1,4}-?\d{1,4}[A-Z]?)")
#: The shortest stem an inflected form may share with a word the participant wrote.
_MIN_STEM = 4
#: The longest ending an inflected form may add ("Krakow" → "Krakowie", "Kuba" → "Kubie").
_MAX_ENDING = 3


def _fold(text: str) -> str:
    return "".join((unicodedata.normalize("NFKD", c)[:1] or c) for c in text).lower()


def own_words(texts: Iterable[str]) -> frozenset[str]:
    """The folded words of the texts a participant wrote or that describe them (query, memories,
    profile, notes), e-mail addresses and handles split into their words.

    >>> sorted(own_words(["my daughter Anika", "mail priya.raghu84@gmail.com"]))
    ['anika', 'com', 'daughter', 'gmail', 'mail', 'my', 'priya', 'raghu']
    """
    words: set[str] = set()
    for text in texts:
        words.update(_WORD.findall(_fold(text)))
    return frozenset(words)


def _word_known(word: str, words: frozenset[str]) -> bool:
    if word in words:
        return True
    if len(word) < _MIN_STEM:
        return False
    for n in range(max(_MIN_STEM, len(word) - _MAX_ENDING), len(word)):
        if word[:n] in words:
            return True
    return any(w.startswith(word) and len(w) - len(word) <= _MAX_ENDING for w in words if len(w) > len(word))


def grounded(surface: str, words: frozenset[str]) -> bool:
    """True when a word of ``surface`` (not a stop word), or an inflected form of it, is one of
    ``words``.

    >>> words = own_words(["we land in kraków on the 23rd", "friend Inès Benali"])
    >>> grounded("Krakowie", words), grounded("Ines", words), grounded("the Peak District", words)
    (True, True, False)
    """
    stop = _stop_words()
    tokens = [t for t in _WORD.findall(_fold(surface)) if t not in stop and len(t) >= 2]
    return any(_word_known(t, words) for t in tokens)


#: A lowercase part after a hyphen ("Yeonnam-dong", "Mapo-gu"): a suffix many names share.
_HYPHEN_SUFFIX = re.compile(r"(?<=\w)-([a-z\u00df-\u024f]+)")


def _name_tokens(surface: str) -> list[str]:
    """The folded words of a name that can tell it apart: not an English or other-language stop
    word ("el", "de", "da"), not a single letter, not a lowercase suffix after a hyphen."""
    from .resolver import foreign_stop_words

    stop = _stop_words() | foreign_stop_words()
    suffixes = {_fold(m.group(1)) for m in _HYPHEN_SUFFIX.finditer(surface)}
    return [t for t in _WORD.findall(_fold(surface)) if t not in stop and t not in suffixes and len(t) >= 2]


def grounded_name(surface: str, words: frozenset[str]) -> bool:
    """True when most words of a name (more than half of :func:`_name_tokens`), or inflected forms
    of them, are in ``words``: a response can repeat a private name it was given, but one it
    builds around a single word the participant wrote ("Star Alliance" beside "a gold star",
    "Yeonnam-dong" beside "Mangwon-dong", "El Moro" beside "El Chato") is its own.

    >>> words = own_words(["we live in mangwon-dong", "my partner el chato", "ani loves Lego Friends"])
    >>> [grounded_name(s, words) for s in ("Yeonnam-dong", "El Moro", "Lego Friends", "Mangwon")]
    [False, False, True, True]
    """
    tokens = _name_tokens(surface)
    known = sum(_word_known(t, words) for t in tokens)
    return bool(tokens) and known * 2 > len(tokens)


def modifies_noun(after: str) -> bool:
    """True when the text right after a span starts with a lowercase word that is no English stop
    word: the span modifies it ("from CLT work", "from NHS funding"), so it is no place the
    preposition before it points at ("the drive from SA to Perth").

    >>> modifies_noun(" work is taxed"), modifies_noun(" to Perth"), modifies_noun(", then")
    (True, False, False)
    """
    m = re.match(r"\s+([a-z][a-z'-]*)", after)
    return bool(m) and m.group(1) not in _stop_words()


def acronym_or_code(surface: str) -> bool:
    """True for an all-capitals word or a letters-and-digits code, never for a name with lowercase
    letters.

    >>> [acronym_or_code(s) for s in ("NZTA", "SA106", "IR3", "H-E-B", "Kiwibank", "Deloitte UK", "I")]
    [True, True, True, True, False, False, False]
    """
    return bool(_ACRONYM.fullmatch(surface.strip()))


#: A sentence's end: "!", "?", a line break, or a period that follows no single letter ("C.P.")
#: and precedes a space and a letter that is no lowercase one, or the end of the text.
_SENTENCE_END = re.compile(r"[!?\n]|(?<!\b[^\W\d_])[.](?=\s+[^\d\W]|\s*$)(?!\s+[a-z])")


def sentence_bounds(text: str, start: int, end: int) -> tuple[int, int]:
    """The ``[start, end)`` offsets of the sentence around a span (the periods of "C.P. 04100" end
    none).

    >>> text = "Hi. Osaka is great; try Kuromon Market. Or Kyoto."
    >>> text[slice(*sentence_bounds(text, 24, 38))]
    ' Osaka is great; try Kuromon Market.'
    >>> text = "Col. Del Carmen, C.P. 04100, Ciudad de México"
    >>> text[slice(*sentence_bounds(text, 29, 45))]
    ' Del Carmen, C.P. 04100, Ciudad de México'
    """
    left = max((m.start() for m in _SENTENCE_END.finditer(text, 0, start)), default=-1)
    m = _SENTENCE_END.search(text, end)
    return left + 1, (m.start() + 1 if m else len(text))


#: A word of three to six capitals ("BECE", "ÖGK", "FONASA") not joined to a hyphen or a digit.
_CAPITALS_WORD = re.compile(r"(?<![\w-])[^\W\d_]{3,6}(?![\w-])")


#: A bare web address in running text: its first label ("fonasa" of "fonasa.cl").
_SITE = re.compile(r"(?<![\w@./-])([a-z][a-z0-9-]{2,})\.(?:[a-z]{2,3})(?:\.[a-z]{2})?(?![\w@-])")


#: The word right before an offset, and the spaces, quotes or bracket between (see :func:`_word_before`).
_WORD_BEFORE = re.compile(r"([^\W\d_][\w'-]*)[ \t\"'(]*$")
_TAIL_RUN = re.compile(r"[ \t\"'(]*")
_WORD_RUN = re.compile(r"[\w'-]*")


def _word_before(text: str, reverse: str, end: int) -> re.Match[str] | None:
    """``_WORD_BEFORE.search(text[:end])``, in offsets of ``text`` (``reverse`` is ``text[::-1]``),
    searched only from the start of the last run of word characters before ``end``: a match can
    start nowhere earlier, and a search of the whole prefix takes time quadratic in a long word
    and linear in the prefix for every call.

    >>> text = "Neither PZU"
    >>> _word_before(text, text[::-1], 8).group(1)
    'Neither'
    """
    n = len(text)
    stop = end - 1 if end and text[end - 1] == "\n" else end  # "$" also stands before a final line break
    tail = _TAIL_RUN.match(reverse, n - stop).end()
    word = _WORD_RUN.match(reverse, tail).end()
    return _WORD_BEFORE.search(text, n - word, end)


def spelled_acronyms(own: Sequence[str], unaware: Sequence[str], everything: Sequence[str]) -> set[str]:
    """The folded words the participant writes in lowercase ("is pzu or warta cheaper", "when do
    bece results come out") that a response written without their memories (``unaware``) spells as
    an acronym, in capitals and beside no other capitalised word ("neither PZU nor Warta", not
    "ODA Rin"), or names as a web address the participant did not write ("en fonasa.cl"): an
    insurer, exam, scheme or agency the model knows by itself, not a private name.

    A word that any text (of ``everything``) writes near a home, family or work (public.near_anchor,
    public.work_context), or that the participant also writes in capitals ("we land in KRK"), is
    left out: it may be their employer, school or airport.

    >>> spelled_acronyms(["is pzu cheaper"], ["PZU is often pricier"], ["is pzu cheaper"])
    {'pzu'}
    >>> spelled_acronyms(["i work at pzu"], ["PZU is big"], ["i work at pzu"])
    set()
    """
    from .public import anchored_word

    spelled: set[str] = set()
    for text in unaware:
        reverse = text[::-1]
        for m in _CAPITALS_WORD.finditer(text):
            word = m.group(0)
            if not word.isupper():
                continue
            before = _word_before(text, reverse, m.start())
            if before and sentence_bounds(text, before.start(1), before.end(1))[0] >= before.start(1) - 1:
                before = None  # "El RUT se escribe…": the capital of a sentence's first word
            after = re.match(r"[ \t\"')]*([^\W\d_][\w'-]*)", text[m.end() :])
            beside = [w.group(1) for w in (before, after) if w]
            if not any(w[:1].isupper() and _fold(w) not in _stop_words() for w in beside):
                spelled.add(_fold(word))
        # a site the response names by itself ("En fonasa.cl puedes…"): its name is public
        for m in _SITE.finditer(text):
            if not any(m.group(0).lower() in t.lower() for t in own):
                spelled.add(_fold(m.group(1)))
    result: set[str] = set()
    folded = [(_fold(text), text) for text in everything]
    for word in spelled:
        pattern = re.compile(rf"(?<![\w@./-]){re.escape(word)}(?![\w@-])")
        written = [text[m.start() : m.end()] for text in own for m in pattern.finditer(_fold(text))]
        if not written or not all(w.islower() for w in written):
            continue
        if not anchored_word(word, folded):
            result.add(word)
    return result


#: German suffixes that make abstract and action nouns ("Prüfung", "Krankmeldung", "Freiheit",
#: "Möglichkeit", "Gesellschaft"), after a consonant: "-ung" after a vowel ends names ("Kaohsiung").
_DERIVED_NOUN = re.compile(r"[^\W\d_]{4,}(?:[^\W\daeiouy_]ung|heit|keit|schaft)")


def derived_noun(surface: str) -> bool:
    """True for one word of nine letters or more that a German noun-forming suffix ends
    ("Meisterprüfung", "Lohnsteuerbescheinigung", "Mitgliedschaft"): an abstract or action noun,
    which names no person, firm or place. Short words ("Jung", "Hung") and vowel-led endings
    ("Kaohsiung") are left alone.

    >>> [derived_noun(s) for s in ("Meisterprüfung", "krankmeldung", "Kaohsiung", "Jung", "Hans Jung")]
    [True, True, False, False, False]
    """
    word = surface.strip()
    return len(word) >= 9 and bool(_DERIVED_NOUN.fullmatch(_fold(word)))


#: A capitalised word of a running text ("Vagamon", "Ohrid"), not an all-capitals one.
_CAPITALISED = re.compile(r"(?<![\w'-])[^\W\d_a-z][^\W\d_]*[a-z\u00df-\u024f][^\W\d_]*(?![\w-])")


def unaware_names(own: Sequence[str], unaware: Sequence[str]) -> set[str]:
    """The folded capitalised words that a response written without the participant's memories
    (``unaware``) uses and none of the participant's own texts (``own``: query, memories,
    profile, notes) contains, in any inflected form (:func:`grounded`): names the model knew by
    itself ("a houseboat in Quorrakom"), which are public knowledge, whatever place of the
    participant's stands beside them.

    >>> sorted(unaware_names(["we live in dravnik"], ["Near Dravnik, try Quorrakom for hills."]))
    ['near', 'quorrakom']
    """
    words = own_words(own)
    stop = _stop_words()
    found: set[str] = set()
    for text in unaware:
        for m in _CAPITALISED.finditer(text):
            word = _fold(m.group(0))
            if word not in stop and len(word) >= 3 and not _word_known(word, words):
                found.add(word)
    return found


#: "the", "a" or "an" and one capitalised word that no capitalised word, digit or possessive follows.
_THE_NAME = re.compile(
    r"\b(?:[Tt]he|[Aa]n?)\s+([^\W\d_a-z][^\W\d_]*[a-z\u00df-\u024f][^\W\d_]*)(?![\w'\u2019-])(?!\s+[^\W_a-z])"
)


def articled_by_unaware(unaware: Sequence[str], everything: Sequence[str]) -> set[str]:
    """The folded words a memory-free response (``unaware``) writes after "the", "a" or "an",
    capitalised and alone ("can do the Pickerl", "for a Kinderfest"): a common noun or a public body the model
    knows, since a person's name takes no article. A word any text (of ``everything``) writes near
    a home, family or work is left out (an employer: "a post at the Velmora Klinikum").

    >>> sorted(articled_by_unaware(["Any garage can do the Prickerl in a day."], ["prickerl due"]))
    ['prickerl']
    >>> articled_by_unaware(["Ask the Velmora Clinic."], ["ask velmora"])
    set()
    """
    from .public import anchored_word

    found = {_fold(m.group(1)) for text in unaware for m in _THE_NAME.finditer(text)} - _stop_words()
    result = set()
    folded = [(_fold(text), text) for text in everything]
    for word in found:
        if not anchored_word(word, folded):
            result.add(word)
    return result
