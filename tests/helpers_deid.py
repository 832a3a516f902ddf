"""De-identification test helpers shared by the test modules."""

from __future__ import annotations

from collections.abc import Sequence

from dataset_builder.detectors import Entity

__all__ = ["FixedNer"]


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
