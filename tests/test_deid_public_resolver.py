"""Over-redaction and placeholder consistency of the de-identifier: public names and run-on spans.

Every sentence here is invented for the test.
"""

from __future__ import annotations

import pytest

from dataset_builder.detectors import Entity
from dataset_builder.resolver import _span_pieces


def _ner(text: str, surface: str, kind: str) -> Entity:
    start = text.index(surface)
    return Entity(start, start + len(surface), kind, surface, "ner")


@pytest.mark.parametrize(
    ("text", "surface", "kind", "expected"),
    [
        ("City: Lisbon\nPhone: 555", "Lisbon\nPhone", "ORGANIZATION", ["Lisbon", "Phone"]),
        ("at Kestrel | CPA | open to work", "Kestrel | CPA | open", "ORGANIZATION", ["Kestrel", "CPA"]),
        ("we deliver across Marlow & Bexley today", "Marlow & Bexley", "LOCATION", ["Marlow", "Bexley"]),
        ("tomek und ich wollen am samstag", "tomek und ich wollen am", "ORGANIZATION", ["tomek"]),
        ("a ana quer viajar pra Lagos", "a ana quer viajar pra Lagos", "ORGANIZATION", ["ana"]),
        ("Wiktor nas odbiera z dworca.", "Wiktor nas odbiera z dworca", "PERSON", ["Wiktor"]),
        ("kids: Bram 9, Lotte 4", "Bram 9", "PERSON", ["Bram"]),
        ("swapped shifts w tariq again", "w tariq", "ORGANIZATION", ["tariq"]),
    ],
)
def test_run_on_span_is_cut(text: str, surface: str, kind: str, expected: list[str]) -> None:
    assert [p.text for p in _span_pieces(_ner(text, surface, kind), text)] == expected


@pytest.mark.parametrize(
    ("text", "surface", "kind"),
    [
        ("we walked round Lagoa da Conceição at dusk", "Lagoa da Conceição", "LOCATION"),
        ("she banks with Bank of Leith", "Bank of Leith", "ORGANIZATION"),
        ("lunch at Marks and Sparks", "Marks and Sparks", "ORGANIZATION"),
        ("a trip to Frankfurt am Main", "Frankfurt am Main", "LOCATION"),
        ("the form says C.P. 04411 for the office", "C.P. 04411", "LOCATION"),
        ("i met hana kovac there", "hana kovac", "PERSON"),
        ("ask Rasa Petraitytė", "Rasa Petraitytė", "PERSON"),
    ],
)
def test_whole_name_span_stays_whole(text: str, surface: str, kind: str) -> None:
    assert [p.text for p in _span_pieces(_ner(text, surface, kind), text)] == [surface]


def test_only_ner_spans_are_cut() -> None:
    text = "City: Lisbon\nPhone: 555"
    cued = Entity(6, 18, "LOCATION", "Lisbon\nPhone", "places")
    assert _span_pieces(cued, text) == [cued]
