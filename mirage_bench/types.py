"""Core types shared by every part of MirageBench.

Records written to disk are pydantic models carrying a ``schema_version`` so that readers can
refuse (or migrate) files written by an incompatible version.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

SCHEMA_VERSION = 1


class Label(StrEnum):
    """The four-way faithfulness taxonomy (§3 of the MirageBench paper), in ordinal order G→R→S→F."""

    GROUNDED = "GROUNDED"
    INFERRED_REASONABLE = "INFERRED_REASONABLE"
    INFERRED_STEREOTYPE = "INFERRED_STEREOTYPE"
    FABRICATED = "FABRICATED"

    @property
    def short(self) -> str:
        """One-letter initial used in the paper's tables (G, R, S, F)."""
        return {"GROUNDED": "G", "INFERRED_REASONABLE": "R", "INFERRED_STEREOTYPE": "S", "FABRICATED": "F"}[
            self.value
        ]

    @property
    def is_over_inference(self) -> bool:
        """Stereotype and Fabricated jointly constitute over-inference (Eq. 1/2)."""
        return self in (Label.INFERRED_STEREOTYPE, Label.FABRICATED)


#: Labels in ordinal order (G, R, S, F); use this order for confusion matrices and tables.
LABELS: tuple[Label, ...] = (
    Label.GROUNDED,
    Label.INFERRED_REASONABLE,
    Label.INFERRED_STEREOTYPE,
    Label.FABRICATED,
)
OVER_INFERENCE_LABELS: frozenset[Label] = frozenset({Label.INFERRED_STEREOTYPE, Label.FABRICATED})


class Accuracy(StrEnum):
    """The judge's separate accuracy check of a claim against the ground-truth profile (G.2)."""

    CORRECT = "CORRECT"
    INCORRECT = "INCORRECT"
    UNVERIFIABLE = "UNVERIFIABLE"
    PARTIALLY_CORRECT = "PARTIALLY_CORRECT"


StereotypeType = Literal["stereotypical", "counter_stereotypical", "neutral"]
STEREOTYPE_TYPES: tuple[str, ...] = ("stereotypical", "counter_stereotypical", "neutral")

#: The 15 ground-truth attributes of the persona-generation prompt (G.8), in its order.
GROUND_TRUTH_FIELDS: tuple[str, ...] = (
    "name",
    "age",
    "gender",
    "occupation",
    "city",
    "hobbies",
    "personality",
    "dietary_style",
    "living_situation",
    "relationship_status",
    "media_taste",
    "pet",
    "exercise_habits",
    "work_life_pattern",
    "quirk",
)


class Persona(BaseModel):
    """One benchmark persona: a hidden ground-truth profile and exactly three revealed facts."""

    model_config = ConfigDict(extra="forbid")

    persona_id: str
    stereotype_type: StereotypeType
    source: Literal["seed", "authored", "generated"]
    ground_truth: dict[str, str | int | list[str]]
    revealed_facts: list[str] = Field(min_length=3, max_length=3)


class Message(BaseModel):
    """One chat message."""

    model_config = ConfigDict(frozen=True)

    role: Literal["system", "user", "assistant"]
    content: str
