"""The de-identifier's word lists that several patterns share are written once: each use is built
from one base list plus its own extras, and accepts exactly the words it accepted before."""

from __future__ import annotations

import re

from dataset_builder.detectors import _EVERYDAY_NAME, EVERYDAY_FIRST_NAMES
from dataset_builder.resolver import _COMMON_WORD_NAMES

#: The lists as they were written out before they shared a base, kept here to compare against.
_OLD_EVERYDAY_NAME = (
    "will may grace rose mark bill pat ruby jack frank hope joy faith ray max drew dawn".split()
)
_OLD_COMMON_WORD_NAMES = set(
    """will may june april august grace rose mark bill art pat ruby jack frank hope joy faith summer
    rich sandy penny holly ivy lily daisy iris amber jade chase dawn drew gene guy ray max victor cliff
    brook sky go rust""".split()
)


def test_everyday_first_names_are_the_old_list() -> None:
    assert list(EVERYDAY_FIRST_NAMES) == _OLD_EVERYDAY_NAME


def test_common_word_names_are_the_old_set_and_hold_the_everyday_names() -> None:
    assert set(_COMMON_WORD_NAMES) == _OLD_COMMON_WORD_NAMES
    assert set(EVERYDAY_FIRST_NAMES) <= _COMMON_WORD_NAMES


def test_everyday_name_pattern_takes_the_same_names() -> None:
    pattern = re.compile(_EVERYDAY_NAME, re.IGNORECASE)
    for word in sorted(_OLD_COMMON_WORD_NAMES | {"willa", "mayor", "bob"}):
        assert bool(pattern.fullmatch(f"{word} f")) is (word in _OLD_EVERYDAY_NAME), word
    assert pattern.match("will be") is None  # the everyday verb phrase stays out


#: The closings of the three sign-off patterns as they were written out before they shared a base.
_OLD_SIGN_OFF = {
    *r"thanks thank\s+you many\s+thanks regards kind\s+regards best\s+regards warm\s+regards".split(),
    *r"best best\s+wishes cheers love sincerely yours\s+sincerely yours warmly all\s+the\s+best".split(),
    *r"take\s+care talk\s+soon xo xx merci danke gracias obrigad[oa] saludos cordialement".split(),
    *r"liebe\s+grüße viele\s+grüße grüße".split(),
}
_OLD_INLINE_SIGN_OFF = set(
    r"""thanks thank\s+you regards best cheers love xo xx hugs besos beijos abrazos bisous kisses ingat
    salamat danke merci gracias grazie obrigad[oa] dzi[eę]kuj[eę] pozdrawiam saludos gr[üu](?:ß|ss)e
    tack bedankt groetjes""".split()
)
#: (The resolver wrote "obrigad[ao]": the same two words as the base's "obrigad[oa]".)
_OLD_RESOLVER_SIGN_OFF = set(
    r"""love cheers regards best best\s+wishes kind\s+regards warmly sincerely thanks thank\s+you
    obrigad[oa] gracias saludos gr[üu](?:ß|ss)e pozdrawiam salamat ciao bisous xx+ xoxo""".split()
)


def test_closings_are_the_old_lists() -> None:
    from dataset_builder import entity_cues, resolver

    for new, old in (
        (entity_cues._SIGN_OFF_CLOSINGS, _OLD_SIGN_OFF),
        (entity_cues._INLINE_CLOSINGS, _OLD_INLINE_SIGN_OFF),
        (resolver._SIGN_OFF_CLOSINGS, _OLD_RESOLVER_SIGN_OFF),
    ):
        assert len(new) == len(set(new)), new  # no closing written twice in one list
        assert set(new) == old
        assert set(entity_cues.CLOSINGS) <= set(new)


def test_sign_off_patterns_take_their_closings() -> None:
    from dataset_builder.entity_cues import _INLINE_SIGN_OFF, _SIGN_OFF
    from dataset_builder.resolver import _SIGN_OFF as _RESOLVER_SIGN_OFF

    assert _SIGN_OFF.search("See you then.\nBest wishes,\nAna Lima").group("v") == "Ana Lima"
    assert _SIGN_OFF.search("See you then.\nCordialement\nAna") is not None
    assert _SIGN_OFF.search("See you then.\nHugs,\nAna") is None  # inline only
    assert _INLINE_SIGN_OFF.search("See you Sunday! Hugs, Ana").group("v") == "Ana"
    assert _INLINE_SIGN_OFF.search("See you Sunday! Cordialement, Ana") is None
    assert _RESOLVER_SIGN_OFF.search("see you then. kind regards,") is not None
    assert _RESOLVER_SIGN_OFF.search("see you then. hugs,") is None


#: The greetings as they were written out before they shared a base.
_OLD_GREETED = set(
    r"""hi hello hey dear hej hallo hoi hola ol[aá] ciao salut bonjour servus moin ahoj cze[sś][cć] szia
    merhaba kia\s+ora""".split()
)
#: (The resolver wrote "dear(?:est)?": here "dear" and "dearest", the same two words.)
_OLD_SALUTATION = set(
    r"""dear dearest hi hello hey hallo sehr\s+geehrter? liebe[rs]? lieber geachte beste querid[oa]s?
    estimad[oa]s? chere cheres prezad[oa] szanown[ya] drog[ia] kaere kære hej bonjour hola ola oi
    ciao""".split()
)
_OLD_GREETINGS = set(
    """hi hello hey dear hej hejsan hallo hoi hola ola ciao salve bonjour salut servus moin ahoj czesc
    szia merhaba annyeong howdy greetings saludos abrazos besos groetjes groeten halsningar mvh cheers
    thanks tack gracias grazie merci danke obrigado obrigada cordialmente atentamente regards bises
    baci kisses xoxo""".split()
)


def test_greetings_are_the_old_lists() -> None:
    from dataset_builder import deidentify, entity_cues, resolver

    for new, old in (
        (entity_cues._GREETED_WORDS, _OLD_GREETED),
        (resolver._SALUTATION_WORDS, _OLD_SALUTATION),
    ):
        assert len(new) == len(set(new)), new
        assert set(new) == old
        assert set(entity_cues.GREETINGS) <= set(new)
    assert set(deidentify._GREETINGS) == _OLD_GREETINGS
    assert all(word.isalpha() and word.islower() for word in entity_cues.GREETINGS)


def test_greeting_patterns_take_their_greetings() -> None:
    from dataset_builder.entity_cues import find_greeted_people
    from dataset_builder.resolver import canonical

    assert [e.text for e in find_greeted_people("Hola Ana, qué tal?")] == ["Ana"]
    assert [e.text for e in find_greeted_people("Servus Ana, wie geht's?")] == ["Ana"]
    assert find_greeted_people("Dearest Ana, thank you.") == []  # a salutation only
    assert canonical("PERSON", "dearest ana") == "ana"
    assert canonical("PERSON", "sehr geehrte frau brenner") == "brenner"
    assert canonical("PERSON", "servus ana") == "servus ana"  # a greeting only
