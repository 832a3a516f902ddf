"""De-identification test helpers shared by the test modules."""

from __future__ import annotations

from collections.abc import Sequence

from dataset_builder.detectors import Entity
from dataset_builder.resolver import ParticipantRedactor

__all__ = ["RARE", "FixedNer", "RareVocab", "VocabNer", "learnt_redactor", "rare"]


class FixedNer:
    """A recognizer that labels exactly the given surfaces (every occurrence), nothing else."""

    name = "fixed"

    def __init__(self, labels: dict[str, str]) -> None:
        self.labels = labels

    def __call__(self, texts: Sequence[str]) -> list[list[Entity]]:
        out = []
        for text in texts:
            found = []
            for surface, kind in self.labels.items():
                start = text.find(surface)
                while start >= 0:
                    found.append(Entity(start, start + len(surface), kind, surface, "ner"))
                    start = text.find(surface, start + 1)
            out.append(found)
        return out


#: Invented words that stand for names and places with no vector in :class:`RareVocab`.
RARE = frozenset({"okalanga", "vimbeku", "zarutho", "drevnik", "qorlasi", "brenzow"})


def rare(word: str) -> bool:
    """The rarity test :class:`RareVocab` implies: a word of :data:`RARE`."""
    return word in RARE


class RareVocab:
    """A spaCy-like vocabulary: every word has a vector except the invented names of :data:`RARE`."""

    vectors = (1,)  # non-empty: the pipeline has vectors

    def has_vector(self, word: str) -> bool:
        return word not in RARE


class VocabNer(FixedNer):
    """:class:`FixedNer` with a spaCy-like vocabulary, as :attr:`SpacyRecognizer.vocab` gives one
    (for the rarity test); ``seen`` lists the texts it was called on."""

    def __init__(self, labels: dict[str, str], vocab: object | None = None) -> None:
        super().__init__(labels)
        self.vocab = vocab if vocab is not None else RareVocab()
        self.seen: list[str] = []

    def __call__(self, texts: Sequence[str]) -> list[list[Entity]]:
        self.seen += list(texts)
        return super().__call__(texts)


def learnt_redactor(spans: list[tuple[str, str, str]], texts: Sequence[str] = ()) -> ParticipantRedactor:
    """A redactor that learnt ``(surface, kind, source)`` mentions (and noted ``texts``)."""
    redactor = ParticipantRedactor()
    for text in texts:
        redactor.note_text(text)
    redactor.learn([Entity(0, len(s), kind, s, source) for s, kind, source in spans])
    return redactor
