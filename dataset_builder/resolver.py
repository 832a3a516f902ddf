"""Entity resolution inside a participant: typed, consistent placeholders for every mention.

:class:`ParticipantRedactor` learns every identifier surface a participant's records hold, with the
detectors that named it (context-cued evidence outweighs a named-entity model's label), joins the
mentions of one entity (first, full and short names; accents, hyphens and case; nicknames the texts
tie to a name, :func:`tied_names`; a name after a salutation, a title or a word of address; a
short form that begins or ends a first name; an organisation and its short form, with or without a
generic first noun; a shop named after a person apart from her; a street and its numbered address
or flat number; a place and its inflected form, code or short form), cuts "X's sister Y" into its
two people (:func:`possessive_pieces`), joins two spans that are one name, keeps a person and a place that
share a name apart, redacts an organisation that holds another entity piece by piece ("[ORG]
[PLACE]"), and replaces every mention with one placeholder. ``_combine`` merges pattern, cue and NER
spans for one text; ``_plausible_name`` drops name-shaped spans that are everyday words or public
names in context (both used by :mod:`dataset_builder.deidentify`).
"""

from __future__ import annotations

import functools
import importlib
import re
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from .detectors import (
    EVERYDAY_FIRST_NAMES,
    RELATION_WORDS,
    Entity,
    _stop_words,
    generalize_date,
    place_names,
    public_mention,
    resolve_overlaps,
)
from .entity_cues import _DETERMINER_BEFORE, CLOSINGS, GREETINGS
from .public import anchored_place, country_names, trip_destination

__all__ = ["ParticipantRedactor", "canonical", "possessive_pieces", "tied_names", "user_names"]

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
        "nickname",
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
_COMMON_WORD_NAMES = frozenset(EVERYDAY_FIRST_NAMES) | frozenset(
    """june april august art summer rich sandy penny holly ivy lily daisy iris amber jade chase gene
    guy victor cliff brook sky go rust""".split()
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
#: After an everyday-word name, words the everyday word cannot take ("will's 30th", "will and i",
#: "will works weekends", "grace is getting married").
_NAME_ONLY_AFTER = re.compile(
    r"(?:['\u2019]s\s+(?:\d{1,3}(?:st|nd|rd|th)|birthday|bday|wedding|party|car|flat|house|place|mum|"
    r"mom|dad|family|job|work|portfolio|class|teacher|school|phone|number|email|account|profile|website|"
    r"blog|room|boyfriend|girlfriend|husband|wife|partner|son|daughter|boss|homework|graduation)\b|"
    r"\s+and\s+i\b|\s+(?:is|was|has|works|lives|loves|hates|wants|says|"
    r"said|thinks|likes|needs|gets|got|keeps|turns|texted|called)\b)",
    re.IGNORECASE,
)
#: A relation word right before a name ("my mum june", "her son will").
_RELATION_BEFORE = re.compile(
    rf"\b(?:my|our|your|his|her|their|'s)\s+(?:{RELATION_WORDS})\s+$", re.IGNORECASE
)
#: A possessive before what only a person has ("jordan's email", "Ana's phone").
_PERSONAL_POSSESSIVE = re.compile(
    r"['\u2019]s\s+(?:e-?mail|number|phone|mobile|cell|birthday|bday|wedding|husband|wife|partner|"
    r"boyfriend|girlfriend|kids?|son|daughter|mum|mom|dad|parents|name|message|text)\b",
    re.IGNORECASE,
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
#: Last words of a business's name ("Kasama Bakery", "Lindo Café"): what it sells or does.
_BUSINESS_NOUNS = frozenset(
    """bakery cafe café restaurant bar pub shop store studio salon kitchen market deli pharmacy garage
    workshop gym clinic agency farm hotel""".split()
)
#: Articles before a name in languages that write one before an institution ("el CESMAR …").
_ARTICLES = ("el", "la", "los", "las", "le", "les", "il", "lo", "der", "die", "das", "het")
#: First words of an institution's name that its short form leaves out ("Hôpital X" is "X").
_INSTITUTION_FIRST = frozenset(
    """hospital hopital hospitale ospedale klinik klinikum clinica clinique szpital universidad
    universite universita universitat uniwersytet universidade colegio escuela ecole liceo lycee scuola
    gymnasium banco banque banca""".split()
)
#: "Spider-Man", "Ant-Man", "Wonder-Woman": hyphenated titles, not people's names.
_COMPOUND_TITLE = re.compile(r"-(?:Man|Men|Woman|Women|Girl|Boy|Verse)$")


#: Words that name the kind of a place, not another place: "Cebu City", "Lagos State", "the City of
#: Cape Town", "Nashik Road".
_PLACE_GENERIC = frozenset(
    """city state province county district region municipality prefecture metro metropolitan area
    greater town township of the road rd street st north south east west central upper lower phase sector
    block zone stage layout extension colonia col barrio bairro""".split()
)
_OF_WORD = frozenset("of de du di da del des von".split())


def _longer_form(key: str, longer: str) -> bool:
    """True when the place ``longer`` is ``key`` with a house number before it ("14 elm rd" of
    "elm rd") or words that name the kind of place ("cebu city", "city of cape town"); not a
    bigger name ("jabal amman" of the known town "amman") nor a known town's postal district
    ("dublin 2", unlike the street "karl-heine-straße 42"); a name that holds ``key`` after
    "of"/"de" ("the mairie de montreuil") names it."""
    if longer.endswith(f" {key}"):
        extra = longer[: -len(key)].split()
        return (
            any(c.isdigit() for c in longer[: -len(key)])
            or all(w in _PLACE_GENERIC for w in extra)
            or extra[-1] in _OF_WORD
            or key not in place_names()
        )
    rest = longer[len(key) :].split()
    if len(rest) == 1 and re.fullmatch(r"\d{1,5}[a-z]?", rest[0]):
        return key not in place_names()  # "karl-heine-straße 42", not the district "dublin 2"
    words = [w for w in rest if not re.fullmatch(r"\d{1,3}", w)]  # "lekki phase 1", "sector 62"
    return bool(words) and all(w.rstrip(".") in _PLACE_GENERIC for w in words)


def _abbreviates(short: str, long: str) -> bool:
    """True when every word of ``short`` begins the word of ``long`` at its place, the first the
    same and at least one shortened ("mwangaza prep" of "mwangaza preparatory school")."""
    a, b = short.split(), long.split()
    if len(a) > len(b) or a[0] != b[0]:
        return False
    pairs = list(zip(a, b, strict=False))
    return all(len(x) >= 3 and y.startswith(x) for x, y in pairs[1:]) and any(x != y for x, y in pairs)


def _code_of(code: str, name: str) -> bool:
    """True when a three-letter code is the start of a one-word place name ("amm" of "amman") or
    its first letter and two later consonants in order ("krk" of "krakow")."""
    if name.startswith(code):
        return True
    if code[0] != name[:1] or any(c in "aeiouy" for c in code[1:]):
        return False
    rest = iter(name[1:])
    return all(c in rest for c in code[1:])


def _fold(text: str) -> str:
    return "".join((unicodedata.normalize("NFKD", c)[:1] or c) for c in text).lower()


def _function_word(token: str) -> bool:
    """True for an English stop word that is no everyday-word first name ("my" of "My Aunty Ngo")."""
    return token in _stop_words() and token not in _COMMON_WORD_NAMES


def _key(text: str) -> str:
    """Normal form of an identifier surface: accents folded, lowercase, no "the"/title/possessive."""
    key = re.sub(r"\s+", " ", _fold(text).strip(" .,;:'\"()\u00a1\u00bf!?"))
    key = re.sub(r"^(?:the|dr|mr|mrs|ms|prof)\.?\s+", "", key)
    return re.sub(r"['\u2019]s$", "", key)


def _kind_key(kind: str, text: str) -> str:
    key = _key(text)
    if kind == "HANDLE":
        key = re.sub(r"#\d{4}$", "", key.lstrip("@"))
    elif kind == "PHONE":
        key = re.sub(r"\D", "", key)
    return key


#: Case endings of Slavic, Baltic and Finnic languages a one-word name of 5+ letters may take in the
#: gazetteer ("Krakowie", "Kubie", "Tallinnas"): text is matched accent-folded.
_INFLECTION = "(?:iem|owi|ie|em|ou|as|ssa|sta|lla|u|a|y|e|i)?"
_INFLECTABLE = re.compile(r"[^\W\d_]{5,}")
_STREET_ABBREVIATIONS = {
    "st": "street",
    "rd": "road",
    "ave": "avenue",
    "av": "avenue",
    "dr": "drive",
    "ln": "lane",
    "blvd": "boulevard",
    "pl": "place",
    "cres": "crescent",
    "ct": "court",
    "tce": "terrace",
    "hwy": "highway",
    "sq": "square",
}
#: Honorifics after a name ("suzuki-san") or before it ("Doña Chuy", "Mamie Jeanne").
_HONORIFIC_AFTER = re.compile(r"-(?:san|kun|chan|sama|sensei|senpai|ssi|nim|ji)$")
_HONORIFIC_BEFORE = re.compile(
    r"^(?:dona|dono|don|dom|senhor|senhora|seu|sr|sra|herr|frau|mamie|papi|tante|oncle|tia|tio|"
    r"auntie|aunty|aunt|uncle|mama|baba|nana|abuela|abuelo|nonna|nonno|oma|opa|lola|lolo|tita|tito|"
    r"bibi|mzee|ate|kuya|ajumma|ahjussi|halmeoni|halabeoji|monsieur|madame|signora|signor|nanay|tatay|"
    r"inay|itay|mormor|morfar|farmor|farfar|bestemor|bestefar|babcia|dziadek|bunica|yiayia|pappou|"
    r"bubbe|zaide|nonnina|vovo|avo)\s+"
)


#: The opening words of a letter before the addressee's name ("Dear Mr Adeleke", "Sehr geehrte Frau
#: Brenner", "Querida Tía Rosa", "Szanowna Pani Kowalska").
_SALUTATION_WORDS = GREETINGS + (
    "dearest",
    r"sehr\s+geehrter?",
    "liebe[rs]?",
    "lieber",
    "geachte",
    "beste",
    "querid[oa]s?",
    "estimad[oa]s?",
    "chere",
    "cheres",
    "prezad[oa]",
    "szanown[ya]",
    "drog[ia]",
    "kaere",
    "kære",
    "ola",
    "oi",
)
_SALUTATION = re.compile(rf"^(?:{'|'.join(_SALUTATION_WORDS)})\s+(?=\S)")
_TITLE_WORD = re.compile(r"^(?:pani|pan|mr|mrs|ms|dr|prof)\.?\s+(?=\S)")


def canonical(kind: str, key: str) -> str:
    """One form for the spellings of one identifier: a phone's last eight digits ("+353 87 123 4567"
    and "087 123 4567"), a URL without scheme, "www." or final slash, a de-obfuscated e-mail, an ID
    number's letters and digits without a leading scheme word ("DL AB123456"), a street with its
    type spelt out and no commas ("23 aro st", "rua dos pinheiros, 498"), a person without an
    honorific or a relation word before it ("suzuki-san", "dona chuy", "mum birgit").

    >>> canonical("PHONE", "+64215550134"), canonical("PHONE", "0215550134")
    ('15550134', '15550134')
    >>> canonical("URL", "https://www.site.com.br/"), canonical("EMAIL", "ama dot oven at gmail dot com")
    ('site.com.br', 'ama.oven@gmail.com')
    >>> canonical("LOCATION", "4/17 droop st"), canonical("PERSON", "suzuki-san")
    ('4/17 droop street', 'suzuki')
    """
    if kind == "PHONE":
        return re.sub(r"\D", "", key)[-8:]  # eight: Singapore's "9123 4567" beside "+65 9123 4567"
    if kind == "URL":
        return re.sub(r"^(?:https?://)?(?:www\.)?", "", key).rstrip("/")
    if kind == "EMAIL":
        key = re.sub(r"\s*[\[(]?\s*\bdot\b\s*[\])]?\s*", ".", key)
        return re.sub(r"\s*[\[(]?\s*\bat\b\s*[\])]?\s*", "@", key).replace(" ", "")
    if kind == "ID_NUMBER":
        key = re.sub(r"^[a-z]{1,4}\s+(?=\S*\d)", "", key)
        return re.sub(r"[^a-z0-9]", "", key)
    if kind == "LOCATION":
        key = re.sub(r"-(?:ku|shi|cho|machi|mura|gun|ken|dong|gu|si)$", "", key)  # "setagaya-ku"
        tokens = key.replace(",", " ").split()
        if any(t[0].isdigit() for t in tokens):
            tokens = [_STREET_ABBREVIATIONS.get(t.rstrip("."), t) for t in tokens]
        elif len(tokens) >= 2 and tokens[-1].rstrip(".") not in ("st", "dr"):
            # "byres rd" and "byres road": a street's type is its last word ("st" and "dr" without a
            # house number may be a saint or a doctor)
            tokens[-1] = _STREET_ABBREVIATIONS.get(tokens[-1].rstrip("."), tokens[-1])
        return " ".join(tokens)
    if kind == "PERSON":
        key = _TITLE_WORD.sub("", _SALUTATION.sub("", key))  # "sehr geehrte frau brenner"
        key = _HONORIFIC_BEFORE.sub("", _HONORIFIC_AFTER.sub("", key))
        relation = re.match(rf"(?:{RELATION_WORDS})\s+(?=\S)", key)
        return key[relation.end() :] if relation else key  # "mum birgit"
    return key


#: Words that give a person a second name right after the first ("Luis Ortega, nicknamed El Chato").
_ALSO_CALLED = re.compile(
    r"^\s*,?\s*\(?\s*(?:nicknamed|nickname|known\s+as|aka|a\.k\.a\.?|also\s+called|called|dubbed|"
    r"goes\s+by)\s+",
    re.IGNORECASE,
)
#: "friends call her", "his family calls him", "everyone calls me": the name that follows is a
#: nickname of the person just named (or of the participant).
_CALLS = re.compile(r"\b(?:calls?|called)\s+(?P<who>her|him|them|me)\s+", re.IGNORECASE)
#: The closing words of a message right before the writer's name ("Love, Migs", "Cheers,\nLiam").
_SIGN_OFF_CLOSINGS = CLOSINGS + (
    r"best\s+wishes",
    r"kind\s+regards",
    "warmly",
    "sincerely",
    "gr[üu](?:ß|ss)e",
    "pozdrawiam",
    "salamat",
    "ciao",
    "bisous",
    "xx+",
    "xoxo",
)
_SIGN_OFF = re.compile(
    rf"(?:^|[.!?\n]\s*|\s)(?:{'|'.join(_SIGN_OFF_CLOSINGS)})\s*[,!]?\s*$",
    re.IGNORECASE,
)
#: A quoted word between two words of a name ("aarav 'bunty' kulkarni").
_QUOTED_INSIDE = re.compile(
    r"(?P<a>[^\W\d_][\w-]+)\s+['\u2018\"\u201c](?P<b>[^\W\d_][\w -]{1,20}?)['\u2019\"\u201d]\s+"
    r"(?P<c>[^\W\d_][\w-]+)"
)
#: A bracketed word between two words of a name ("anselm (selmi) grubauer").
_BRACKET_INSIDE = re.compile(
    r"(?P<a>[^\W\d_][\w-]+)\s+\(\s*(?P<b>[^\W\d_][\w-]{1,20})\s*\)\s+(?P<c>[^\W\d_][\w-]+)"
)
#: A capitalised word right before a span, after a comma, a bracket or a lowercase word (no
#: sentence's first word, no word of a capitalised title): "Danke, Jonas" of "Danke, Jonas Brenner".
_WORD_BEFORE = re.compile(
    r"(?:[,;:(]\s*|(?<![^\W\d_])[a-z\u00df-\u024f]+\s)(?P<w>[A-Z\u00c0-\u00de][a-z\u00df-\u024f]{2,})\s$"
)
#: A first name and a quoted or bracketed nickname right before a family name ("Rosaura 'Doña Chayo' ").
_NICK_BEFORE = re.compile(
    r"(?<![\w'])(?P<a>[^\W\d_][\w-]+)\s+(?:['\u2018\"\u201c][^'\u2019\"\u201d\n]{1,25}['\u2019\"\u201d]|"
    r"\([^()\n]{1,25}\))\s+$"
)
#: The participant's own name in a memory: "user's name is …", "user's full name …", "my name is …".
_USER_NAME = re.compile(
    r"\b(?:user(?:['\u2019]s)?|my)\s+(?:full\s+|real\s+|legal\s+|first\s+)?name\s+(?:is\s+)?$",
    re.IGNORECASE,
)
_SELF = re.compile(r"^\W*(?:the\s+)?user\b|\b(?:i|me|my)\b", re.IGNORECASE)


def user_names(text: str, entities: Sequence[Entity]) -> list[str]:
    """The keys of the names ``text`` gives the participant ("user's name is miguel santos reyes",
    "my name is Ana"), whatever kind the recognizer gave the span."""
    return [_key(e.text) for e in entities if e.kind in _NAMED_KINDS and _USER_NAME.search(text[: e.start])]


#: A nickname's words: quoted, or one to three words up to a bracket, a comma or a sentence's end.
_NICK_AFTER = re.compile(
    r"[\"'\u2018\u201c](?P<q>[^\"'\u2019\u201d\n]{2,25})[\"'\u2019\u201d]"
    r"|(?P<w>[^\W\d_][\w\u2019-]*(?:\s+[^\W\d_][\w\u2019-]*){0,2}?)(?=\s*(?:[,.;:!?)]|$))"
)


def tied_names(
    text: str,
    entities: Sequence[Entity],
    user: str | None = None,
    known: frozenset[str] | set[str] = frozenset(),
) -> list[tuple[str, str]]:
    """``(nickname key, name key)`` pairs the text ties together: a person and the name in brackets
    right after them ("shazza (sharon kealy)"), a person and the name they are "nicknamed", "known
    as" or "aka" ("Luis Ortega, nicknamed El Chato"), and the name the person just named, or the
    participant (``user``, the key of their own name), is called by ("Chiamaka Okonkwo-Bakare;
    friends call her Ama", "user's family calls her shiro"), and the name that signs off a message
    the participant asked for ("… Love, Migs"). The name after the cue is a span the
    recognizers found, quoted, capitalised, or a person the participant's texts name elsewhere
    (``known``); in brackets, a person span or a known person ("Shiro (Treasurer)" ties nothing).
    The one with fewer words is the nickname.

    >>> E = lambda t, s, k="PERSON": Entity(t.index(s), t.index(s) + len(s), k, s, "ner")
    >>> t = "my boss is shazza (sharon kealy)"
    >>> tied_names(t, [E(t, "shazza"), E(t, "sharon kealy")])
    [('shazza', 'sharon kealy')]
    >>> t = "user's family calls her shiro."
    >>> tied_names(t, [], "wanjiru kamau", {"shiro"}), tied_names(t, [], "wanjiru kamau")
    ([('shiro', 'wanjiru kamau')], [])
    >>> t = "my sister Ana (Vegetarian) and Luis Ortega, nicknamed El Chato."
    >>> tied_names(t, [E(t, "Ana"), E(t, "Luis Ortega"), E(t, "El Chato", "ORGANIZATION")])
    [('el chato', 'luis ortega')]
    """
    named = sorted((e for e in entities if e.kind in _NAMED_KINDS), key=lambda e: e.start)
    pairs: list[tuple[str, str]] = []

    def nickname(at: int, strict: bool = False) -> str:
        """The name written at ``at``, or ``""`` (``strict``: a person span or a known person)."""
        span = next((e for e in named if e.start == at), None)
        if span is not None and (span.kind == "PERSON" or not strict):
            return _key(span.text)
        if strict:
            m = _NICK_AFTER.match(text, at)
            key = _key(m.group("q") or m.group("w")) if m else ""
            return key if key in known or (key and canonical("PERSON", key) in known) else ""
        m = _NICK_AFTER.match(text, at)
        if m is None:
            return ""
        words = m.group("q") or m.group("w")
        key = _key(words)
        if not key or any(_function_word(w) for w in key.split()):
            return ""
        return key if (m.group("q") or words[:1].isupper() or key in known) else ""

    def tie(a: str, b: str) -> None:
        if a and b and a != b:
            pairs.append((a, b) if len(a.split()) <= len(b.split()) else (b, a))

    for person in named:
        after = text[person.end :]
        bracket = re.match(r"\s*\(\s*", after)
        inner = nickname(person.end + bracket.end(), strict=True) if bracket else ""
        first = _key(person.text).split()[:1]
        short = (  # "ravindra kaul (ravi)" that NER called an organisation: the short form of its first name
            person.kind != "PERSON"
            and len(_key(person.text).split()) > 1
            and len(inner) >= 3
            and " " not in inner
            and bool(first)
            and first[0].startswith(inner)
            and first[0] != inner
        )
        if person.kind != "PERSON" and not short and not _ALSO_CALLED.match(after):
            continue
        if (person.kind == "PERSON" or short) and bracket:
            close = text.find(")", person.end + bracket.end())
            if inner and close > 0 and _key(text[person.end + bracket.end() : close]) == inner:
                tie(inner, _key(person.text))
        also = _ALSO_CALLED.match(after)
        if also:
            tie(nickname(person.end + also.end()), _key(person.text))
    last = named[-1] if named else None
    if (
        last is not None
        and last.kind == "PERSON"
        and not re.search(r"[^\W\d_]", text[last.end :])
        and _SIGN_OFF.search(text[: last.start])
    ):  # "… Love, Migs": the writer of a message drafted for the participant is the participant
        tie(_key(last.text), user or "")
    for m in _QUOTED_INSIDE.finditer(text):  # "aarav 'bunty' kulkarni" in lowercase writing
        if any(e.start <= m.start("a") and m.end("c") <= e.end for e in named) or (
            any(e.start <= m.start("a") < e.end for e in named)
            and any(e.start < m.end("c") <= e.end for e in named)
        ):
            nick = _key(m.group("b"))
            if nick and not any(_function_word(w) for w in nick.split()):
                tie(nick, _key(f"{m.group('a')} {m.group('c')}"))
    for m in _BRACKET_INSIDE.finditer(
        text
    ):  # "anselm (selmi) grubauer": a first name, a nickname, a family name
        a = next((e for e in named if e.start <= m.start("a") < e.end), None)
        c = next((e for e in named if e.start < m.end("c") <= e.end), None)
        nick = _key(m.group("b"))
        known_nick = nick in known or any(
            e.kind == "PERSON" and e.start == m.start("b") and _key(e.text) == nick for e in named
        )
        if (
            a is not None
            and c is not None
            and a.kind == "PERSON"
            and known_nick
            and a.end <= m.end("a")
            and c.start >= m.start("c")
            and not _function_word(_fold(m.group("c")))
            and _fold(m.group("c")) not in _ORG_NOUNS
        ):
            tie(nick, _key(f"{m.group('a')} {m.group('c')}"))
    for m in _CALLS.finditer(text):
        nick = nickname(m.end())
        before = [e for e in named if e.end <= m.start() and e.kind == "PERSON"]
        if m.group("who").lower() == "me" or (not before and _SELF.search(text[: m.start()])):
            tie(nick, user or "")
        elif before:
            tie(nick, _key(before[-1].text))
    return pairs


#: A person's span that is a possessive relation phrase: "dupe's sister", "dupe's sister yemi
#: adebayo" (the owner, the relation word, the relative's own name).
_POSSESSIVE_RELATION = re.compile(
    rf"^(?P<owner>[^\W\d_][\w-]*(?:\s+[^\W\d_][\w-]*)?)['\u2019]s\s+(?:{RELATION_WORDS})"
    rf"(?:\s+(?P<name>[^\W\d_][\w'-]*(?:\s+[^\W\d_][\w'-]*){{0,2}}))?$",
    re.IGNORECASE,
)


def possessive_pieces(entity: Entity) -> list[Entity]:
    """A person's span written "X's sister Y" as its two people, X and Y ("X's sister" alone is X);
    any other span as it is.

    >>> span = Entity(3, 30, "PERSON", "dupe's sister yemi akintola", "relation")
    >>> [e.text for e in possessive_pieces(span)]
    ['dupe', 'yemi akintola']
    """
    m = _POSSESSIVE_RELATION.match(entity.text) if entity.kind == "PERSON" else None
    if m is None or _function_word(m.group("owner").lower()):
        return [entity]
    pieces = [Entity(entity.start, entity.start + m.end("owner"), "PERSON", m.group("owner"), entity.source)]
    if m.group("name") and not any(_function_word(w.lower()) for w in m.group("name").split()):
        pieces.append(
            Entity(
                entity.start + m.start("name"),
                entity.start + m.end("name"),
                "PERSON",
                m.group("name"),
                entity.source,
            )
        )
    return pieces


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
    #: How many spans named each ``(kind, key)`` (NER's majority label for a name it labels twice).
    seen: Counter[tuple[str, str]] = field(default_factory=Counter)
    aliases: dict[tuple[str, str], tuple[str, str]] = field(default_factory=dict)
    surfaces: dict[str, set[tuple[str, str]]] = field(default_factory=dict)
    #: Which detectors named each ``(kind, key)`` (context-cued evidence outweighs NER's label).
    evidence: dict[tuple[str, str], set[str]] = field(default_factory=lambda: defaultdict(set))
    #: Countries this participant names only as places they do not live or work in.
    residences: set[str] = field(default_factory=set)
    #: Place keys seen right after a place preposition or a comma ("in Fitzroy", "Smith St, Fitzroy").
    placed: set[str] = field(default_factory=set)
    kept_countries: set[str] = field(default_factory=set)
    #: How often the participant's texts name each place as a trip's destination ("a trip to Petra").
    destinations: Counter[str] = field(default_factory=Counter)
    #: Names some text ties to a home, family or work ("lives in plagwitz, leipzig").
    anchored: set[str] = field(default_factory=set)
    #: ``(nickname key, full-name key)`` pairs the texts tie together ("Jakub 'Kuba' Nowak").
    nicknames: set[tuple[str, str]] = field(default_factory=set)
    _active: dict[tuple[str, str], str] = field(default_factory=dict)
    #: Organisation keys that hold another entity ("mieterverein leipzig", "rohit's infosys"): their
    #: mentions are redacted piece by piece (see :meth:`_holds_entity`).
    _decomposed: set[str] = field(default_factory=set)
    #: ``(flat number key, street key)`` pairs a comma joins in some text ("Apt 12, Hanover Quay").
    units: set[tuple[str, str]] = field(default_factory=set)
    #: The participant's texts, accent-folded and lowercase, once each (see :meth:`note_text`).
    texts: set[str] = field(default_factory=set)
    #: Person keys a word of address begins ("didi amara"), with the first name they hold.
    _titled: dict[str, str] = field(default_factory=dict)
    _gazetteer: re.Pattern[str] | None = None
    _resolved: bool = False

    def note_place(self, key: str, text: str, start: int, end: int) -> None:
        """Record whether this mention of ``key`` names a trip's destination or a place tied to
        someone's home, family or work (see :meth:`resolve`)."""
        if trip_destination(text, start, end):
            self.destinations[key] += 1
        elif anchored_place(text, start, end):
            self.anchored.add(key)
        self._resolved = False

    def note_text(self, text: str) -> None:
        """Keep one of the participant's texts, to count how often it names something on its own."""
        self.texts.add(re.sub(r"\s+", " ", _fold(text)))
        self._resolved = False

    def note_units(self, text: str, entities: Sequence[Entity]) -> None:
        """Record the flat numbers ``text`` writes beside a street ("Apt 12, Hanover Quay")."""
        spans = sorted((e for e in entities if e.kind == "LOCATION"), key=lambda e: e.start)
        for first, second in zip(spans, spans[1:], strict=False):
            if _attached(first, second, text) and (
                _UNIT.fullmatch(first.text) or _UNIT.fullmatch(second.text)
            ):
                unit, street = (first, second) if _UNIT.fullmatch(first.text) else (second, first)
                self.units.add((_key(unit.text), _key(street.text)))
                self._resolved = False

    def _count(self, phrase: str) -> int:
        """Whole-word occurrences of the folded ``phrase`` in the participant's texts."""
        pattern = re.compile(rf"(?<!\w){re.escape(phrase)}(?!\w)")
        return sum(len(pattern.findall(text)) for text in self.texts)

    def _addressed(self, key: str) -> bool:
        """True when some text writes ``key`` after a greeting or a relation word ("dear X",
        "my landlord is X")."""
        pattern = re.compile(
            rf"\b(?:(?:dear|hi|hello)\s+|(?:{RELATION_WORDS})\s+(?:is\s+)?){re.escape(key)}(?!\w)"
        )
        return any(pattern.search(text) for text in self.texts)

    def _written_as_place(self, key: str) -> bool:
        """True when some text writes ``key`` after a place preposition other than "at" ("in X",
        "from X"; "at X" may be a shop or a workplace)."""
        pattern = re.compile(
            rf"\b(?:in|to|from|near|around|outside|into|towards?|via)\s+(?:the\s+)?{re.escape(key)}(?!\w)"
        )
        return any(pattern.search(text) for text in self.texts)

    def learn(self, entities: Sequence[Entity]) -> None:
        """Add identifier mentions to the participant's gazetteer (resolved on first redaction)."""
        for entity in (piece for whole in entities for piece in possessive_pieces(whole)):
            if entity.kind not in _GAZETTEER_KINDS:
                continue
            key = _kind_key(entity.kind, entity.text)
            if not key:
                continue
            if (entity.kind, key) not in self.mentions:
                self.mentions[(entity.kind, key)] = entity.text
            self.seen[(entity.kind, key)] += 1
            if entity.source not in self.evidence[(entity.kind, key)]:
                self.evidence[(entity.kind, key)].add(entity.source)
                self._resolved = False

    def _address_labels(self, separators: str) -> set[str]:
        """The pieces of six letters or more of the participant's web addresses, handles and email
        addresses, split wherever ``separators`` (a regular expression) matches: with
        ``[^\\w-]+`` a hyphenated label stays whole ("pepper-mango"), with ``[^\\w]+`` it falls
        apart ("pepper", "mango")."""
        return {
            piece
            for kind, key in self.mentions
            if kind in ("URL", "HANDLE", "EMAIL")
            for piece in re.split(separators, canonical(kind, key))
            if len(piece) >= 6
        }

    def _label_mentions(self) -> dict[tuple[str, str], str]:
        """The mentions with each surface's kind settled by its evidence.

        A surface the NER model alone gave a second kind ("Leeds" as a person beside "in leeds" as a
        place, "Sofía" as a place beside "my sister Sofía Ibarra") keeps only the kind that a context
        cue, a pattern or the profile gave it; a place the NER model named whose first word is an
        organisation found by a cue ("the Tesco Extra" beside "works at tesco"), or that is the first
        word(s) of one, no known place and never written as a place ("Hillcrest" beside "a nurse at
        Hillcrest Medical Center", unlike "a GP in Fitzroy" beside "fitzroy auto repairs"), is that
        organisation; a person the NER model alone named that begins an organisation's name and no
        person's ("weta" beside "Weta Workshop") is that organisation, and one that ends a place's
        name after words that name the kind of place ("del carmen" beside "colonia del carmen") is
        that place; a named span with digits that an ID pattern found elsewhere ("LRK-4821") is
        that ID.
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
        people = {key for kind, key in self.mentions if kind == "PERSON" and " " not in key}
        codes = {canonical(kind, key) for kind, key in cued if kind in ("ID_NUMBER", "PHONE")}
        full_names = [key.split() for kind, key in self.mentions if kind == "PERSON" and " " in key]
        families = {t[-1] for t in full_names if len(t[-1]) >= 3}
        firsts = {t[0] for t in full_names}
        all_orgs = {key for kind, key in self.mentions if kind == "ORGANIZATION"}
        places = [key for kind, key in self.mentions if kind == "LOCATION"]
        labels = self._address_labels(r"[^\w-]+")
        cued_firsts = {k.split()[0] for kind, k in cued if kind == "PERSON" and " " in k}
        cued_single = {k for kind, k in cued if kind == "PERSON" and " " not in k}
        self._titled.clear()
        for (kind, key), surface in self.mentions.items():
            words = key.split()
            if (
                kind in ("ORGANIZATION", "LOCATION")
                and (kind, key) not in cued
                and 2 <= len(words) <= 3
                and not set(words) & (_ORG_NOUNS | _BUSINESS_NOUNS | _PLACE_GENERIC | _NAME_PART_STOP)
                and key not in place_names()
                and not any(_function_word(w) for w in words)
            ):
                if len(words) == 2 and words[1] in cued_firsts and words[0] not in people | firsts | families:
                    # "didi amara" NER called an organisation beside "amara okoye": a word of
                    # address before her first name
                    active.setdefault(("PERSON", key), surface)
                    self._titled[key] = words[1]
                    continue
                if words[-1] in cued_single and self._addressed(key):
                    # "Dear Nana Kwame Boateng" beside "mr boateng": the person, with a title
                    active.setdefault(("PERSON", key), surface)
                    continue
            if (
                kind == "PERSON"
                and (kind, key) not in cued
                and len(words) == 2
                and key.replace(" ", "") in labels
                and words[1] in people
                and words[0] not in people
                and not any(t[0] == words[0] and t != words for t in full_names)
                and any(  # her short name, whose full first name the texts also write ("Carolina")
                    len(n) >= len(words[1]) + 2 and (n.startswith(words[1]) or n.endswith(words[1]))
                    for n in people | firsts
                )
            ):  # "Pane Lina" beside etsy.com/shop/panelina and "Lina": a shop named after her
                active.setdefault(("ORGANIZATION", key), surface)
                continue
            if kind == "PERSON" and (kind, key) not in cued:
                article = next(
                    (
                        k
                        for k in ("ORGANIZATION", "LOCATION")
                        for a in _ARTICLES
                        if (k, f"{a} {key}") in self.mentions and (k, key) not in self.mentions
                    ),
                    None,
                )
                if article is not None and " " in key:
                    # NER's person "cesmar villalta" beside its organisation "el CESMAR Villalta"
                    active.setdefault((article, key), surface)
                    continue
            if kind in _NAMED_KINDS and (kind, key) not in cued and re.search(r"\d", key):
                if canonical("ID_NUMBER", key) in codes:
                    continue  # NER's place "LRK-4821" beside the plate an ID pattern found
            if kind == "PERSON" and (kind, key) not in cued and key not in person_parts:
                if any(o.startswith(f"{key} ") for o in all_orgs) and not any(
                    o.startswith(f"{key} ") for k, o in self.mentions if k == "PERSON"
                ):  # NER's person "weta" beside "Weta Workshop": the organisation's short form
                    active.setdefault(("ORGANIZATION", key), surface)
                    continue
                if any(o.endswith(f" {key}") and _longer_form(key, o) for o in places):
                    active.setdefault(("LOCATION", key), surface)
                    continue  # NER's person "del carmen" beside the place "colonia del carmen"
            if (
                kind != "PERSON"
                and (kind, key) not in cued
                and (len(key.split()) == 1 or key.split()[0] in firsts)
                and any(p in families for t in key.split() if "-" in t for p in t.split("-"))
            ):  # NER's place "Tolulope Adeyemi-Bakare" beside the person "tolulope adeyemi"
                active.setdefault(("PERSON", key), surface)
                continue
            if kind in _NAMED_KINDS and (kind, key) not in cued:
                others = {k for k in kinds_of[key] if k != kind and (k, key) in cued}
                if others or (kind != "PERSON" and key in person_parts):
                    continue
                if kind != "PERSON" and (
                    _HONORIFIC_AFTER.search(key)
                    or (surface.islower() and " " in key and key.split()[0] in people and "'" not in key)
                ):  # "tanaka-san"; "kunle bakare" in lowercase writing beside the person "kunle"
                    active.setdefault(("PERSON", key), surface)
                    continue
                rivals = [k for k in kinds_of[key] if k != kind and (k, key) not in cued]
                if (
                    rivals
                    and kind == "ORGANIZATION"
                    and all(self.seen[(k, key)] > self.seen[(kind, key)] for k in rivals)
                ):  # NER's one "joão's" organisation beside its three "João" people
                    continue
                if (
                    kind != "LOCATION"
                    and "LOCATION" in kinds_of[key]
                    and not any((k, key) in cued for k in kinds_of[key])
                    and key in self.placed
                    and key not in country_names()
                ):  # NER's person "Oberkampf" beside its place "near Oberkampf": one place
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
                    or (  # "vendramo" beside "vendramo bakery", both NER's alone, never written as a place
                        " " not in key
                        and key not in place_names()
                        and not self._written_as_place(key)
                        and self.seen[(kind, key)] == 1
                        and any(
                            o.startswith(f"{key} ") and o.split()[-1] in _ORG_NOUNS | _BUSINESS_NOUNS
                            for o in all_orgs
                        )
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
        self._decomposed = {
            key for kind, key in self._active if kind == "ORGANIZATION" and self._holds_entity(key)
        }
        for key in self._decomposed:
            del self._active[("ORGANIZATION", key)]
        by_kind: dict[str, list[str]] = defaultdict(list)
        for kind, key in self._active:
            by_kind[kind].append(key)
        # persons: full names first; a name part (or its hyphen-free form) joins the one full name holding it
        people = sorted(by_kind["PERSON"], key=lambda k: -len(k.split()))
        parts: dict[str, set[str]] = defaultdict(set)
        # (a name after a salutation, a title or an honorific counts by its name alone: "sehr geehrte
        # frau brenner" holds only "brenner")
        for key in people:
            tokens = canonical("PERSON", key).split()
            if len(tokens) > 1 and key not in self._titled:
                for token in tokens:
                    if token not in _NAME_PART_STOP and len(token) >= 2 and not _function_word(token):
                        parts[token].add(key)
                        parts[token.replace("-", "")].add(key)
        for key in people:
            bare = canonical("PERSON", key) if " " in key else key
            owners = parts.get(bare) or parts.get(bare.replace("-", "")) or set()
            owners.discard(key)
            if len(bare.split()) == 1 and len(owners) == 1:
                self.aliases[("PERSON", key)] = ("PERSON", next(iter(owners)))
            elif len(key.split()) > 1:
                longer = [o for o in people if o != key and f" {key} " in f" {o} "]
                if len(longer) == 1:
                    self.aliases[("PERSON", key)] = ("PERSON", longer[0])
        for token, owners in parts.items():
            if len(owners) == 1 and ("PERSON", token) not in self._active:
                self.aliases[("PERSON", token)] = ("PERSON", next(iter(owners)))
        # organisations: a token prefix of one longer name; places: a token suffix (street of an address)
        # (a place is no street of a longer name without a house number, "Jabal Amman" beside
        # "Amman", nor the town of its postal district or numbered address, "Dublin 2")
        for kind in ("ORGANIZATION", "LOCATION"):
            keys = sorted(by_kind[kind], key=len, reverse=True)
            for key in keys:
                longer = [
                    o
                    for o in keys
                    if len(o) > len(key)
                    and (o.startswith(f"{key} ") or o.endswith(f" {key}"))
                    and (kind == "ORGANIZATION" or _longer_form(key, o))
                ]
                if len(longer) == 1 and len(key) >= 3:
                    self.aliases[(kind, key)] = (kind, longer[0])
                elif kind == "ORGANIZATION" and not longer and len(key.split()) > 1:
                    # "Mwangaza Prep" beside "Mwangaza Preparatory School": each word begins one
                    abbreviated = [o for o in keys if o != key and _abbreviates(key, o)]
                    if len(abbreviated) == 1:
                        self.aliases[(kind, key)] = (kind, abbreviated[0])
        # "Mercy General Hospital" is also called "Mercy General": drop a generic last noun
        for key in by_kind["ORGANIZATION"]:
            tokens = key.split()
            if (
                len(tokens) >= 3
                and tokens[-1] in _ORG_NOUNS
                and ("ORGANIZATION", " ".join(tokens[:-1])) not in self._active
            ):
                self.aliases.setdefault(("ORGANIZATION", " ".join(tokens[:-1])), ("ORGANIZATION", key))
        # "Hôpital Sainte-Odile" is also called "Sainte-Odile": drop a generic first noun (a name
        # NER alone gave, never written as a place, no known town)
        for key in by_kind["ORGANIZATION"]:
            tokens = key.split()
            if len(tokens) < 2 or tokens[0] not in _INSTITUTION_FIRST:
                continue
            rest = " ".join(tokens[1:])
            for kind in ("LOCATION", "ORGANIZATION"):
                if (
                    (kind, rest) in self._active
                    and (kind, rest) not in self.aliases
                    and not self.evidence[(kind, rest)] & _CUED_SOURCES
                    and rest not in place_names()
                    and not self._written_as_place(rest)
                ):
                    self.aliases[(kind, rest)] = ("ORGANIZATION", key)
        # "Brack" beside "Brackenvale": a one-word place that begins exactly one other, 3+ letters longer
        places = [k for k in by_kind["LOCATION"] if re.fullmatch(r"[^\W\d_]+", k)]
        for key in places:
            if len(key) < 3 or ("LOCATION", key) in self.aliases:
                continue
            longer = [o for o in places if o.startswith(key) and len(o) >= len(key) + 3]
            if len(longer) == 1 and key not in place_names():
                self.aliases[("LOCATION", key)] = ("LOCATION", longer[0])
        self._join_acronyms(by_kind)
        self._join_spellings(by_kind)
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
        # a place named as a trip's destination ("a trip to Petra", "2 days in Wadi Rum"), talked
        # about again, and never tied to a home, family or work identifies nobody: kept, like a
        # country (named once, "a trip to Don Benito" may be a family visit the text leaves unsaid)
        self.kept_countries |= {
            key
            for kind, key in self._active
            if kind == "LOCATION"
            and self.destinations[key] >= 1
            and self.destinations[key] + sum(self.seen[(k, key)] for k in _NAMED_KINDS) >= 3
            and key not in self.anchored
            and (kind, key) not in self.aliases
            and not any(a == ("LOCATION", key) for a in self.aliases.values())
            and {k for k, _ in self.surfaces.get(key, ())} == {"LOCATION"}
            and not (self.evidence[(kind, key)] & _CUED_SOURCES)
        }
        self._gazetteer = None
        self._resolved = True

    def _holds_entity(self, key: str) -> bool:
        """True for an organisation the named-entity model alone found whose words after the first
        hold a place or another organisation the participant also names on its own ("infosys
        hinjewadi" beside "infosys" and "hinjewadi"), that lists places only ("surulere & yaba"),
        or that is a person's possessive before a known organisation ("rohit's infosys"): each
        entity keeps its own placeholder there. A place that starts a name ("Leeds City Council")
        or follows "of" ("Royal Infirmary of Edinburgh"),
        a person's name inside a business's name ("Ceramiche Pina", "Ama's Oven") and an
        organisation's own short form ("Velmora HR") do not count."""
        if self.evidence[("ORGANIZATION", key)] & _CUED_SOURCES:
            return False
        tokens = [re.sub(r"['\u2019]s$", "", t) for t in key.split()]
        countries = country_names()

        bare = " ".join(tokens)  # without the possessive
        whole = self._count(key) + (self._count(bare) if bare != key else 0)

        def known(kind: str, words: list[str]) -> bool:
            sub = " ".join(words)
            return (
                len(sub) >= 3
                and sub != key
                and (kind, sub) in self._active
                and not (kind == "LOCATION" and sub in countries)
                and (not self.texts or self._count(sub) > whole)  # named on its own too ("Clyde Cycles")
            )

        covered = [not re.search(r"[^\W\d_]", t) or t in ("and", "und", "y", "et", "e") for t in tokens]
        for i in range(len(tokens)):
            for j in range(i + 1, len(tokens) + 1):
                words = tokens[i:j]
                if (
                    i > 0
                    and tokens[i - 1] not in _OF_WORD  # "Royal Infirmary of Edinburgh" is one name
                    and (known("LOCATION", words) or known("ORGANIZATION", words))
                ):
                    return True
                if known("LOCATION", words):
                    covered[i:j] = [True] * (j - i)
                if (
                    j < len(tokens)
                    and key.split()[j - 1].endswith(("'s", "\u2019s"))
                    and known("PERSON", words)
                    and known("ORGANIZATION", tokens[j:])
                ):
                    return True  # "rohit's infosys"
        return all(covered)  # "Surulere & Yaba": places only

    def _pieces(self, span: Entity, gazetteer: Sequence[Entity]) -> list[Entity]:
        """An organisation span that holds other entities (:meth:`_holds_entity`) as the gazetteer's
        hits inside it plus its other capitalised words, one organisation of their own ("Immigration
        Bureau"); punctuation, "&" and a possessive stay as written."""
        inside = [g for g in gazetteer if span.start <= g.start and g.end <= span.end]
        pieces: list[Entity] = []
        cursor = span.start
        text = span.text
        for hit in [*sorted(inside, key=lambda g: g.start), None]:
            stop = hit.start if hit is not None else span.end
            segment = re.sub(r"^['\u2019]s\b", "  ", text[cursor - span.start : stop - span.start])
            m = re.search(r"[^\W\d_][\w'\u2019.-]*(?:\s+[^\W\d_][\w'\u2019.-]*)*", segment)
            if m and re.search(r"(?<![\w'])[A-Z\u00c0-\u00de]", m.group(0)):
                rest = re.sub(r"['\u2019]s$", "", m.group(0).rstrip(" .'\u2019"))
                if rest and not _function_word(rest.lower()):
                    begin = cursor + m.start()
                    pieces.append(Entity(begin, begin + len(rest), "ORGANIZATION", rest, span.source))
            if hit is not None:
                cursor = hit.end
        return pieces

    def _join_acronyms(self, by_kind: dict[str, list[str]]) -> None:
        """Alias an acronym written in capitals to the one organisation or place it abbreviates: the
        initials of its words ("TTSH" of "Tan Tock Seng Hospital", "SA" of "San Antonio") or, for
        three letters, the start of one place's single-word name ("AMM" of "Amman") or its first
        letter and two of its later consonants ("KRK" of "Kraków")."""
        named = [
            (kind, key)
            for kind in ("ORGANIZATION", "LOCATION")
            for key in by_kind[kind]
            if (kind, key) not in self.aliases
        ]
        for kind in ("ORGANIZATION", "LOCATION", "PERSON"):
            for key in by_kind[kind]:
                surface = self.mentions.get((kind, key), "")
                if (kind, key) in self.aliases or not re.fullmatch(r"[A-Z]{2,5}", surface):
                    continue
                targets = {
                    (k, o)
                    for k, o in named
                    if o != key
                    and (
                        "".join(w[0] for w in o.split() if w not in ("of", "the", "de", "and")) == key
                        or (k == "LOCATION" and len(key) == 3 and " " not in o and _code_of(key, o))
                    )
                }
                targets = {  # not a place's inflected form beside it ("krakowie" of "krakow")
                    (k, o)
                    for k, o in targets
                    if not any(o2 != o and len(o2) >= 5 and o.startswith(o2) for _, o2 in targets)
                }
                if len(targets) == 1:
                    self.aliases[(kind, key)] = next(iter(targets))

    def _join_spellings(self, by_kind: dict[str, list[str]]) -> None:
        """Alias the spellings of one identifier (:func:`canonical`), a person's names in another
        order ("Tanaka Haruto"), a nickname the texts tie to a name ("Jakub 'Kuba' Nowak"), a
        short form that begins exactly one known first name ("ani" for "Anika"), a family name
        whose full names all name one person, a place's inflected form ("Krakowie" of "Kraków")
        and a number an ID pattern matched that ends with a known phone's digits."""

        def root(entity: tuple[str, str]) -> tuple[str, str]:
            seen = set()
            while entity in self.aliases and entity not in seen:
                seen.add(entity)
                entity = self.aliases[entity]
            return entity

        def join(short: tuple[str, str], long: tuple[str, str]) -> None:
            a, b = root(short), root(long)
            if a != b:
                self.aliases[a] = b

        for kind in ("PHONE", "URL", "EMAIL", "ID_NUMBER", "LOCATION", "PERSON", "HANDLE"):
            groups: dict[str, list[str]] = defaultdict(list)
            for key in by_kind[kind]:
                groups[canonical(kind, key)].append(key)
            for canon, keys in groups.items():
                keys = sorted(keys, key=lambda k: (-len(k), k))
                for key in keys[1:]:
                    join((kind, key), (kind, keys[0]))
                if (
                    kind == "PERSON"
                    and canon not in keys
                    and (("PERSON", canon) in self._active or ("PERSON", canon) in self.aliases)
                ):  # "suzuki-san" beside "Suzuki Kenji", whose part "suzuki" is an alias
                    join((kind, keys[0]), (kind, canon))
        # a place's inflected form the recognizer found on its own ("Krakowie" beside "Kraków")
        places = set(by_kind["LOCATION"])
        for key in by_kind["LOCATION"]:
            for n in range(1, 4):
                base = key[:-n]
                if len(base) >= 5 and base in places and re.fullmatch(_INFLECTION, key[-n:]):
                    join(("LOCATION", key), ("LOCATION", base))
                    break
        # a number an ID pattern matched that ends with a known phone's digits ("06-41827735")
        phones = {canonical("PHONE", k): k for k in by_kind["PHONE"]}
        for key in by_kind["ID_NUMBER"]:
            digits = re.sub(r"\D", "", key)
            if len(digits) >= 9 and not re.search(r"[a-z]", key) and digits[-8:] in phones:
                join(("ID_NUMBER", key), ("PHONE", phones[digits[-8:]]))
        # flat numbers written beside a street ("Rua dos Pinheiros 498, apto 72")
        for unit, street in self.units:
            if ("LOCATION", unit) in self._active and ("LOCATION", street) in self._active:
                join(("LOCATION", unit), ("LOCATION", street))
        # a postcode found with its town ("29200 Brest") is also written alone ("ships to 29200")
        for key in by_kind["LOCATION"]:
            code = re.fullmatch(r"(\d{4,5}) [^\W\d_][\w-]*", key)
            if code and ("LOCATION", code.group(1)) not in self._active:
                self.aliases.setdefault(("LOCATION", code.group(1)), ("LOCATION", key))
        # an ID number that a phone pattern also matched ("SIN 046 454 286") is that ID number
        ids = {re.sub(r"\D", "", canonical("ID_NUMBER", k)): k for k in by_kind["ID_NUMBER"]}
        for key in by_kind["PHONE"]:
            if re.sub(r"\D", "", key) in ids:
                join(("PHONE", key), ("ID_NUMBER", ids[re.sub(r"\D", "", key)]))
        people = by_kind["PERSON"]
        by_tokens: dict[tuple[str, ...], list[str]] = defaultdict(list)
        for key in people:
            if len(key.split()) > 1:
                by_tokens[tuple(sorted(key.split()))].append(key)
        for keys in by_tokens.values():
            for key in keys[1:]:
                join(("PERSON", key), ("PERSON", keys[0]))
        # "Tolulope Adeyemi-Bakare" beside "tolulope adeyemi": one first name, a double-barrelled
        # family name that holds the other
        for key in people:
            tokens = key.split()
            if len(tokens) != 2:
                continue
            fuller = [
                o
                for o in people
                if len(o.split()) == 2
                and o != key
                and o.split()[0] == tokens[0]
                and tokens[1] in o.split()[1].split("-")[0:1] + o.split()[1].split("-")[-1:]
                and "-" in o.split()[1]
            ]
            if len(fuller) == 1:
                join(("PERSON", key), ("PERSON", fuller[0]))
        # "Lari Nogueira" beside "Larissa Nogueira": one family name, a first name that begins the other
        for key in people:
            tokens = key.split()
            if len(tokens) != 2 or len(tokens[0]) < 3:
                continue
            fuller = [
                o
                for o in people
                if len(o.split()) == 2
                and o.split()[1] == tokens[1]
                and o.split()[0].startswith(tokens[0])
                and len(o.split()[0]) >= len(tokens[0]) + 2
            ]
            if len(fuller) == 1:
                join(("PERSON", key), ("PERSON", fuller[0]))
        for nick, full in self.nicknames:
            if ("PERSON", full) in self._active or ("PERSON", full) in self.aliases:
                for key in {nick, canonical("PERSON", nick)}:
                    if ("PERSON", key) in self._active:
                        join(("PERSON", key), ("PERSON", full))
        first_names = defaultdict(set)
        for key in people:
            if not re.fullmatch(r"[^\W\d_]+", key.split()[0]):
                continue
            first_names[key.split()[0]].add(root(("PERSON", key)))

        def join_short_forms(shortest: int, longer_by: int, *, ends: bool) -> None:
            """A one-word name of ``shortest`` letters or more, joined to nothing yet, that begins
            (``ends``: ends) known first names ``longer_by`` letters longer or more, all of one
            person, joins that person."""
            for key in people:
                if len(key.split()) != 1 or len(key) < shortest or root(("PERSON", key)) != ("PERSON", key):
                    continue
                owners = {
                    owner
                    for name, roots in first_names.items()
                    if (name.endswith(key) if ends else name.startswith(key))
                    and len(name) >= len(key) + longer_by
                    for owner in roots
                }
                if len(owners) == 1:
                    join(("PERSON", key), next(iter(owners)))

        join_short_forms(3, 2, ends=False)  # "lari" of "Larissa"
        # a short form that ends exactly one known first name three letters longer or more ("lina" of
        # "Carolina", "tino" of "Valentino")
        join_short_forms(4, 3, ends=True)
        # "kupic zosi" in lowercase writing: NER's two-word person whose one word is the inflected
        # form of a known name ("zosi" of "zosia") and whose other word no text writes anywhere else
        singles = {key for key in people if " " not in key and len(key) >= 4}
        for key in people:
            tokens = key.split()
            surface = self.mentions.get(("PERSON", key), "")
            if (
                len(tokens) != 2
                or not surface.islower()
                or self.evidence[("PERSON", key)] & _CUED_SOURCES
                or root(("PERSON", key)) != ("PERSON", key)
                or not self.texts
            ):
                continue
            for i, word in enumerate(tokens):
                other = tokens[1 - i]
                names = {
                    k
                    for k in singles
                    if k != word
                    and k[:-1] == word[: len(k) - 1]
                    and re.fullmatch(r"[aeiouyąęó]", k[-1])
                    and re.fullmatch(r"[iyeu]?", word[len(k) - 1 :])
                }
                if (
                    len(names) == 1
                    and not any(other in o.split() for o in people if o != key)
                    and self._count(other) == self._count(key)
                ):
                    join(("PERSON", key), ("PERSON", next(iter(names))))
                    break
        # "didi amara": a word of address and a first name, the person of that first name
        for key, name in self._titled.items():
            if ("PERSON", key) in self._active:
                join(("PERSON", key), ("PERSON", name))
        # a family name that every full name holding it shares with one person, once nicknames and
        # spellings are joined ("Salinas" of "Alberto 'Beto' Salinas" and "Beto Salinas")
        for key in people:
            if len(key.split()) != 1 or root(("PERSON", key)) != ("PERSON", key):
                continue
            holders = {root(("PERSON", o)) for o in people if len(o.split()) > 1 and key in o.split()}
            if len(holders) == 1:
                join(("PERSON", key), next(iter(holders)))

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
        comma = re.search(r"([^\W\d_][\w'-]*)\s*,\s*$", text[:start])
        after_place = comma is not None and (
            _fold(comma.group(1)) in place_names()
            or "LOCATION" in {k for k, _ in self.surfaces.get(_key(comma.group(1)), ())}
        )  # "Amman, Jordan": a place after a place and a comma
        if "PERSON" in by_kind and _PERSONAL_POSSESSIVE.match(after):
            return ("PERSON", by_kind["PERSON"][1])  # "reply to jordan's email"
        if "LOCATION" in by_kind and (
            set(before) & _PLACE_BEFORE or _PLACE_AFTER.match(after) or after_place
        ):
            return ("LOCATION", by_kind["LOCATION"][1])
        if "PERSON" in by_kind and (set(before) & _PERSON_BEFORE or _PERSON_AFTER.match(after)):
            return ("PERSON", by_kind["PERSON"][1])
        kind = "PERSON" if "PERSON" in by_kind else sorted(by_kind)[0]
        return (kind, by_kind[kind][1])

    def _uninflected(self, key: str) -> str:
        """The person or place surface ``key`` inflects ("krakowie" → "krakow"), else ``key``."""
        for n in range(1, 4):
            candidates = self.surfaces.get(key[:-n], set())
            if len(key) - n >= 5 and {k for k, _ in candidates} & {"PERSON", "LOCATION"}:
                return key[:-n]
        return key

    def _gazetteer_matches(self, text: str) -> list[Entity]:
        if not self._resolved:
            self.resolve()
        if self._gazetteer is None:
            surfaces = sorted(self.surfaces, key=len, reverse=True)
            if not surfaces:
                return []
            alternation = "|".join(
                re.escape(s).replace(r"\ ", r"\s+") + (_INFLECTION if _INFLECTABLE.fullmatch(s) else "")
                for s in surfaces
            )
            self._gazetteer = re.compile(rf"(?<![\w@#/.-])(?:{alternation})(?![\w@-]|\.\w)")
        found = []
        folded = _fold(text)
        for m in self._gazetteer.finditer(folded):
            surface = text[m.start() : m.end()]
            candidates = self.surfaces.get(m.group(0)) or self.surfaces.get(_key(m.group(0)), set())
            if not candidates:  # an inflected form ("Krakowie" of "Kraków")
                candidates = self.surfaces.get(self._uninflected(m.group(0)), set())
            if not candidates:
                continue
            kind, key = self._choose(candidates, text, m.start(), m.end())
            if kind in _NAMED_KINDS and not _plausible_name(surface, text, m.start(), m.end(), kind):
                continue
            found.append(Entity(m.start(), m.end(), kind, surface, "gazetteer"))
        return found

    def _replacement(self, span: Entity, text: str) -> str | None:
        """The placeholder (or generalized date) for one span; ``None`` for a country kept."""
        if span.kind == "DATE":
            return generalize_date(span.text)
        key = _kind_key(span.kind, span.text)
        nick = (
            _NICK_BEFORE.search(text[: span.start]) if span.kind in _NAMED_KINDS and " " not in key else None
        )
        if nick is not None:  # "Rosaura 'Doña Chayo' Ibarra": the family name of the full name the texts tie
            full = f"{_key(nick.group('a'))} {key}"
            if ("PERSON", full) in self.surfaces.get(full, ()):
                return self._placeholder("PERSON", full)
        if key not in self.surfaces and span.source == "gazetteer":
            key = self._uninflected(key)
        candidates = self.surfaces.get(key, set())
        same_kind = {c for c in candidates if c[0] == span.kind}
        if same_kind:
            kind, key = sorted(same_kind)[0]
        elif candidates and span.kind in _NAMED_KINDS:  # its evidence gave the surface another kind
            kind, key = self._choose(candidates, text, span.start, span.end)
        else:
            kind = span.kind
        if kind == "LOCATION" and key in self.kept_countries:
            return None  # a country is no direct identifier (see :func:`country_names`)
        return self._placeholder(kind, key)

    def _with_first_name(self, spans: list[Entity], text: str) -> list[Entity]:
        """A known family name found alone takes the capitalised word right before it that no
        sentence starts with, no span holds and no function word, title or greeting is ("Danke,
        Jonas Brenner" beside the full name "hannelore brenner"): the first name the recognizers
        missed, one person of its own."""
        families = {
            o.split()[-1] for k, o in [*self._active, *self.aliases.values()] if k == "PERSON" and " " in o
        }
        stops = foreign_stop_words() | _stop_words()
        out: list[Entity] = []
        for span in spans:
            m = _WORD_BEFORE.search(text[: span.start])
            word = m.group("w") if m else ""
            if (
                span.kind == "PERSON"
                and m is not None
                and " " not in _key(span.text)
                and _key(span.text) in families
                and span.text[:1].isupper()
                and not (out and out[-1].end > m.start("w"))
                and _fold(word) not in stops
                and not _HONORIFIC_BEFORE.match(_fold(word) + " ")
                and not _SALUTATION.match(_fold(word) + " ")
                and not _TITLE_WORD.match(_fold(word) + " ")
                and not _SIGN_OFF.search(word)
                and not re.fullmatch(rf"(?:{RELATION_WORDS})", _fold(word))
                and not {k for k, _ in self.surfaces.get(_fold(word), ())} - {"PERSON"}
                and _fold(word) not in place_names()
            ):
                start = m.start("w")
                out.append(Entity(start, span.end, "PERSON", text[start : span.end], span.source))
                continue
            out.append(span)
        return out

    def _join_run_together(self, spans: list[Entity], text: str) -> list[Entity]:
        """Two named spans that are one name: a capitalised word that never stands alone in the
        participant's texts right after a name ("Brackley Lane Striders", "Provincia Vellora"), and
        two words joined by "and"/"&" whose letters spell a web address's or handle's label ("Pepper
        and Mango" beside "@peppermango"). The joined span is an organisation when either is."""
        if len(spans) < 2:
            return spans
        labels = self._address_labels(r"[^\w]+")
        out = [spans[0]]
        for span in spans[1:]:
            prev = out[-1]
            gap = text[prev.end : span.start]
            joined = None
            if prev.kind in _NAMED_KINDS and span.kind in _NAMED_KINDS:
                whole = _key(text[prev.start : span.end])
                letters = re.sub(r"[^\w]|\b(?:and|und|y|et|e)\b", "", _fold(text[prev.start : span.end]))
                if re.fullmatch(r"\s+(?:and|&)\s+", gap, re.IGNORECASE) and letters in labels:
                    joined = whole
                elif (
                    (
                        gap == " "
                        or (  # "Poradnia Zdrowa na Wzgorzu": a short particle between two names
                            re.fullmatch(r" [a-z]{1,3} ", gap)
                            and gap.strip() in _NAME_PARTICLES | foreign_stop_words()
                            and prev.kind == span.kind
                        )
                    )
                    and re.fullmatch(r"[^\W\d_][\w-]+", span.text)
                    and span.text[:1].isupper() == prev.text[:1].isupper()
                    and _key(span.text) not in place_names()
                    and self.texts
                    and self._count(_key(span.text)) == self._count(whole)
                    and not self.evidence[(span.kind, _key(span.text))] & _CUED_SOURCES
                ):
                    joined = whole
                elif (  # "Brask Mills Tollen St" found as "Brask" and a street: a word never written alone
                    gap == " "
                    and prev.kind == "ORGANIZATION"
                    and re.fullmatch(r"[^\W\d_][\w-]+", prev.text)
                    and len(span.text.split()) > 1
                    and prev.text[:1].isupper()
                    and _key(prev.text) not in place_names()
                    and self.texts
                    and self._count(_key(prev.text)) == self._count(whole)
                    and not self.evidence[(prev.kind, _key(prev.text))] & _CUED_SOURCES
                ):
                    joined = whole
                elif (  # "rosa amelia duarte" found as "rosa amelia" and the family name "duarte"
                    gap == " "
                    and prev.kind == span.kind == "PERSON"
                    and " " not in _key(span.text)
                    and span.text[:1].isupper() == prev.text[:1].isupper()
                    and any(
                        k == "PERSON" and len(o.split()) > 1 and o.split()[-1] == _key(span.text)
                        for k, o in self._active
                    )
                ):
                    joined = whole
            if joined is None:
                out.append(span)
                continue
            kind = "ORGANIZATION" if "ORGANIZATION" in (prev.kind, span.kind) else prev.kind
            out[-1] = Entity(prev.start, span.end, kind, text[prev.start : span.end], prev.source)
        return out

    def redact(self, text: str, entities: Sequence[Entity]) -> tuple[str, list[tuple[Entity, str]]]:
        """Replace ``entities`` plus every gazetteer surface in ``text``.

        Returns ``(text, applied)``: ``applied`` pairs each replaced span with its replacement.
        """
        gazetteer = self._gazetteer_matches(text)
        # a detector's span wins; a gazetteer hit at the same place corrects its person/place label
        by_span = {(g.start, g.end): g for g in gazetteer}
        chosen = []
        for entity in (piece for whole in entities for piece in possessive_pieces(whole)):
            if entity.kind == "ORGANIZATION" and _kind_key(entity.kind, entity.text) in self._decomposed:
                chosen.extend(self._pieces(entity, gazetteer))
                continue
            hit = by_span.get((entity.start, entity.end))
            if hit is not None and hit.kind in _NAMED_KINDS and entity.kind in _NAMED_KINDS:
                entity = Entity(entity.start, entity.end, hit.kind, entity.text, entity.source)
            if entity.kind in _NAMED_KINDS and not _plausible_name(
                entity.text, text, entity.start, entity.end, entity.kind
            ):
                continue
            chosen.append(entity)
        spans = self._join_run_together(
            self._with_first_name(
                [_with_house_number(span, text) for span in resolve_overlaps([*chosen, *gazetteer])], text
            ),
            text,
        )
        pieces: list[str] = []
        applied: list[tuple[Entity, str]] = []
        cursor = 0
        skip: set[int] = set()
        for i, span in enumerate(spans):
            if i in skip:
                continue
            nxt = spans[i + 1] if i + 1 < len(spans) else None
            replacement = None
            if nxt is not None and _attached(span, nxt, text):
                # "Victoria, TX", "Apt 12, Hanover Quay": one place, the town's or street's placeholder
                replacement = self._replacement(nxt if _UNIT.fullmatch(span.text) else span, text)
                if replacement is not None:
                    span = Entity(span.start, nxt.end, span.kind, text[span.start : nxt.end], span.source)
                    skip.add(i + 1)
            if replacement is None:
                replacement = self._replacement(span, text)
            if replacement is None:
                continue
            pieces.append(text[cursor : span.start])
            pieces.append(replacement)
            applied.append((span, replacement))
            cursor = span.end
        pieces.append(text[cursor:])
        return "".join(pieces), applied


#: A flat or unit number ("Apt 12", "apto 72", "Flat 3B", "Unit #4").
_UNIT = re.compile(r"(?i)(?:apt|apto|apartment|flat|unit|suite|depto|dpto)\.?\s*#?\d{1,4}[a-z]?")


def _attached(first: Entity, second: Entity, text: str) -> bool:
    """True for two places a comma joins into one: a town and its two-capital state ("Victoria,
    TX") or a flat number and its street ("Apt 12, Hanover Quay", "Rua dos Pinheiros 498, apto 72")."""
    if first.kind != "LOCATION" or second.kind != "LOCATION" or text[first.end : second.start] != ", ":
        return False
    return bool(
        re.fullmatch(r"[A-Z]{2}", second.text) and not re.fullmatch(r"[A-Z]{2,}", first.text)
    ) or bool(_UNIT.fullmatch(first.text) or _UNIT.fullmatch(second.text))


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


#: Chat words a named-entity span runs on into ("jordan lol").
_CHAT_WORDS = frozenset(
    "lol lmao haha hahaha omg pls plz thx ty tbh btw idk imo fyi xx xoxo bday b-day".split()
)
_OBJECT_NEXT = re.compile(r"\s+(?:her|him|them|me|us)\b")


def _trim_run_on(entity: Entity, text: str) -> Entity:
    """A multi-word person or place span without the lowercase word it ran on into: a chat word
    ("jordan lol"), a verb form ending in -s, -ed or -ing before a function word ("husband kunle
    handles the car", "from lecce living in bologna") or a word before an object pronoun ("my
    friend fatima link her NIN"). A family name stays ("kunle bakare says")."""
    if entity.kind not in ("PERSON", "LOCATION", "ORGANIZATION"):
        return entity
    raw = text[entity.start : entity.end]
    words = list(re.finditer(r"\S+", raw))
    if len(words) < 2 or raw.lower() != entity.text.lower():  # NER may have run on a truecased copy
        return entity
    last = words[-1].group(0)
    after = text[entity.end :]
    stops = _stop_words()
    nxt = re.match(r"\s+([\w']+)", after)
    verb = (
        len(last) >= 4
        and re.search(r"(?:ing)$" if entity.kind == "ORGANIZATION" else r"(?:s|ed|ing)$", last)
        and last.rstrip("s") not in _NAME_PARTICLES
        and nxt is not None
        and nxt.group(1).lower() in stops
    )
    if not last.islower() or not (last in _CHAT_WORDS or verb or _OBJECT_NEXT.match(after)):
        return entity
    if entity.kind == "ORGANIZATION" and not verb:
        return entity  # an organisation loses only a verb it ran on into ("from vellora living in …")
    if entity.kind == "PERSON" and not verb and last not in _CHAT_WORDS and len(words) > 2:
        return entity  # "give ana maria bello her keys": only a two-word span loses its last word
    end = entity.start + words[-2].end()
    return Entity(entity.start, end, entity.kind, entity.text[: words[-2].end()], entity.source)


def _trim_lead(entity: Entity) -> Entity:
    """A named span without the lowercase words before its first capitalised one ("but call
    Woodlawn Academy"; a name particle stays: "de Souza"), and a lowercase organisation of three
    words or more without the generic noun it starts with ("school woodlawn academy")."""
    if entity.kind not in _NAMED_KINDS:
        return entity
    words = list(re.finditer(r"\S+", entity.text))
    first = 0
    if any(w.group(0)[:1].isupper() for w in words):
        while (
            first < len(words) - 1
            and words[first].group(0).islower()
            and words[first].group(0) not in _NAME_PARTICLES
        ):
            first += 1
    elif entity.kind == "ORGANIZATION" and len(words) >= 3 and words[0].group(0) in _ORG_NOUNS:
        first = 1
    if first == 0:
        return entity
    cut = words[first].start()
    return Entity(entity.start + cut, entity.end, entity.kind, entity.text[cut:], entity.source)


def _combine(text: str, patterns: Sequence[Entity], ner: Sequence[Entity]) -> list[Entity]:
    """Pattern matches plus NER entities; an NER span overlapping a pattern match keeps only the
    words outside it ("Manchester M20" beside the postcode "M20 3ED"); implausible or public
    named-entity spans are dropped before they can seed the gazetteer."""
    strong = [p for p in patterns if p.source in _STRONG_SOURCES]
    weak = [_trim_run_on(_trim_lead(p), text) for p in patterns if p.source not in _STRONG_SOURCES]
    kept: list[Entity] = []
    for entity in (piece for whole in ner for piece in _span_pieces(whole, text)):
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
        kept.append(_trim_run_on(_trim_lead(entity), text))
    named = [
        e
        for e in [*strong, *kept, *weak]
        if e.kind not in _NAMED_KINDS or _plausible_name(e.text, text, e.start, e.end, e.kind)
    ]
    return resolve_overlaps(named)


#: Languages whose spaCy stop words mark where a run-on named-entity span stops ("jörg und ich …").
_STOP_LANGUAGES = ("de", "fr", "es", "pt", "it", "nl", "pl", "tr", "sv", "da", "ro")
#: Particles inside names ("Lagoa da Conceição", "van der Berg", "Frankfurt am Main"): never a cut.
_NAME_PARTICLES = frozenset(
    "de da do dos das del della di du des van von der den ter la le el al bin ibn am an of the y e st".split()
)
#: Separators no name spans: a line break, a bar, a middle dot, an arrow, a spaced dash.
_SPAN_BREAK = re.compile(r"\s*(?:\n|\||·|→|\s[—–]\s)\s*")
#: A quotation mark that opens or closes a word inside a span: a nickname's quotes ("Jesusa 'Doña
#: Chuy' Ramírez", "aarav 'bunty' kulkarni") part the name from the nickname.
_QUOTE_BREAK = re.compile(
    r"\s*(?:(?<=\s)['\u2018\u2019\"\u201c\u201d]|['\u2018\u2019\"\u201c\u201d](?=\s|$))\s*"
)
_RELATION_WORD = re.compile(rf"(?:{RELATION_WORDS})")
#: Possessive determiners ("my", "mi", "ma", "mein", "moja"): before a lowercase noun and a name,
#: the noun is the relation ("mi novio tomi").
_POSSESSIVE_DETERMINERS = frozenset(
    """my our your his her their mi mis nuestra nuestro mes notre meu minha meus minhas teu tua mein
    meine meinem meinen meiner dein deine unser unsere mio miei mie moja moj moje mój mijn mijne onze
    mitt""".split()
)


@functools.lru_cache(maxsize=1)
def foreign_stop_words() -> frozenset[str]:
    """Stop words of :data:`_STOP_LANGUAGES` from spaCy's language data (empty without spaCy),
    less name particles and everyday-word first names."""
    words: set[str] = set()
    for lang in _STOP_LANGUAGES:
        try:
            module = importlib.import_module(f"spacy.lang.{lang}.stop_words")
        except ImportError:
            continue
        words |= {w for w in module.STOP_WORDS if w.isalpha()}
    return frozenset(words - _NAME_PARTICLES - _COMMON_WORD_NAMES)


def _span_pieces(entity: Entity, text: str) -> list[Entity]:
    """A named-entity span cut where no name runs: at a line break, "|", "·", "→" or a spaced dash
    ("Barcelona\\nPhone", "Deloitte | ACA"), at " & " between places ("Surulere & Yaba"), at a
    nickname's quotes ("Rosaura 'Doña Chayo' Ibarra"), after a lowercase relation word before a
    person ("mum birgit"), and, in
    lowercase writing, before a function word that follows the first word ("jörg und ich wollen
    am" → "jörg", "emre wird" → "emre"); a capitalised span loses the lowercase words after its last
    capitalised word ("Kuba nas odbiera z lotniska" → "Kuba"), a person's span its trailing
    number ("Omar 10") and a town its postcode ("Seoul 04007"). Pieces that hold no letter, and
    lowercase pieces of a capitalised span, are dropped."""
    if entity.kind not in _NAMED_KINDS or entity.source != "ner":
        return [entity]
    breaks = re.compile(
        rf"{_SPAN_BREAK.pattern}|{_QUOTE_BREAK.pattern}" + (r"|\s+&\s+" if entity.kind == "LOCATION" else "")
    )
    pieces: list[Entity] = []
    cursor = 0
    segments = []
    for m in breaks.finditer(entity.text):
        segments.append((cursor, m.start()))
        cursor = m.end()
    segments.append((cursor, len(entity.text)))
    stops = foreign_stop_words() | _stop_words()
    cased = any(w[:1].isupper() for w in entity.text.split())
    for s0, s1 in segments:
        words = list(re.finditer(r"\S+", entity.text[s0:s1]))
        if not words or (cased and not any(w.group(0)[:1].isupper() for w in words)):
            continue  # "Deloitte | ACA | open": a lowercase piece of a capitalised span
        bare = [w.group(0).lower().strip(",.;:!?()\"'") for w in words]
        keep = len(words)
        if any(w.group(0)[:1].isupper() for w in words):
            while keep > 1 and words[keep - 1].group(0).islower():
                keep -= 1  # "Kuba nas odbiera z lotniska": the words after the capitalised name
        first = 0
        while (
            first < keep - 1
            and words[first].group(0).islower()
            and bare[first] in stops
            and bare[first] not in _NAME_PARTICLES
            and (entity.kind != "PERSON" or bare[first] in _stop_words())
        ):
            first += 1  # "o joão …", "w karim": a function word before the name
        if (
            entity.kind == "PERSON"
            and first < keep - 2
            and bare[first] in _POSSESSIVE_DETERMINERS
            and words[first + 1].group(0).islower()
        ):
            first += 2  # "mi novio tomi", "meine freundin lotte": a possessive and the relation noun after it
        while (
            entity.kind == "PERSON"
            and first < keep - 1
            and words[first].group(0).islower()
            and _RELATION_WORD.fullmatch(bare[first])
        ):
            first += 1  # "mum birgit", "mother birgit": the relation word before the name
        for i in range(first + 1, keep):
            if (
                words[i].group(0).islower()
                and bare[i] in stops
                and not (i + 1 < len(words) and words[i + 1].group(0)[:1].isupper())
            ):
                keep = i
                break
        if entity.kind == "PERSON":
            while (
                keep > 1
                and words[keep - 1].group(0).isdigit()
                and _fold(" ".join(bare[first : keep - 1])) not in place_names()
            ):
                keep -= 1  # "Omar 10", not the postal district "Dublin 2" NER calls a person
        elif (
            entity.kind == "LOCATION"
            and keep > 1
            and re.fullmatch(r"\d{4,6}", words[keep - 1].group(0))
            and re.fullmatch(r"[^\W\d_]{3,}", words[keep - 2].group(0))
        ):
            keep -= 1  # "Seoul 04007": the town and its postcode are two places
        start = entity.start + s0 + words[first].start()
        end = entity.start + s0 + words[keep - 1].end()
        surface = text[start:end].rstrip(" ,.;:!?")
        if not re.search(r"[^\W\d_]", surface):
            continue
        pieces.append(Entity(start, start + len(surface), entity.kind, surface, entity.source))
    return pieces


#: A school year or class ("Grade 2", "Year 10", "Form 4", "Primary 5", "Std 8").
_SCHOOL_YEAR = re.compile(r"(?i)^(?:grade|year|class|form|standard|std|primary|kindergarten)\s*-?\d{1,2}$")
#: A saint's title right before a name: the saint (and the saint's day), not the participant's
#: relative who shares the name.
_SAINT_BEFORE = re.compile(r"\b(?:sant|san|santa|sao|são|sankt|saint|st\.?|ste\.?)\s+$", re.IGNORECASE)
#: A person's span that starts with a saint's title ("Sant Jordi"): the saint or the saint's day.
_SAINT_START = re.compile(r"^(?:sant|san|santa|sao|são|sankt|saint|st\.?|ste\.?)\s+\w", re.IGNORECASE)


_LABEL_LINE = re.compile(r"^[ \t]*([A-Z\u00c0-\u00de][^\n:]{0,30}?)[ \t]*:[ \t]*\S", re.MULTILINE)


def _form_label(text: str, start: int, end: int) -> bool:
    """True for a span that starts a line and ends at a colon in a form: three or more lines of the
    text start with a different "Label:" ("Domicilio: …\nTeléfono: …\nAllergies: none"). A name
    that labels two lines (a chat transcript's speaker) is no form label."""
    line_start = text.rfind("\n", 0, start) + 1
    if text[line_start:start].strip() or not re.match(r"[ \t]*:", text[end:]):
        return False
    labels = Counter(m.group(1).strip() for m in _LABEL_LINE.finditer(text))
    return len(labels) >= 3 and labels[text[line_start:end].strip()] == 1


def _plausible_name(surface: str, text: str, start: int, end: int, kind: str | None = None) -> bool:
    """False for a name-shaped span that is an everyday word in context.

    A lowercase everyday-word name ("will", "grace"), a capitalized one at the start of a sentence
    before a determiner or pronoun ("Will the…", "Grace period"), and a part of a hyphenated word
    ("Spider" in "Spider-Man"; but a capitalised name before a lowercase suffix, "Anika-didi", is
    one) are not names; nor is a public mention (:func:`public_mention`), nor
    a person's name after a saint's title ("Sant Jordi").
    """
    if public_mention(surface, text, start, end, kind=kind) or _COMPOUND_TITLE.search(surface):
        return False
    if _form_label(text, start, end):
        return False  # "Allergies: none" in a filled-in form: a field's label, not a name
    if _SCHOOL_YEAR.match(surface.strip()):
        return False  # "Grade 2", "Year 10", "Form 4": a school year, not a place or a name
    if kind == "PERSON" and (_SAINT_BEFORE.search(text[:start]) or _SAINT_START.match(surface)):
        return False  # "Sant Jordi", "São João", "Sankt Martin": a saint or the saint's day
    suffix = text[end + 1 : end + 2] if end < len(text) and text[end] == "-" else ""
    capitalised = all(w[:1].isupper() for w in surface.split())  # "Anika-didi", not "jollof cook-offs"
    if (suffix.isalpha() and not (capitalised and suffix.islower())) or (
        start > 0 and text[start - 1] == "-"
    ):
        return False
    key = _fold(surface)
    if key in _COMMON_WORD_NAMES:
        cued = (
            _SOCIAL_BEFORE.search(text[:start])
            or _RELATION_BEFORE.search(text[:start])
            or (_NAME_ONLY_AFTER.match(text[end:]) and not _DETERMINER_BEFORE.search(text[:start]))
        )
        if surface.islower() and not (cued and not _FUNCTION_NEXT.match(text[end:])):
            return False  # "grace period", "i will": but "a picnic with mark" names him
        sentence_start = not text[:start].strip() or text[:start].rstrip()[-1:] in ".!?:;\n"
        following = text[end:]
        if sentence_start and (
            _FUNCTION_NEXT.match(following)
            or (
                re.match(r"\s+[a-z]", following)
                and not _PERSON_AFTER.match(following)
                and not _NAME_ONLY_AFTER.match(following)
            )
        ):
            return False
    return True
