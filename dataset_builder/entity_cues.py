"""Context-cued recognizers: names that only the words around them mark as identifiers.

People write memories in lowercase and name their employer, a friend or a local venue once,
with no capital letter for an NER model to see. These recognizers read the cue instead:

* an employer after a job word or a job change ("backend dev at stripe", "is leaving accenture");
* a person after a social verb, or before a reporting verb, written with a capital
  ("suggest Siobhán meets you", "Wish Lan luck", "Priyanka says");
* a venue after "at the" written with a capital ("climbs at the Depot");
* a named feature of a place ("runs along the grand canal", "near the Water of Leith");
* a school or university named by its type in any position ("does trinity college dublin …");
* a lowercase name after a title or form of address ("mr thabo ndlovu", "frau berger", "oma liesl
  turns 85"), and the practice after "<someone's doctor> is at";
* the pieces of an address given as one ("address is 9 mill lane, drumkeel", "lives at ul.
  tarnowska 18, kraków-podgórze").

Each returns :class:`~dataset_builder.detectors.Entity` spans with its own ``source`` name so the
de-identifier can weigh them against the NER model's labels.

>>> [(e.kind, e.text) for e in find_context_entities("im a backend dev at stripe in austin")]
[('ORGANIZATION', 'stripe'), ('LOCATION', 'austin')]
>>> [(e.kind, e.text) for e in find_context_entities("i work from home at the moment")]
[]
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .detectors import _NOT_NAME as _NOT_NAME_AFTER_TITLE
from .detectors import RELATION_WORDS, STREET_TYPE_FIRST, Entity, place_names
from .public import public_mention

__all__ = [
    "CLOSINGS",
    "GREETINGS",
    "NEVER_NAMES",
    "domain_labels",
    "extend_place_parts",
    "find_called_organisations",
    "find_clubs",
    "find_context_entities",
    "find_domain_names",
    "find_address_lines",
    "find_address_parts",
    "find_appositive_people",
    "find_cued_people",
    "find_features",
    "find_greeted_people",
    "find_homes",
    "find_institutions",
    "find_job_organisations",
    "find_listed_people",
    "find_lowercase_people",
    "find_named_people",
    "find_nicknames",
    "find_practices",
    "find_signed_people",
    "find_titled_people",
    "find_venues",
    "find_zip_codes",
]

_I = re.IGNORECASE
_WORD = r"[A-Za-z\u00c0-\u024f][\w&'\u00c0-\u024f-]*"
_CAP = r"(?-i:[A-Z\u00c0-\u00de])[\w'\u00c0-\u024f-]*"
#: Words that are never a name on their own (function words, time words, months and days).
_NEVER = frozenset(
    """the a an my your his her their our its this that these those it is was are be been home work
    night nights weekend weekends least times moment school uni college town early late now soon today
    tonight tomorrow yesterday next last for on at in to and or but with from of by about after before
    again too here there then also just still so very really all some any every each one two three
    i you he she we they me him them us what which who when where why how if whether
    monday tuesday wednesday thursday friday saturday sunday january february march april may june
    july august september october november december christmas easter mum mom dad nan gran grandma
    grandpa everyone everybody someone somebody nobody anyone anybody people office job house city
    country party gym team class hospital store shop company spring summer autumn fall winter""".split()
)
try:  # spaCy's English stop words (326), when spaCy is installed
    from spacy.lang.en.stop_words import STOP_WORDS as _SPACY_STOP_WORDS
except ImportError:  # pragma: no cover - spaCy ships with the [local] extra
    _SPACY_STOP_WORDS = set()
_NEVER = _NEVER | frozenset(_SPACY_STOP_WORDS)
#: The words above, for other modules: never a name on their own.
NEVER_NAMES = _NEVER
_JOB = (
    r"(?:works?|working|worked|job|jobs|shifts?|nights|lates|interns?|interning|employed|dev|developer|"
    r"engineer|nurse|teacher|analyst|designer|manager|consultant|cashier|barista|lecturer|researcher|"
    r"scientist|accountant|lawyer|pharmacist|volunteers?|volunteering|lead|director|officer|assistant|"
    r"receptionist|technician|administrator|admin|clerk|paramedic|doctor|surgeon|chef|cook|driver|"
    r"courier|contractor|freelancer|student|placement|internship|promotion|role|position|post)"
)
_JOB_AT = re.compile(
    rf"\b(?:{_JOB}\s+(?:[a-z]+\s+)?at|(?:works?|working|worked|employed|volunteer\w*|freelanc\w*|"
    rf"contract\w*)\s+(?:[a-z]+\s+)?for)\s+(?:the\s+)?(?P<v>{_WORD}(?:\s+{_WORD}){{0,2}})",
    _I,
)
_JOB_CHANGE = re.compile(
    r"\b(?:leaving|left|joined|joining|joins|quit|quitting|quits|hired\s+by|laid\s+off\s+from|"
    r"fired\s+from|offer\s+from|interview(?:s|ed|ing)?\s+(?:at|with)|start(?:s|ed|ing)?\s+at|"
    rf"transferr(?:ed|ing)\s+to)\s+(?P<v>{_WORD}(?:\s+{_WORD}){{0,2}})",
    _I,
)
_WORKPLACE_IN = re.compile(rf"\s+(?:in|near|outside)\s+(?P<v>{_WORD}(?:\s+{_WORD})?)", _I)
_ORG_SUFFIX = frozenset(
    """bank group labs lab hospital school plant store superstore studio agency college university ltd inc
    co plc partners associates solutions systems consulting""".split()
)


#: Second words of a place written in lowercase ("salford quays", "canary wharf", "crystal palace").
_PLACE_SUFFIX = frozenset(
    """quays quay wharf park heights village town hill hills green square bridge cross end gate gardens
    palace vale valley bay beach point harbour harbor springs falls city""".split()
)


def _first_words(
    text: str, start: int, span: str, *, need_capital: bool = False, suffixes: frozenset[str] = _ORG_SUFFIX
) -> Entity | None:
    """The name at the front of ``span``: words up to the first everyday word (or, for a name in
    lowercase, just one word plus a trailing organisation suffix)."""
    words = list(re.finditer(r"\S+", span))
    kept: list[re.Match[str]] = []
    for word in words:
        bare = word.group(0).rstrip(",.;:!?)'\"").lower()
        if not bare or bare in _NEVER or (bare.endswith("'s") and (kept or need_capital)):
            break
        if kept and not word.group(0)[0].isupper() and bare not in suffixes:
            break  # a lowercase name is one word ("stripe in austin"), or a word and its type
        kept.append(word)
        if word.group(0)[-1:] in ",.;:!?)":
            break
    if not kept or (need_capital and not kept[0].group(0)[0].isupper()):
        return None
    begin, end = start + kept[0].start(), start + kept[-1].end()
    surface = re.sub(r"[,.;:!?)'\"]+$", "", text[begin:end])
    if len(surface) < 2:
        return None
    return Entity(begin, begin + len(surface), "ORGANIZATION", surface, "")


#: Where someone's doctor is: the practice after "<provider> is at", in any case and language
#: ("user's gp is at przychodnia pod lipami"), up to six words.
_PROVIDER_AT = re.compile(
    r"(?:\b(?:my|our|his|her|their|your)|['\u2019]s)\s+(?:new\s+|family\s+)?"
    r"(?:gp|doctor|dentist|physio|vet|therapist|optician|paediatrician|pediatrician|midwife|"
    r"gyn(?:a)?ecologist|orthodontist)(?:['\u2019]s)?\s+(?:is|are)\s+(?:now\s+)?at\s+"
    rf"(?P<v>{_WORD}(?:\s+{_WORD}){{0,5}})",
    _I,
)


def find_practices(text: str) -> list[Entity]:
    """The practice after "<someone's doctor> is at" ("user's gp is at przychodnia pod
    lipami"), up to the first everyday word; not after "the" ("is at the health centre"), not a
    public name, and not "the vet is at lunch" (no one's own doctor)."""
    found = []
    for m in _PROVIDER_AT.finditer(text):
        words = list(re.finditer(r"\S+", m.group("v")))
        kept: list[re.Match[str]] = []
        for w in words:
            bare = w.group(0).rstrip(",.;:!?)'\"").lower()
            if not bare or bare in _NEVER:
                break
            kept.append(w)
            if w.group(0)[-1:] in ",.;:!?)":
                break
        if not kept:
            continue
        start = m.start("v")
        end = start + kept[-1].start() + len(kept[-1].group(0).rstrip(",.;:!?)'\""))
        surface = text[start:end]
        if len(surface) < 3 or public_mention(surface, text, start, end):
            continue
        found.append(Entity(start, end, "ORGANIZATION", surface, "orgcue"))
    return found


def find_job_organisations(text: str) -> list[Entity]:
    """An employer after a job word or a job change, in any case ("backend dev at stripe",
    "is leaving accenture on friday", "a finance lead at DBS"); not "work from home"."""
    found = []
    for pattern in (_JOB_AT, _JOB_CHANGE):
        for m in pattern.finditer(text):
            if pattern is _JOB_CHANGE and re.search(
                r"\b(?:my|your|his|her|their|our|the|a|an)\s+$", text[: m.start()], _I
            ):
                continue  # "my leaving cert", "a leaving do": an adjective, not a job change
            entity = _first_words(text, m.start("v"), m.group("v"))
            if entity is None or public_mention(entity.text, text, entity.start, entity.end):
                continue
            if public_mention(text[m.start() : entity.end], text, m.start(), entity.end):
                continue  # "Leaving Cert": the cue word is part of a public name
            if entity.text.lower() in place_names() and not entity.text[0].isupper():
                continue  # "left london": a town, found by the place recognizer
            found.append(Entity(entity.start, entity.end, "ORGANIZATION", entity.text, "jobcue"))
            where = _WORKPLACE_IN.match(text, entity.end)
            if where:  # "a pharmacist at boots in leicester": where the employer is
                place = _first_words(text, where.start("v"), where.group("v"), suffixes=_PLACE_SUFFIX)
                if place is not None:
                    found.append(Entity(place.start, place.end, "LOCATION", place.text, "jobcue"))
    return found


_SOCIAL_VERB = (
    r"(?:tell|ask|text|call|ring|email|e-mail|message|invite|remind|thank|suggest|wish|meet|congratulate|"
    r"hug|phone|dm|ping|told|asked|texted|called|invited|reminded|thanked|met)"
)
_PERSON_BEFORE_CUE = re.compile(
    rf"\b{_SOCIAL_VERB}\s+(?P<v>{_CAP}(?:\s+{_CAP})?)",
    _I,
)
_REPORTING_AFTER = re.compile(
    r"^\s+(?:says|said|wants|wanted|thinks|thought|asked|texted|told|loves|hates|prefers|reckons|"
    r"is\s+coming|is\s+visiting|is\s+moving|is\s+getting|meets|will\s+be|would\s+love|has\s+been)\b"
)
_PERSON_AFTER_CUE = re.compile(rf"(?<![\w'-])(?P<v>{_CAP}(?:\s+{_CAP})?)(?=\s)")


def _person(text: str, start: int, end: int) -> Entity | None:
    surface = text[start:end]
    words = surface.split()
    while words and words[-1].lower() in _NEVER:
        words.pop()
    while words and words[0].lower() in _NEVER:  # "Since Ji-woo loves…": the name is after "Since"
        start += len(words[0]) + 1
        words.pop(0)
    if not words or surface.isupper() or (len(words) == 1 and words[0].lower() in ("user", "users")):
        return None  # "User prefers hosting…": the memory's word for the participant
    surface = " ".join(words)
    if len(surface) < 2 or public_mention(surface, text, start, start + len(surface)):
        return None
    return Entity(start, start + len(surface), "PERSON", surface, "personcue")


#: Occasions and kin that follow a person's possessive ("oksana's birthday", "priya's mum").
_PERSONAL_AFTER_POSSESSIVE = (
    r"(?:birthday|bday|wedding|engagement|party|graduation|baby\s+shower|hen\s+do|stag\s+do|funeral|"
    r"retirement|leaving\s+do|mum|mom|dad|parents|husband|wife|partner|boyfriend|girlfriend|kids|son|"
    r"daughter|sister|brother|family|new\s+job|new\s+flat|new\s+house|flat|house|place|\d{1,3}(?:st|nd|rd|th)|"
    r"school|teacher|class|nursery|portfolio|anniversary|christening|visa|passport)"
)
_POSSESSIVE_PERSON = re.compile(
    rf"(?<![\w'-])(?P<v>[a-z\u00c0-\u024f][\w\u00c0-\u024f-]+)['\u2019]s\s+{_PERSONAL_AFTER_POSSESSIVE}\b"
)
_ME_AND = re.compile(r"\bme\s+and\s+(?P<v>[a-z\u00c0-\u024f][\w\u00c0-\u024f-]+)\b")
_DETERMINER_BEFORE = re.compile(r"\b(?:my|the|a|an|his|her|our|their|your|this|that|its)\s+$", _I)
_NOT_LOWERCASE_PERSON = frozenset(
    """user dog dogs cat cats baby kid kids child children someone everyone nobody anyone team company
    boss client neighbour neighbor friend friends family mum mom dad sister brother cousin nan gran
    partner husband wife son daughter aunt uncle niece nephew colleague coworker flatmate roommate
    housemate landlord teacher coach doctor work school uni church""".split()
)


_X_AND_I = re.compile(r"(?:^|(?<=[.!?]\s))(?P<v>[a-z\u00c0-\u024f][\w\u00c0-\u024f-]+)\s+and\s+i\b")


def find_lowercase_people(text: str) -> list[Entity]:
    """A lowercase name before a personal possessive, after "me and" or before "and i" at a
    sentence start ("for oksana's birthday", "me and bongani are driving", "arj and i are 12 years
    married"); not "my dog's birthday", "the user's flat" or a relation word. An everyday-word name
    ("will") counts here, where the verb cannot stand ("will's 30th", "will and i")."""
    from .resolver import _COMMON_WORD_NAMES  # the resolver builds on this module's recognizers

    found = []
    for pattern in (_POSSESSIVE_PERSON, _ME_AND, _X_AND_I):
        for m in pattern.finditer(text):
            word = m.group("v")
            if word not in _COMMON_WORD_NAMES and (word in _NEVER or len(word) < 3):
                continue
            if word in _NOT_LOWERCASE_PERSON:
                continue
            if _DETERMINER_BEFORE.search(text[: m.start("v")]):
                continue
            if public_mention(word, text, m.start("v"), m.end("v")):
                continue
            found.append(Entity(m.start("v"), m.end("v"), "PERSON", word, "personcue"))
    return found


#: The forms of address that are also kinship words ("oma", "uncle", "tía"): after "my" or "user's"
#: they are the relation word, and a verb can follow them ("auntie cooked jollof").
_KIN_WORDS = """tante oncle tia tío tía tio auntie aunty aunt uncle abuela abuelo nonna nonno oma opa lola
lolo tita tito mzee kuya babcia dziadek bunica yiayia pappou gogo mormor morfar farmor farfar""".split()
_KIN_TITLES = frozenset(_KIN_WORDS)
#: The kinship titles that are also relation words ("uncle", "aunt"), whose name the relation rule finds.
_RELATION_TITLE = re.compile(rf"(?:{RELATION_WORDS})", _I)
#: Titles written in lowercase before a name in lowercase: English honorifics and clergy, and forms
#: of address of other languages ("mr thabo ndlovu", "pastor will asked", "frau berger", "oma liesl";
#: a capitalised title is NER's). Not "ms" (Microsoft, multiple sclerosis) nor the address words that
#: are also English words ("ate", "don").
_TITLE = (
    r"(?:mr|mrs|mister|dr|prof|professor|sir|dame|pastor|reverend|rev|revd|vicar|rabbi|imam|sheikh|"
    r"herr|frau|monsieur|madame|mme|señor|señora|senhor|senhora|signor|signora|dona|doña|"
    rf"{'|'.join(_KIN_WORDS)})"
)
_TITLED = re.compile(
    rf"(?<![\w'./@-])(?P<t>{_TITLE})\.?[ \t]+(?P<v>[a-z\u00df-\u024f][\w\u00df-\u024f'-]*"
    r"(?:[ \t]+[a-z\u00df-\u024f][\w\u00df-\u024f'-]*)?)"
)


def _fold_word(word: str) -> str:
    """A word without a trailing possessive and punctuation, in lowercase ("Resi's," → "resi")."""
    return re.sub(r"(?:['\u2019]s)?[,.;:!?)'\"\u2019]*$", "", word).lower()


_POSSESSED = re.compile(r"(?:\b(?:my|our|your|his|her|their|the|a)|['\u2019]s)\s+$", _I)
#: What follows a verb and no name: an article, a pronoun or a possessive ("dr fixed my knee").
_OBJECT_AFTER = re.compile(r"[ \t]+(?:a|an|the|me|him|us|them|my|your|our|their|it|this|some)\b", _I)
_KIN_OBJECT_AFTER = re.compile(
    r"[ \t]+(?:a|an|the|me|him|her|us|them|my|your|his|our|their|it|this|that|some|up|out|for|to|with)\b", _I
)
_ROMANCE_BEFORE = re.compile(r"\b(?:al|del|au|du|à\s+la|a\s+la)\s+$", _I)
#: A verb after an everyday-word name that the everyday word cannot take ("pastor will asked").
_VERB_AFTER_NAME = re.compile(
    r"[ \t]+(?:asked|said|says|told|wants|wanted|thinks|thought|texted|called|suggested|recommended|"
    r"reckons|mentioned|invited|sent|gave|wrote|emailed|is|was|has|had)\b|['\u2019]s\b"
)


def find_titled_people(text: str) -> list[Entity]:
    """A name in lowercase after a title or a form of address ("mr thabo ndlovu", "frau berger",
    "oma liesl turns 85"): up to two words, stopping at an everyday word. An everyday-word name
    counts only before a verb it cannot take ("pastor will asked", not "the pastor will lead"), and a
    title inside a Romance phrase is a noun ("tacos al pastor")."""
    from .resolver import _COMMON_WORD_NAMES, foreign_stop_words  # the resolver builds on this module

    foreign = foreign_stop_words()
    found = []
    for m in _TITLED.finditer(text):
        if _ROMANCE_BEFORE.search(text, 0, m.start()):
            continue  # "tacos al pastor", "a la madame": the title is a noun of the phrase
        words = list(re.finditer(r"\S+", m.group("v")))
        kept: list[re.Match[str]] = []
        for w in words:
            bare = w.group(0).rstrip(",.;:!?)'\"\u2019").lower()
            bare = re.sub(r"['\u2019]s$", "", bare)
            if not bare or len(bare) < 2:
                break
            if bare in _COMMON_WORD_NAMES and not kept:
                if not _VERB_AFTER_NAME.match(text, m.start("v") + w.start() + len(bare)):
                    break
            elif bare in _NEVER or bare in _NOT_NAME_AFTER_TITLE or bare in foreign:
                break  # "tía en quelvén": a function word of another language ends the name too
            kept.append(w)
            if re.search(r"[,.;:!?)'\"\u2019]$", w.group(0)):
                break
        if not kept:
            continue
        start = m.start("v")
        end = m.start("v") + kept[-1].start() + len(_fold_word(kept[-1].group(0)))
        kin = m.group("t").lower() in _KIN_TITLES
        if kin and _RELATION_TITLE.fullmatch(m.group("t")) and _POSSESSED.search(text, 0, m.start()):
            continue  # "my uncle bought…": a relation word, the relation rule's ("my oma liesl" is not)
        if (_KIN_OBJECT_AFTER if kin else _OBJECT_AFTER).match(text, end):
            continue  # "uncle bought a car", "dr fixed my knee", "sir thanks a lot": a verb, not a name
        if kin and re.fullmatch(r"[a-z]{3,}ed", _fold_word(kept[0].group(0))):
            continue  # "auntie cooked jollof": a past tense
        if kin:  # one word, then what ends a name ("oma ute turns 85", "(oma ute)"), not "nonna made pasta"
            end = m.start("v") + kept[0].start() + len(_fold_word(kept[0].group(0)))
            nxt = re.match(r"[ \t]+([^\W\d_]+)", text[end:])
            if (
                nxt
                and nxt.group(1).lower() not in _NOT_NAME_AFTER_TITLE
                and nxt.group(1).lower() not in _NEVER
            ):
                continue
        surface = text[start:end]
        if len(surface) < 2 or public_mention(surface, text, start, end, kind="PERSON"):
            continue
        found.append(Entity(start, end, "PERSON", surface, "relation"))
    return found


#: A person's name given as such: "user's name is sneha kulkarni", "my wife's maiden name was X".
_NAME_IS = re.compile(
    rf"(?:\b(?:my|his|her|their|our|your)|\b(?:user|{RELATION_WORDS})['\u2019]s)\s+"
    r"(?:(?:full|first|last|family|maiden|real|legal|middle|married)\s+)?name\s+(?:is|was)\s+"
    r"(?P<v>[^\W\d_][\w'\u2019\u00c0-\u024f-]*(?:\s+[^\W\d_][\w'\u2019\u00c0-\u024f-]*){0,3})",
    _I,
)


def find_named_people(text: str) -> list[Entity]:
    """The name after "<someone>'s name is" ("user's name is sneha kulkarni", "my full name is
    Tolulope Adeyemi"), in any case, up to four words, stopping at a word that is no name ("is",
    "and", "from"); not after a pet's or a business's "name is"."""
    found = []
    for m in _NAME_IS.finditer(text):
        words = list(re.finditer(r"\S+", m.group("v")))
        kept = []
        for w in words:
            if w.group(0).lower() in _NEVER:
                break
            kept.append(w)
        if not kept:
            continue
        start, end = m.start("v") + kept[0].start(), m.start("v") + kept[-1].end()
        surface = text[start:end].rstrip(".,;:!?)'\u2019")
        if len(surface) < 2:
            continue
        found.append(Entity(start, start + len(surface), "PERSON", surface, "personcue"))
    return found


def find_cued_people(text: str) -> list[Entity]:
    """A capitalised name after a social verb ("suggest Siobhán meets you", "Wish Lan luck") or
    before a reporting verb ("Priyanka says"); not a pronoun, a relation word, a month or a
    public name."""
    found = []
    for m in _PERSON_BEFORE_CUE.finditer(text):
        if m.group(0)[0].isupper() and text[: m.start()].rstrip()[-1:] not in ("", ".", "!", "?", "\n", ":"):
            continue  # "Anthropic Message Batches": a capitalised verb inside a name is no verb
        entity = _person(text, m.start("v"), m.end("v"))
        if entity is not None:
            found.append(entity)
    for m in _PERSON_AFTER_CUE.finditer(text):
        if not _REPORTING_AFTER.match(text[m.end("v") :]):
            continue
        entity = _person(text, m.start("v"), m.end("v"))
        if entity is not None:
            found.append(entity)
    return found


_VENUE = re.compile(rf"\b(?:at|to|from|outside|near|opposite)\s+the\s+(?P<v>{_CAP}(?:\s+{_CAP}){{0,2}})", _I)


def find_venues(text: str) -> list[Entity]:
    """A venue written with a capital after "at the" ("climbs at the Depot"); not a public name,
    a holiday or a month."""
    found = []
    for m in _VENUE.finditer(text):
        words = m.group("v").split()
        while words and words[-1].lower().rstrip(",.;:!?") in _NEVER:
            words.pop()
        surface = " ".join(words).rstrip(",.;:!?")
        start = m.start("v")
        if not surface or surface.lower() in _NEVER or surface.isupper() or len(surface) < 3:
            continue
        if public_mention(surface, text, start, start + len(surface)):
            continue
        found.append(Entity(start, start + len(surface), "ORGANIZATION", surface, "venue"))
    return found


_FEATURE_TYPES = (
    r"canal|river|lake|loch|lough|park|beach|bay|harbour|harbor|hill|hills|mountain|forest|woods|trail|"
    r"quay|pier|common|heath|marina|reservoir|falls|estuary|creek|valley|glen|moor|downs|promenade|prom"
)
_GENERIC_FEATURE_WORD = frozenset(
    """local big old new little nearest nearby main same other public dog botanic botanical city town
    village national state country small busy quiet usual whole long short local farmers flea food fish
    fruit skate water theme car trailer caravan coastal seaside tidal frozen river lake sea""".split()
)
_FEATURE = re.compile(
    r"\b(?:along|on|at|by|near|to|around|across|beside|up|down|round|over|past)\s+the\s+"
    rf"(?P<v>(?:{_WORD}\s+){{1,2}}(?:{_FEATURE_TYPES}))\b",
    _I,
)


def find_features(text: str) -> list[Entity]:
    """A named feature of a place, in any case ("along the grand canal"); not "the local park"."""
    found = []
    for m in _FEATURE.finditer(text):
        words = m.group("v").split()
        if any(w.lower() in _GENERIC_FEATURE_WORD or w.lower() in _NEVER for w in words[:-1]):
            continue
        found.append(Entity(m.start("v"), m.end("v"), "LOCATION", m.group("v"), "feature"))
    return found


_INSTITUTION_LEAD = (
    r"(?!(?i:the|a|an|my|your|our|his|her|their|this|that|local|community|sixth|art|state|junior|"
    r"nearest|nearby|good|best|same|other|old|new|does|did|do|will|can|would|should|could|if|whether|about|"
    r"like|what|which|how|when|where|why|who|i|you|he|she|we|they|it|go|going|went|attend|attends|apply|"
    r"applying|applied|get|got|study|studying|studies|into|accept|accepts|to|at|from|in|of|and|or|for|is|"
    r"was|are|first|second|final|last|next|year|years|medical|nursing|business|law|start|starts|starting|"
    r"started|finish|finishes|finishing|finished|leave|leaves|leaving|left|after|before|during|through|"
    r"since|until|off|back|started|enrol|enrolled|enrolling|quit|quits|dropped|skip|skipping)\b)"
    r"[A-Za-z\u00c0-\u024f][\w'\u00c0-\u024f-]*"
)
_INSTITUTION = re.compile(
    rf"\b(?P<v>(?:(?:{_INSTITUTION_LEAD}\s+){{1,2}}(?:college|university)|(?:university|college)(?=\s+of\s))"
    rf"(?:\s+(?P<tail>of\s+{_WORD}|{_WORD}))?)",
    _I,
)


def find_institutions(text: str) -> list[Entity]:
    """A college or university named by its type anywhere in a sentence ("does trinity college dublin
    accept…"): one or two name words before the type, and a place or "of X" after it."""
    found = []
    for m in _INSTITUTION.finditer(text):
        end = m.end("v")
        tail = m.group("tail")
        if tail and not tail.lower().startswith("of ") and tail.lower() not in place_names():
            end = m.start("tail") - 1
        surface = text[m.start("v") : end].rstrip(" ,.;:!?")
        if public_mention(surface, text, m.start("v"), m.start("v") + len(surface)):
            continue
        found.append(Entity(m.start("v"), m.start("v") + len(surface), "ORGANIZATION", surface, "orgtype"))
    return found


_HOME = re.compile(
    r"\b(?:lives?|living|lived|moved|moving|relocat(?:ed|ing)|based|grew\s+up|raised|settled|born)\s+"
    rf"(?:back\s+)?(?:in|to)\s+(?P<v>{_WORD}(?:\s+{_WORD})?)",
    _I,
)
#: Words after "lives in" that name a kind of home, not a place ("lives in a flat", "halls").
_NOT_HOME = frozenset(
    """flat flats house houses apartment apartments city town village country countryside area suburb
    suburbs neighbourhood neighborhood halls hall dorm dorms student shared quiet same new big small rural
    london-ish fear hope sin denial""".split()
)


def find_homes(text: str) -> list[Entity]:
    """A place after a residence verb, in any case, even one no gazetteer knows ("lives in peckham",
    "moved to Tromsø"): the first word, and a second one written with a capital."""
    found = []
    for m in _HOME.finditer(text):
        words = list(re.finditer(r"\S+", m.group("v")))
        first = words[0].group(0).rstrip(",.;:!?)'\"")
        if first.lower() in _NEVER or first.lower() in _NOT_HOME or len(first) < 3 or first.isdigit():
            continue
        end = m.start("v") + words[0].start() + len(first)
        if len(words) > 1 and words[0].group(0) == first:
            second = words[1].group(0).rstrip(",.;:!?)'\"")
            pair = f"{first} {second}"
            if (second[:1].isupper() and first[:1].isupper() and second.lower() not in _NEVER) or (
                pair.lower() in place_names()
            ):
                end = m.start("v") + words[1].start() + len(second)
        start = m.start("v")
        surface = text[start:end]
        if public_mention(surface, text, start, end):
            continue
        found.append(Entity(start, end, "LOCATION", surface, "home"))
    return found


_APPOSITIVE = re.compile(
    rf"(?<![\w'-])(?P<v>{_CAP}(?:\s+{_CAP})?),\s+(?:my|our|his|her|their|the\s+user's|user's)\s+"
    r"(?:best\s+|old\s+|new\s+|close\s+)?(?:friend|neighbou?r|colleague|coworker|co-worker|boss|manager|"
    r"sister|brother|cousin|mum|mom|dad|partner|husband|wife|flatmate|roommate|housemate|landlord|landlady|"
    r"aunt|uncle|niece|nephew|daughter|son|teacher|tutor|coach|doctor|dentist|therapist|mentor|client)\b",
    _I,
)


def find_appositive_people(text: str) -> list[Entity]:
    """A capitalised name followed by ", my neighbour" / ", her sister" ("Grace, my neighbour, …")."""
    found = []
    for m in _APPOSITIVE.finditer(text):
        words = m.group("v").split()
        while words and words[0].lower() in _NEVER:
            words.pop(0)
        if not words:
            continue
        surface = " ".join(words)
        start = m.end("v") - len(surface)
        found.append(Entity(start, m.end("v"), "PERSON", surface, "relation"))
    return found


_NAME = r"(?-i:[A-Z\u00c0-\u00de\u0100-\u024f])[\w'\u00c0-\u024f-]*"
#: Closing words of a message before the writer's name, as regular-expression alternatives: the
#: base that the sign-off on its own line (``_SIGN_OFF``), the inline one (``_INLINE_SIGN_OFF``) and
#: the resolver's ``_SIGN_OFF`` each extend with their own.
CLOSINGS: tuple[str, ...] = (
    "thanks",
    r"thank\s+you",
    "regards",
    "best",
    "cheers",
    "love",
    "gracias",
    "saludos",
    "obrigad[oa]",
)
#: The closings of a sign-off on its own line above the name.
_SIGN_OFF_CLOSINGS = CLOSINGS + (
    r"many\s+thanks",
    r"kind\s+regards",
    r"best\s+regards",
    r"warm\s+regards",
    r"best\s+wishes",
    "sincerely",
    r"yours\s+sincerely",
    "yours",
    "warmly",
    r"all\s+the\s+best",
    r"take\s+care",
    r"talk\s+soon",
    "xo",
    "xx",
    "merci",
    "danke",
    "cordialement",
    r"liebe\s+grüße",
    r"viele\s+grüße",
    "grüße",
)
_SIGN_OFF = re.compile(
    rf"(?:^|\n)[ \t]*(?:{'|'.join(_SIGN_OFF_CLOSINGS)})[ \t]*[,!.]?[ \t]*\n+[ \t]*"
    rf"(?P<v>{_NAME}(?:[ \t]+{_NAME}){{0,2}})[ \t]*(?=$|\n|[,(])",
    _I,
)
_SELF_INTRO = re.compile(
    rf"\b(?:i'm|i\s+am|my\s+name\s+is|this\s+is)\s+(?P<v>{_NAME}(?:\s+{_NAME})?)(?=[,.!]|\s+from\b)", _I
)


#: A closing in any language: the name alone on the text's last line, after a short line ending in
#: a comma ("Tack,\nLinnea"), after a blank line ("…in advance.\n\nNúria") or after a dash
#: ("See you there - 지우"), before an optional closing quote.
_FINAL_NAME = re.compile(
    r"(?:(?:^|\n)[ \t]*[^\W\d_][^\n,]{0,24},[ \t]*\n|\n[ \t]*\n|[ \t][-\u2013\u2014~][ \t]*)[ \t]*"
    rf"(?P<v>{_NAME}(?:[ \t]+{_NAME})?|[\uac00-\ud7a3]{{2,4}}|[\u4e00-\u9fff]{{2,4}})"
    r"[ \t]*[\"'\u201d\u2019]?[ \t]*$"
)
#: Closing words that stand alone on a last line ("\n\nCheers") and are no name.
_CLOSING_WORDS = frozenset(
    """thanks cheers regards best love sincerely yours warmly xo xx merci danke gracias tack hej
    groetjes saluti ciao besos abrazos baci bye enjoy congrats congratulations""".split()
)


def find_signed_people(text: str) -> list[Entity]:
    """The name under a closing ("Thanks,\nŁukasz", "Tack,\nLinnea"), alone on the last line after a
    blank line or a dash, and in a self-introduction ("I'm Camille, a nurse")."""
    found = []
    for pattern in (_SIGN_OFF, _SELF_INTRO, _FINAL_NAME):
        for m in pattern.finditer(text):
            words = m.group("v").split()
            if words[0].lower() in _NEVER or (
                pattern is _FINAL_NAME and _final_line_common(words, text, m.start("v"), m.end("v"))
            ):
                continue
            if not any((e.start, e.end) == (m.start("v"), m.end("v")) for e in found):
                found.append(Entity(m.start("v"), m.end("v"), "PERSON", m.group("v"), "personcue"))
    return found


#: Greetings before the addressee's name, plain lowercase words: the base that ``_GREETED``, the
#: resolver's ``_SALUTATION`` and the de-identifier's ``_GREETINGS`` each extend with their own.
GREETINGS: tuple[str, ...] = ("hi", "hello", "hey", "dear", "hej", "hallo", "hola", "ciao", "bonjour")
#: The greetings of a greeted name, as regular-expression alternatives.
_GREETED_WORDS = GREETINGS + (
    "hoi",
    "ol[aá]",
    "salut",
    "servus",
    "moin",
    "ahoj",
    "cze[sś][cć]",
    "szia",
    "merhaba",
    r"kia\s+ora",
)
#: A greeting before a capitalised name and a comma or "!" ("Hi Kasia, magst du …", "Dear Ana!").
_GREETED = re.compile(
    rf"(?:^|\n|(?<=[.!?:]\s))[ \t]*(?:{'|'.join(_GREETED_WORDS)})[ \t]+"
    rf"(?P<v>{_NAME}(?:[ \t]+{_NAME})?)[ \t]*[,!]",
    _I,
)
#: A closing and a name ending a line of the text ("… on Sunday! Love, Migs", also before a "P.S." line).
_INLINE_CLOSINGS = CLOSINGS + (
    "xo",
    "xx",
    "hugs",
    "besos",
    "beijos",
    "abrazos",
    "bisous",
    "kisses",
    "ingat",
    "salamat",
    "danke",
    "merci",
    "grazie",
    "dzi[eę]kuj[eę]",
    "pozdrawiam",
    "gr[üu](?:ß|ss)e",
    "tack",
    "bedankt",
    "groetjes",
)
_INLINE_SIGN_OFF = re.compile(
    rf"(?:(?<=[.!?])[ \t]+|^)(?:{'|'.join(_INLINE_CLOSINGS)})[ \t]*,[ \t]*"
    rf"(?P<v>{_NAME}(?:[ \t]+{_NAME})?)[ \t]*[.!]?[ \t]*[\"'\u201d\u2019]?[ \t]*(?=\n|$)",
    _I,
)
#: Addressees that are no name ("Hi Team,", "Dear Sir,", "Hello World!").
_NOT_ADDRESSEE = frozenset(
    """sir madam maam ma'am ma pa team all everyone everybody folks guys friends world there hiring
    manager customer client colleagues neighbours neighbors parents committee admissions hr support
    sales accounts billing recruitment recruiter editor editors organisers organizers members
    residents tenants staff students council registrar reception office""".split()
)


def find_greeted_people(text: str) -> list[Entity]:
    """The capitalised name after a greeting ("Hi Kasia, …", "Dear Ana!") and after a closing
    at the end of a line ("… see you Sunday! Love, Migs"); not "Hi Team", "Dear Sir",
    a relation word ("Hi Mum") or a word that is never a name."""
    found = []
    for pattern in (_GREETED, _INLINE_SIGN_OFF):
        for m in pattern.finditer(text):
            words = [w.lower() for w in m.group("v").split()]
            if any(w in _NEVER or w in _NOT_ADDRESSEE for w in words):
                continue
            if re.fullmatch(rf"(?:{RELATION_WORDS})", words[0], _I):
                continue
            found.append(Entity(m.start("v"), m.end("v"), "PERSON", m.group("v"), "personcue"))
    return found


#: A group the writer runs or belongs to, and its name after "called"/"named" ("a catering business
#: called tolu's kitchen", "our choir is called the lerchen").
_CALLED = re.compile(
    r"\b(?:business|company|shop|store|bakery|brand|page|startup|firm|agency|salon|caf[eé]|restaurant|"
    r"band|choir|club|team|group|chama|society|charity|podcast|channel|label|studio|stall|practice)"
    r"(?:\s+is)?\s+(?:called|named)\s+(?P<v>[^\W\d_][\w'\u2019&\u00c0-\u024f-]*(?:\s+[^\W\d_][\w'\u2019&\u00c0-\u024f-]*){0,3})",
    _I,
)


#: A sports club by its suffix, in any case ("plays with team kitahama fc", "Brenzow Athletic AFC").
_CLUB = re.compile(
    r"(?<![\w'-])(?P<v>(?:(?-i:[A-Z\u00c0-\u00de])[\w\u00c0-\u024f-]+\s+)?[^\W\d_][\w\u00c0-\u024f-]+\s+"
    r"(?:fc|afc|rfc))\b",
    _I,
)


def find_clubs(text: str) -> list[Entity]:
    """A sports club named with its suffix ("team kitahama fc" → "kitahama fc"): the word before
    the suffix, and a capitalised word before that; not a word that is never a name ("my RFC")."""
    found = []
    for m in _CLUB.finditer(text):
        words = list(re.finditer(r"\S+", m.group("v")))[:-1]
        while words and words[0].group(0).lower() in _NEVER:
            words.pop(0)
        if not words or any(w.group(0).lower() in _NEVER for w in words):
            continue
        start = m.start("v") + words[0].start()
        found.append(Entity(start, m.end("v"), "ORGANIZATION", text[start : m.end("v")], "orgcue"))
    return found


def domain_labels(urls: Sequence[str]) -> set[str]:
    """The distinctive labels of private web addresses ("crumbhaus.shop" → "crumbhaus",
    "https://www.zaru-pantry.co.uk/menu" → "zaru-pantry"): five letters or more, not "www"."""
    labels = set()
    for url in urls:
        host = re.sub(r"^[a-z][a-z0-9+.-]*://", "", url.strip().lower()).split("/")[0].split("@")[-1]
        parts = [p for p in host.split(".") if p and p != "www"]
        if len(parts) >= 2:
            label = parts[0]
            if len(label) >= 5 and re.fullmatch(r"[a-z][a-z0-9-]*", label) and label not in _NEVER:
                labels.add(label)
    return labels


#: Between two letters of a web address's label, in the name it spells: an optional possessive
#: and one space or hyphen ("amasoven" → "Ama's Oven").
_SPELLED_SEP = r"(?:['\u2019]s?)?[ \t-]?"


def find_domain_names(text: str, entities: list[Entity], labels: set[str]) -> list[Entity]:
    """``entities`` plus the words that are the label of one of the participant's own web
    addresses, as written or spelled out in words ("liability for Crumbhaus;" beside
    "crumbhaus.shop", "Ama's Oven" beside "amasoven.com"), as organisations; a span it covers that
    NER alone found ("Ama" as a person) gives way, another span (the address itself) blocks it."""
    if not labels:
        return entities
    # the label as written, or spelled out in words ("Ama's Oven" for amasoven, "tolu's kitchen")
    spelled = [
        _SPELLED_SEP.join(re.escape(c) for c in label) for label in sorted(labels, key=len, reverse=True)
    ]
    pattern = re.compile(r"(?<![\w.@/-])(?:" + "|".join(spelled) + r")(?![\w@/-]|\.\w)", _I)
    result = list(entities)
    for m in pattern.finditer(text):
        words = re.split(r"[ \t-]", re.sub(r"['\u2019]s?", "", m.group(0)))
        if len(words) > 3 or any(len(w) < 3 for w in words):
            continue  # "za rus pan try": no one spells a name so
        inside = [e for e in result if e.start < m.end() and e.end > m.start()]
        if any(e.source != "ner" or e.start < m.start() or e.end > m.end() for e in inside):
            continue
        result = [e for e in result if e not in inside]
        result.append(Entity(m.start(), m.end(), "ORGANIZATION", m.group(0), "domain"))
    return sorted(result, key=lambda e: (e.start, e.end))


#: US state codes, for a ZIP code after one ("dayton, oh 45409").
_US_STATES = (
    "al|ak|az|ar|ca|co|ct|de|fl|ga|hi|id|il|in|ia|ks|ky|la|me|md|ma|mi|mn|ms|mo|mt|ne|nv|nh|nj|nm|ny|nc|nd|"
    "oh|ok|or|pa|ri|sc|sd|tn|tx|ut|vt|va|wa|wv|wi|wy|dc"
)
_STATE_ZIP = re.compile(rf",[ \t]*(?P<s>{_US_STATES})\.?[ \t]+(?P<v>\d{{5}}(?:-\d{{4}})?)(?!\d)", _I)
#: State codes that are also everyday lowercase words (", or 10000 steps", ", in 20000 years").
_STATE_WORDS = frozenset({"in", "or", "me", "hi", "ok"})


def find_zip_codes(text: str) -> list[Entity]:
    """A US ZIP code after a comma and a state code, in any case ("…, oh 45409"); a lowercase code
    that is also a word ("or", "in") only in capitals."""
    return [
        Entity(m.start("v"), m.end("v"), "LOCATION", m.group("v"), "pattern")
        for m in _STATE_ZIP.finditer(text)
        if m.group("s").isupper() or m.group("s").lower() not in _STATE_WORDS
    ]


#: A group the writer runs or belongs to, its name in quotes right after it ("the choir 'die
#: brenzow finken'", "our band “The Qorlasi Five”").
_QUOTED_GROUP = re.compile(
    r"\b(?:business|company|shop|store|bakery|brand|startup|firm|agency|salon|caf[eé]|restaurant|"
    r"band|choir|club|team|group|society|charity|stall|practice|orchestra|ensemble|troupe|league)"
    r"(?:\s+is)?\s+(?P<q>['\"‘“])(?P<v>[^\W\d_][^'\"’”\n]{1,40}?)['\"’”](?!\w)",
    _I,
)


#: A conjunction inside a business's name ("piec i chleb", "Pan y Brasa", "sal e pepe").
_JOINER = re.compile(r"i|y|e|und|et|og|och|en|n|'n'", _I)


def find_called_organisations(text: str) -> list[Entity]:
    """The name of a business or group after "called"/"named" ("a side business called tolu's
    kitchen"), stopping at a word that is never a name: up to four capitalised words, or two in
    lowercase ("a chama called dada hustle meets…": the verb after a lowercase name is no part of it);
    and a name of up to five words in quotes right after a group noun ("the choir 'the brenzow singers'")."""
    found = []
    for m in _CALLED.finditer(text):
        kept: list[re.Match[str]] = []
        cased = m.group("v")[:1].isupper()
        words = list(re.finditer(r"\S+", m.group("v")))
        joined = False  # "piec i chleb", "pan y vino": a conjunction between two words of one name
        for i, w in enumerate(words):
            word = w.group(0)
            after = words[i + 1].group(0) if i + 1 < len(words) else ""
            if (
                kept
                and not joined
                and _JOINER.fullmatch(word)
                and after.lower().strip(".,;:!?") not in _NEVER
            ):
                if not re.search(r"[.,;:!?)]$", kept[-1].group(0)) and (not cased or after[:1].isupper()):
                    kept.append(w)
                    joined = True
                    continue
            if word.lower().strip(".,;:!?") in _NEVER or (cased and not word[:1].isupper()):
                break
            if not cased and len(kept) == 2 + 2 * joined:
                break
            kept.append(w)
            if re.search(r"[.,;:!?)]$", w.group(0)):
                break
        if not kept:
            continue
        start, end = m.start("v") + kept[0].start(), m.start("v") + kept[-1].end()
        surface = text[start:end].rstrip(".,;:!?)'\u2019")
        if len(surface) >= 2:
            found.append(Entity(start, start + len(surface), "ORGANIZATION", surface, "orgcue"))
    for m in _QUOTED_GROUP.finditer(text):  # a quoted name of up to five words, not a stop word alone
        words = m.group("v").split()
        if len(words) <= 5 and not all(w.lower() in _NEVER for w in words):
            found.append(Entity(m.start("v"), m.end("v"), "ORGANIZATION", m.group("v"), "orgcue"))
    return found


#: A numbered part of a place after its name ("hinjewadi phase 1", "Sector 62", "Block 5B").
_PLACE_PART_AFTER = re.compile(
    r"[ \t]+(?:phase|sector|block|zone|stage|extension|ext\.?|layout|section|ward)[ \t]+"
    r"(?:\d{1,3}[a-z]?|[ivx]{1,4})\b",
    _I,
)
#: A house number after a street's name, as continental addresses write it ("Hauptstr. 31,").
_NUMBER_AFTER_STREET = re.compile(r"\.?[ \t]+\d{1,4}[a-z]?(?![\w.,/-]?\d)")
#: The last word of a street's name: a street type, or a name ending in one ("Karl-Heine-Straße").
_STREET_END = re.compile(
    r"(?:\b(?:str|stra(?:ß|ss)e|weg|gasse|allee|platz|ring|damm|ufer|street|st|road|rd|avenue|ave|lane|"
    r"rua|calle|avenida|via|viale|rue|ulica|ul|straat|laan|gade|vej|gatan|gata|veien)|"
    r"\w(?:stra(?:ß|ss)e|str|weg|gasse|allee|platz|straat|gade|vej|gatan|veien))$",
    _I,
)
#: A part of a town named by its compass side, before "of" and the town ("the West End of …").
_COMPASS_PART = re.compile(
    r"\bthe[ \t]+(?P<v>(?:north|south|east|west)(?:[ -]?(?:east|west))?[ \t]+(?:end|side))[ \t]+of[ \t]+$", _I
)
#: A postal district number after a town that ends an address ("Hanover Quay, Dublin 2").
_DISTRICT_AFTER = re.compile(r"[ \t]+\d{1,2}(?=[ \t]*(?:$|[,;.)\n]))")


#: A street type written before a street's name ("ul. ", "al. ", "c/ "), as a known place's key starts.
_STREET_PREFIX = re.compile(rf"^{STREET_TYPE_FIRST}[ \t]*(?P<rest>\S.*\d[a-z]?)$")


#: The word that makes a number a flat's, right before a place that starts with that number
#: ("apartment B12, mandera road": the unit word is part of the address).
_UNIT_WORD_BEFORE = re.compile(r"(?<![\w-])(?:apartment|apt|apto|flat|unit|suite|depto|dpto)\.?[ \t]*#?$", _I)


def _with_unit_word(text: str, spans: list[Entity]) -> list[Entity]:
    """A place that starts with a flat number takes the unit word written right before it."""
    out = []
    for entity in spans:
        m = _UNIT_WORD_BEFORE.search(text, max(0, entity.start - 12), entity.start)
        if entity.kind == "LOCATION" and m and re.match(r"[A-Za-z]?\d{1,4}[A-Za-z]?(?=[,\s])", entity.text):
            entity = Entity(m.start(), entity.end, entity.kind, text[m.start() : entity.end], entity.source)
        out.append(entity)
    return out


def _streets_without_type(text: str, spans: list[Entity], known: set[str]) -> list[Entity]:
    """A known street written here without its street type: "Tarnowska 18" beside a known
    "ul. tarnowska 18" is that street."""
    out = list(spans)

    def free(start: int, end: int) -> bool:
        return not any(e.start < end and e.end > start for e in out)

    folded = text.lower()
    for name in known:  # "ul. tarnowska 18" is known: "Tarnowska 18" is that street
        m = _STREET_PREFIX.match(name)
        if m is None:
            continue
        for hit in re.finditer(rf"(?<![\w@./-]){re.escape(m.group('rest'))}(?![\w@/-])", folded):
            if free(hit.start(), hit.end()):
                out.append(
                    Entity(hit.start(), hit.end(), "LOCATION", text[hit.start() : hit.end()], "placepart")
                )
    return out


def extend_place_parts(text: str, entities: list[Entity], known: set[str] = frozenset()) -> list[Entity]:
    """Places followed by a numbered part of them take it ("hinjewadi phase 1" is one place, and
    "…, Dublin 2" after a comma): the number, left alone, narrows the place down. ``known`` holds
    folded place names of the participant's gazetteer, extended where no span covers them yet
    ("from Lekki Phase 1" beside a known "Lekki"). A street (a span ending in a street type, of any
    named kind: NER calls some streets people) takes the house number written after it ("Hauptstr.
    31"), a town's compass side before "of" and a place is a place too ("the west end of …"), and a
    known street written with its type first is that street without it ("Tarnowska 18" beside a
    known "ul. tarnowska 18")."""
    spans = list(entities)
    if known:
        folded = text.lower()
        for name in sorted(known, key=len, reverse=True):
            for m in re.finditer(rf"(?<![\w@.-]){re.escape(name)}(?![\w@-])", folded):
                if _PLACE_PART_AFTER.match(text, m.end()) and not any(
                    e.start < m.end() and e.end > m.start() for e in spans
                ):
                    spans.append(
                        Entity(m.start(), m.end(), "LOCATION", text[m.start() : m.end()], "placepart")
                    )
    for i, entity in enumerate(spans):  # "Hauptstr. 31", "Rua Augusta 12": the number after the street
        named = entity.kind in ("LOCATION", "PERSON", "ORGANIZATION")  # NER calls some streets people
        m = _NUMBER_AFTER_STREET.match(text, entity.end) if named else None
        if m and _STREET_END.search(entity.text) and not any(entity.end < e.end <= m.end() for e in spans):
            spans[i] = Entity(entity.start, m.end(), "LOCATION", text[entity.start : m.end()], entity.source)
    for entity in list(spans):  # "the west end of glasgow": a district of the place after it
        if entity.kind != "LOCATION":
            continue
        m = _COMPASS_PART.search(text[: entity.start])
        if m and not any(e.start < m.end("v") and e.end > m.start("v") for e in spans):
            spans.append(Entity(m.start("v"), m.end("v"), "LOCATION", m.group("v"), "placepart"))
    result = []
    for entity in sorted(spans, key=lambda e: (e.start, e.end)):
        m = _PLACE_PART_AFTER.match(text, entity.end) if entity.kind == "LOCATION" else None
        if m is None and entity.kind == "LOCATION" and re.search(r",[ \t]*$", text[: entity.start]):
            m = _DISTRICT_AFTER.match(text, entity.end)
        if m and not any(e is not entity and entity.end <= e.start < m.end() for e in spans):
            source = "placepart" if entity.source == "placepart" else entity.source
            entity = Entity(entity.start, m.end(), entity.kind, text[entity.start : m.end()], source)
        result.append(entity)
    return sorted(
        _with_unit_word(text, _streets_without_type(text, result, known)), key=lambda e: (e.start, e.end)
    )


def _final_line_common(words: list[str], text: str, start: int, end: int) -> bool:
    """True when a last line's words are a closing, a stop word or a public name, not a signature."""
    if any(w.lower() in _NEVER or w.lower() in _CLOSING_WORDS for w in words):
        return True
    return public_mention(text[start:end], text, start, end, kind="PERSON")


_QUOTED_NICKNAME = re.compile(
    rf"(?P<first>{_NAME})\s+['\u2018\u2019\"\u201c](?P<nick>[^'\u2019\"\u201d\n]{{2,25}})['\u2019\"\u201d]\s+"
    rf"(?P<last>{_NAME}(?:\s+{_NAME})?)"
)
_CALLS_NICKNAME = re.compile(
    rf"\bcalls?\s+(?P<first>{_NAME})\s+['\u2018\u2019\"\u201c](?P<nick>[^'\u2019\"\u201d\n]{{2,25}})['\u2019\"\u201d]"
)
_PERSON_WORD = r"[A-Za-z\u00c0-\u024f][\w'\u00c0-\u024f-]*"
_PAREN_NICKNAME = re.compile(
    rf"\b(?:{RELATION_WORDS}|with|(?<=user's\s)(?:full\s+|real\s+|legal\s+)?name\s+is|"
    rf"(?<=my\s)(?:full\s+|real\s+|legal\s+)?name\s+is)\s+(?P<a>{_PERSON_WORD}(?:\s+{_PERSON_WORD}){{0,3}})\s+"
    rf"\((?P<b>{_PERSON_WORD}(?:\s+{_PERSON_WORD}){{0,3}})\)",
    _I,
)


_LISTED_KIN = re.compile(
    r"\b(?:kids|children|sons|daughters|grandkids|grandchildren|siblings|nieces|nephews|twins|boys|girls)"
    rf"(?:\s+are)?\s*[:\-\u2013]?\s+(?P<v>{_NAME}\s*\(?\d{{1,2}}\)?(?:\s*(?:,|and|&)\s*{_NAME}\s*\(?\d{{1,2}}\)?)+)",
    _I,
)


def find_listed_people(text: str) -> list[Entity]:
    """Names listed with their ages after a plural relation word ("kids: Omar 10, Noor 6")."""
    found = []
    for m in _LISTED_KIN.finditer(text):
        for name in re.finditer(_NAME, m.group("v")):
            if name.group(0).lower() in _NEVER:
                continue
            start = m.start("v") + name.start()
            found.append(Entity(start, start + len(name.group(0)), "PERSON", name.group(0), "relation"))
    return found


def find_nicknames(text: str) -> list[tuple[str, str]]:
    """``(nickname, name)`` pairs the text ties together: "Jakub 'Kuba' Nowak", "Tobi calls Ngozi
    'Aunty Ngo'", "my daughter Anika (ani)", "with Tuan Anh Nguyen (Tony)".

    >>> find_nicknames("user's friend Jakub 'Kuba' Nowak drives; my daughter Anika (ani) is 8")
    [('Kuba', 'Jakub Nowak'), ('ani', 'Anika')]
    >>> find_nicknames("my mum lives in Campinas (Cambuí)"), find_nicknames("the 'best' Pizza place")
    ([], [])
    """
    pairs = []
    for m in _QUOTED_NICKNAME.finditer(text):
        if m.group("first").lower() in _NEVER or not m.group("nick")[0].isupper():
            continue
        pairs.append((m.group("nick"), f"{m.group('first')} {m.group('last')}"))
    for m in _CJK_BESIDE.finditer(text):
        pairs.append((m.group("b"), m.group("a")))
    for m in _CALLS_NICKNAME.finditer(text):
        pairs.append((m.group("nick"), m.group("first")))
    for m in _PAREN_NICKNAME.finditer(text):
        a, b = m.group("a"), m.group("b")
        if any(w.lower() in _NEVER for w in (*a.split(), *b.split())):
            continue
        if text[m.start() : m.start() + 4].lower() == "with" and not (a[:1].isupper() or b[:1].isupper()):
            continue  # "with chickenpox (varicella)": a gloss, not a nickname
        if _RELATION_START.match(text[m.start() :]) and not _POSSESSIVE_RELATION.search(text[: m.start()]):
            continue
        pairs.append((b, a) if len(b.split()) <= len(a.split()) else (a, b))
    return pairs


_CJK_RUN = (
    r"[\u3040-\u30ff\u4e00-\u9fff\uac00-\ud7af]{1,4}(?:\s?[\u3040-\u30ff\u4e00-\u9fff\uac00-\ud7af]{1,4})?"
)
_CJK_BESIDE = re.compile(rf"(?P<a>{_NAME}(?:\s+{_NAME}){{0,2}})\s+\((?P<b>{_CJK_RUN})\)")
_RELATION_START = re.compile(rf"(?:{RELATION_WORDS})\b", _I)
_POSSESSIVE_RELATION = re.compile(r"(?:\b(?:my|our|your|his|her|their)|'s)\s+$", _I)


_CAPWORD = r"(?-i:[A-Z\u00c0-\u00de\u0100-\u024f])[\w'\u00c0-\u024f-]*"
#: A part of a place in brackets after it ("lives in Enugu (Independence Layout)").
_SUBPLACE_BRACKET = re.compile(
    rf"\b(?:in|at|from|near)\s+(?:the\s+)?{_CAPWORD}(?:\s+{_CAPWORD})?\s*\((?P<v>{_CAPWORD}(?:\s+{_CAPWORD}){{0,2}})\)"
)
#: A named part of a town ("Recouvrance neighbourhood", "the Kalamaja district").
_SUBPLACE_NOUN = re.compile(
    rf"(?P<v>{_CAPWORD}(?:\s+{_CAPWORD})?)\s+(?:neighbourhood|neighborhood|district|suburb|quarter|"
    r"barrio|bairro|quartier|borough|estate|township|ward)\b"
)
#: East Asian administrative suffixes ("Setagaya-ku", "Gangnam-gu", "Yeoksam-dong").
_WARD = re.compile(
    r"\b(?P<v>(?-i:[A-Z])[a-z]+-(?:ku|shi|cho|machi|mura|gun|ken|dong|gu|si|eup|myeon|ri|ro|gil))\b"
)
#: A flat or unit number of an address ("Apt 12,", "apto 72 —", ": Flat 3B,").
_UNIT = re.compile(
    r"(?:(?<=[,:\u2014-])\s*|^|\bcomplemento\s+|(?<=\bat\s))(?P<v>(?:apt|apto|apartment|appt|flat|unit|suite|"
    r"depto|dpto|piso|wohnung|bloco|blk)\.?\s*#?[A-Za-z]?\d{1,4}[A-Za-z]?)\b(?=\s*(?:[,\u2014\u2013-]|$))",
    _I,
)
#: A street written in lowercase without a house number, between the commas of an address
#: ("apartment C7, vimbeku road, okalanga").
_LOWER_STREET = re.compile(
    r"(?<=,)[ \t]+(?P<v>[a-z\u00df-\u024f][a-z\u00df-\u024f'-]+[ \t]+(?:road|street|avenue|lane|drive|"
    r"crescent|close|terrace|way))(?=[ \t]*,)"
)
#: A postcode after a town at an address's end ("Aro Valley, Wellington 6021 with …").
_TOWN_POSTCODE = re.compile(
    rf",\s*(?!(?i:january|february|march|april|may|june|july|august|september|october|november|"
    rf"december|christmas|easter|spring|summer|autumn|fall|winter)\b){_CAPWORD}(?:\s+{_CAPWORD})?\s+"
    r"(?P<v>(?!(?:19|20)\d\d\b)\d{4,5})\b(?![-/.]?\d)"
)
#: A Paris, Lyon or Marseille arrondissement ("in the 11e").
_ARRONDISSEMENT = re.compile(r"\bin\s+the\s+(?P<v>\d{1,2}(?:e|er|ème|eme))(?:\s+arrondissement)?\b", _I)
#: A name in CJK or Hangul script in brackets after a romanised name ("Tanaka Yui (田中 結衣)").
_CJK_NAME = re.compile(
    r"(?<=[A-Za-z]\s\()(?P<v>[\u3040-\u30ff\u4e00-\u9fff\uac00-\ud7af]{1,4}(?:\s?[\u3040-\u30ff\u4e00-\u9fff\uac00-\ud7af]{1,4})?)\)"
)


#: An address given as such, or a home or business "at" a street with a house number: its pieces
#: between commas to the end of the sentence are the address's parts ("user's address is 9 mill
#: lane, drumkeel, F92 X3K4", "user lives at ul. tarnowska 18, kraków-podgórze", "a coffee shop
#: at 12 trần phú, sơn trà").
_ADDRESS_GIVEN = re.compile(
    r"(?<!mail\s)(?<!e-mail\s)(?<!web\s)(?<!ip\s)(?<!mac\s)\b(?:(?:address|addr)(?:\s+is|\s*:)|"
    r"(?:lives?|living|rents?|renting|based|located|"
    r"shop|store|stall|bakery|workshop|café|cafe|office|studio|salon|restaurant|bar|flat|house|home|apartment)\s+(?:\w+\s+){0,3}?at)"
    r"[ \t]+(?P<v>[^\n.!?;]*?(?:\.[ \t]?[^\W\d_][^\n.!?;]*?)*)"
    r"(?=[ \t]*(?:$|[.!?;\n]|\s(?:and|but|with|since)\s))",
    _I,
)
#: A unit after a number that makes it a time or an amount ("at 9 am", "at 5 o'clock", "at 20%").
_MEASURE_AFTER = re.compile(
    r"[ \t]*(?:am|pm|a\.m|p\.m|o'clock|h|hrs?|hours?|mins?|minutes?|%|percent|per|euros?|dollars?|"
    r"pounds?|quid|bucks|km|miles?|kg|people|persons|guests|times|days?|weeks?|months?|years?)\b",
    _I,
)
#: A piece of an address between commas: up to four words (a street, a town, a district, a postcode).
_ADDRESS_PIECE = re.compile(r"[^,]+")


def find_address_lines(text: str) -> list[Entity]:
    """The parts of an address the text gives as one: after "address is"/"address:", every piece
    between commas to the end of the sentence; after a home or business "at", the same when the
    first piece holds a house number ("lives at 7 birch view, drumkeel"). A piece is at most four
    words and no everyday sentence; a capitalised piece, a postcode in capitals and a block address
    ("5-chōme", whose word readers need) are left to the other recognizers."""
    found: list[Entity] = []
    for m in _ADDRESS_GIVEN.finditer(text):
        given = m.group(0).lower().startswith(("address", "addr"))
        pieces = list(_ADDRESS_PIECE.finditer(m.group("v")))
        numbered = (
            re.search(r"(?<![\d.])\d{1,4}[a-z]?(?:/\d+)?(?![\w.])", pieces[0].group(0)) if pieces else None
        )
        if not pieces or not (numbered or (given and len(pieces) >= 2)):
            continue  # "the newer address is safer": one word and no number is no address
        if numbered and _MEASURE_AFTER.match(pieces[0].group(0), numbered.end()):
            continue  # "the shop opens at 9 am, …": a time or an amount, not a house number
        for n, piece in enumerate(pieces[:5]):
            surface = piece.group(0).strip(" \t()")
            words = surface.split()
            if re.search(r"(?i)\baddress\b|ch[oō]u?me\b", surface):
                break  # "at GPS address AK-…": a code the patterns read; a block address ("5-chōme")
            if all(w[:1].isupper() or w[:1].isdigit() for w in words):
                continue  # a capitalised part is the NER model's and the patterns' ("Leeds LS6 2AB")
            cut = re.search(r"[ \t]+[A-Z]+\d[A-Z\d]*(?![\w-])", surface) if n else None
            if cut:  # "leicester LE2 3QF": the postcode is the patterns'
                surface = surface[: cut.start()]
                words = surface.split()
            if (
                not words
                or len(words) > 4
                or any(w.lower() in _NEVER and w.lower() not in ("de", "la") for w in words)
            ):
                break  # "lives at home with …": a sentence, not an address
            start = m.start("v") + piece.start() + piece.group(0).index(surface)
            end = start + len(surface)
            if any(e.start < end and e.end > start for e in found):
                continue
            code = re.match(r"(\d{4,5})[ \t]+(?=[^\W\d_])", surface) if n else None
            if code:  # "6020 velden": the postcode and the town are two places
                found.append(Entity(start, start + len(code.group(1)), "LOCATION", code.group(1), "home"))
                start += code.end()
            found.append(Entity(start, end, "LOCATION", text[start:end], "home"))
    return found


def find_address_parts(text: str) -> list[Entity]:
    """Parts of an address no gazetteer knows: a part of a place in brackets or before a
    neighbourhood noun, an East Asian ward, a flat number, a street in lowercase between an
    address's commas (with the flat number right before it), a postcode after a town, an
    arrondissement; and a name in CJK script beside its romanisation."""
    found = []
    for pattern, kind in (
        (_SUBPLACE_BRACKET, "LOCATION"),
        (_SUBPLACE_NOUN, "LOCATION"),
        (_WARD, "LOCATION"),
        (_UNIT, "LOCATION"),
        (_LOWER_STREET, "LOCATION"),
        (_TOWN_POSTCODE, "LOCATION"),
        (_ARRONDISSEMENT, "LOCATION"),
        (_CJK_NAME, "PERSON"),
    ):
        for m in pattern.finditer(text):
            words = m.group("v").split()
            if words[0].lower() in _NEVER:
                continue
            start = m.start("v")
            if pattern is _LOWER_STREET:  # a flat number right before is part of one address
                unit = next((e for e in found if re.fullmatch(r",[ \t]*", text[e.end : start])), None)
                if unit is not None and _UNIT.fullmatch(unit.text):
                    found.remove(unit)
                    start = unit.start
            found.append(Entity(start, m.end("v"), kind, text[start : m.end("v")], "home"))
    return found


def find_context_entities(text: str) -> list[Entity]:
    """Every context-cued recognizer of this module over ``text`` (overlaps left to the caller)."""
    return [
        *find_job_organisations(text),
        *find_cued_people(text),
        *find_named_people(text),
        *find_venues(text),
        *find_features(text),
        *find_institutions(text),
        *find_homes(text),
        *find_appositive_people(text),
        *find_lowercase_people(text),
        *find_signed_people(text),
        *find_greeted_people(text),
        *find_called_organisations(text),
        *find_clubs(text),
        *find_zip_codes(text),
        *find_address_parts(text),
        *find_address_lines(text),
        *find_listed_people(text),
        *find_titled_people(text),
        *find_practices(text),
    ]
