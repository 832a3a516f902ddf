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
