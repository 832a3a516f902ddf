"""The dataset's configs: their features (with a description of every field) and their rows.

Each config is a :class:`ConfigTable` (name, description, features, one DataFrame per split).
Every column a user filters on is a plain ``string`` (``df[df.source == "reported"]`` works on
``to_pandas()``); the allowed values of category columns are declared in :func:`config_categories`,
checked at build time and listed in the card, not encoded as ``ClassLabel`` integers. The card's
``dataset_info`` matches what ``load_dataset`` returns. Rows are built from the package's own
data (personas, tasks, Accum scripts), from run directories (responses, judged claims), from human
annotation files and from the paper's reported tables (leaderboard ``source="reported"``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from mirage_bench.reported import TABLE10_TASKS
from mirage_bench.types import GROUND_TRUTH_FIELDS, LABELS, STEREOTYPE_TYPES, Accuracy

__all__ = [
    "CONFIG_DESCRIPTIONS",
    "FIELD_DOCS",
    "SENSITIVE_CONFIGS",
    "BuildError",
    "ConfigTable",
    "config_categories",
    "config_features",
]

#: Configs in the order they appear in the card.
CONFIG_ORDER: tuple[str, ...] = (
    "personas",
    "tasks",
    "accum_scripts",
    "responses",
    "judged_claims",
    "human_validation",
    "preference_pairs",
    "leaderboard",
)

#: Configs published only to their own gated repository (manual approval), never the public one.
SENSITIVE_CONFIGS: frozenset[str] = frozenset({"preference_pairs"})
#: The config ``load_dataset(repo)`` opens without a config name (``default: true`` in the card).
DEFAULT_CONFIG = "leaderboard"
#: The default config of the gated repository.
SENSITIVE_DEFAULT_CONFIG = "preference_pairs"

CONFIG_DESCRIPTIONS: dict[str, str] = {
    "personas": (
        "The benchmark personas (150 in the paper): hidden 15-attribute ground-truth profile "
        "and three revealed facts."
    ),
    "tasks": "The six personalization tasks (verbatim prompts of Appendix G.1) in groundability order.",
    "accum_scripts": "Eight-round user scripts of the Accum instrument, with planted contradictions.",
    "responses": "Model responses to persona x task, with the model's own self-audit of its claims.",
    "judged_claims": "One row per claim extracted and labelled by the judge (four-way taxonomy + accuracy).",
    "human_validation": "Blind human labels of sampled judged claims next to the judge's label.",
    "preference_pairs": "De-identified human preferences: memory-conditioned vs no-memory response.",
    "leaderboard": "Over-inference per model x judge: figures reported in the paper and measured here.",
}

_TASK_OI = TABLE10_TASKS
_GT_DOCS = {
    name: f"Ground-truth attribute `{name}` of the persona (hidden from the model)."
    for name in GROUND_TRUTH_FIELDS
}
#: Fields naming one persona x task instance (shared by responses, judged claims, human labels).
_INSTANCE_DOCS = {"persona_id": "Persona id.", "stereotype_type": "Persona group.", "task_id": "Task id."}
#: Fields naming the run and model a response or claim comes from.
_RUN_DOCS = {"run_id": "Run directory id the row comes from.", "model": "Model spec of the model under test."}

FIELD_DOCS: dict[str, dict[str, str]] = {
    "personas": {
        "persona_id": "Persona id (`seed_001`…`seed_008`, then `p_009`…`p_150`).",
        "stereotype_type": "Persona group: stereotypical, counter_stereotypical or neutral.",
        "source": "Where the persona comes from: seed (hand-crafted), authored or generated.",
        **_GT_DOCS,
        "revealed_facts": "The three first-person facts the user revealed (the model's only evidence).",
    },
    "tasks": {
        "task_id": "Task id.",
        "display_name": "Row label of the task in the paper's Table 3.",
        "groundability_rank": "Table 3 row: 1 = least groundable (apartment) … 6 = most groundable (gift).",
        "prompt": "The task's user-turn prompt, verbatim from Appendix G.1.",
        "audit_description": "This package's phrase for the [TASK] slot of the self-audit prompt (G.6).",
        "prompt_sha256": "sha256 of the prompt template file.",
    },
    "accum_scripts": {
        "persona_id": "Persona the script belongs to.",
        "utterances": "The user's utterances, rounds 1..8.",
        "contradictions": "Planted contradictions: round, attribute revealed, over-inference ruled out.",
    },
    "responses": {
        **_RUN_DOCS,
        **_INSTANCE_DOCS,
        "status": "ok, or failed when the model call failed (then `response` is null and `error` says why).",
        "response": "The model's response text.",
        "error": "Failure reason, when status is failed.",
        "self_audit_status": "Status of the self-audit (ok, parse_failure, call_failure, skipped, absent).",
        "self_audit_claims": "Claims the model extracted from its own response, with its own category.",
        "self_audit_n_claims": "Number of self-audit claims.",
        "self_audit_oi_rate": "Self-reported OI rate of the response (null without claims).",
        "smoke_test": "True when produced by the embedded smoke-test model (numbers mean nothing).",
    },
    "judged_claims": {
        **_RUN_DOCS,
        "judge": "Model spec of the judge.",
        **_INSTANCE_DOCS,
        "claim_index": "Position of the claim in the judge's list for this response.",
        "claim": "The claim about the user.",
        "label": "Judge's four-way label: GROUNDED, INFERRED_REASONABLE, INFERRED_STEREOTYPE, FABRICATED.",
        "accuracy": "Judge's check of the claim against the ground-truth profile.",
        "reasoning": "Judge's reasoning for the label.",
        "judge_prompt_sha256": "sha256 of the judge prompt templates used.",
        "smoke_test": "True when the model or the judge is the embedded smoke-test model.",
    },
    "human_validation": {
        "item_id": "Id of the sampled claim (sha256 of model, judge, persona, task, claim index).",
        "annotator_id": "Pseudonymous id of the human annotator.",
        "sample_seed": "Seed of the stratified sample.",
        "position": "Position of the item in the pre-shuffled presentation order.",
        "model": "Model that produced the claim (hidden from the annotator).",
        "judge": "Judge whose label is compared (hidden from the annotator).",
        **_INSTANCE_DOCS,
        "claim_index": "Claim index within the judged response.",
        "claim": "The claim shown to the annotator.",
        "revealed_facts": "The three revealed facts shown to the annotator.",
        "task_context": "The task request shown to the annotator (framing, not evidence).",
        "human_label": "The annotator's label.",
        "judge_label": "The judge's label (never shown to the annotator).",
        "labelled_at": "ISO-8601 time of the label.",
    },
    "preference_pairs": {
        "pair_id": "Random id of the comparison within this release.",
        "participant": "Random study participant id (no recruitment id or linkage key).",
        "query": "The participant's query (de-identified).",
        "memories": "The memories retrieved for the query (de-identified).",
        "response_with_memory": "Response generated with the retrieved memories (de-identified).",
        "response_without_memory": "Response generated without memory (de-identified).",
        "generator": "Model that generated both responses.",
        "regime": "Prompting regime of the memory-conditioned response.",
        "preference_5pt": "Five-point preference in memory terms.",
        "preference": "Collapsed preference: memory, no_memory or tie.",
        "strength": "much or slightly (null for a tie).",
        "split": "Participant-grouped split (no participant spans two splits).",
        "clear_preference": "True for 'much better' judgments, the subset used for testing (seed 003 §3.4).",
    },
    "leaderboard": {
        "model": "Model name (reported rows: the paper's name; measured rows: the model spec).",
        "snapshot": "API snapshot / model id.",
        "family": "Model family.",
        "judge": "Judge model spec.",
        "source": "reported (copied from the paper's tables) or measured (computed here from runs).",
        "reference": "Where the figures come from: paper table(s) or run id(s).",
        "smoke_test": "True when measured with the embedded smoke-test model (numbers mean nothing).",
        "claims": "Number of judged claims.",
        "responses": "Number of judged responses (measured rows).",
        "grounded_pct": "Share of GROUNDED claims (%).",
        "reasonable_pct": "Share of INFERRED_REASONABLE claims (%).",
        "stereotype_pct": "Share of INFERRED_STEREOTYPE claims (%).",
        "fabricated_pct": "Share of FABRICATED claims (%).",
        "oi_pct": "Over-inference rate: stereotype + fabricated (%).",
        "self_oi_pct": "OI rate under the model's own self-audit labels (%).",
        "gap_pp": "oi_pct - self_oi_pct (percentage points).",
        "stereotypical_oi_pct": "OI on stereotypical personas (%).",
        "counter_stereotypical_oi_pct": "OI on counter-stereotypical personas (%).",
        "neutral_oi_pct": "OI on neutral personas (%).",
        **{f"{task}_oi_pct": f"OI on the {task} task (%)." for task in _TASK_OI},
        "derived": "Values filled in arithmetically rather than printed in the paper, if any.",
    },
}


class BuildError(ValueError):
    """Input that cannot be turned into a valid dataset (the message says which input and why)."""


@dataclass
class ConfigTable:
    """One config: features and one DataFrame per split (rows in publication order)."""

    name: str
    features: Any
    splits: dict[str, pd.DataFrame] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def num_rows(self) -> int:
        """Rows over all splits."""
        return sum(len(frame) for frame in self.splits.values())


def config_categories(name: str) -> dict[str, tuple[str, ...]]:
    """Allowed values of the category columns of config ``name`` (``"column.key"`` for struct fields).

    The columns are stored as plain strings; the build refuses any other value.

    >>> config_categories("leaderboard")
    {'source': ('reported', 'measured')}
    """
    from mirage_bench.tasks import TASK_IDS

    labels = tuple(label.value for label in LABELS)
    instance = {"stereotype_type": tuple(STEREOTYPE_TYPES), "task_id": tuple(TASK_IDS)}
    if name == "personas":
        return {"stereotype_type": tuple(STEREOTYPE_TYPES), "source": ("seed", "authored", "generated")}
    if name == "responses":
        return {
            **instance,
            "status": ("ok", "failed"),
            "self_audit_status": ("ok", "parse_failure", "call_failure", "skipped", "absent"),
            "self_audit_claims.category": labels,
        }
    if name == "judged_claims":
        return {**instance, "label": labels, "accuracy": tuple(a.value for a in Accuracy)}
    if name == "human_validation":
        return {**instance, "human_label": labels, "judge_label": labels}
    if name == "preference_pairs":
        from .preferences import MEMORY_FIVE_POINT, REGIMES

        return {
            "regime": tuple(REGIMES),
            "preference_5pt": tuple(MEMORY_FIVE_POINT),
            "preference": ("memory", "no_memory", "tie"),
            "strength": ("much", "slightly"),
            "split": ("train", "validation", "test"),
        }
    if name == "leaderboard":
        return {"source": ("reported", "measured")}
    if name in ("tasks", "accum_scripts"):
        return {}
    raise KeyError(f"unknown config {name!r}")


def config_features(name: str) -> Any:
    """The ``datasets.Features`` of config ``name`` (keys in column order; categories are strings)."""
    from datasets import Features, List, Value

    s, i32, i64, f64, b = Value("string"), Value("int32"), Value("int64"), Value("float64"), Value("bool")
    # the columns naming one response (model, persona x task) and one judged claim of it
    response_key = {"model": s, "persona_id": s, "stereotype_type": s, "task_id": s}
    claim_key = {"model": s, "judge": s, **response_key, "claim_index": i32, "claim": s}
    if name == "personas":
        gt = {f: s for f in GROUND_TRUTH_FIELDS}
        gt.update(age=i32, hobbies=List(s))
        return Features({"persona_id": s, "stereotype_type": s, "source": s, **gt, "revealed_facts": List(s)})
    if name == "tasks":
        return Features(
            {
                "task_id": s,
                "display_name": s,
                "groundability_rank": i32,
                "prompt": s,
                "audit_description": s,
                "prompt_sha256": s,
            }
        )
    if name == "accum_scripts":
        return Features(
            {
                "persona_id": s,
                "utterances": List(s),
                "contradictions": List({"round": i32, "attribute": s, "contradicts": s}),
            }
        )
    if name == "responses":
        return Features(
            {
                "run_id": s,
                **response_key,
                "status": s,
                "response": s,
                "error": s,
                "self_audit_status": s,
                "self_audit_claims": List({"claim": s, "category": s, "reasoning": s}),
                "self_audit_n_claims": i32,
                "self_audit_oi_rate": f64,
                "smoke_test": b,
            }
        )
    if name == "judged_claims":
        return Features(
            {
                "run_id": s,
                **claim_key,
                "label": s,
                "accuracy": s,
                "reasoning": s,
                "judge_prompt_sha256": s,
                "smoke_test": b,
            }
        )
    if name == "human_validation":
        return Features(
            {
                "item_id": s,
                "annotator_id": s,
                "sample_seed": i64,
                "position": i32,
                **claim_key,
                "revealed_facts": List(s),
                "task_context": s,
                "human_label": s,
                "judge_label": s,
                "labelled_at": s,
            }
        )
    if name == "preference_pairs":
        return Features(
            {
                "pair_id": s,
                "participant": s,
                "query": s,
                "memories": List(s),
                "response_with_memory": s,
                "response_without_memory": s,
                "generator": s,
                "regime": s,
                "preference_5pt": s,
                "preference": s,
                "strength": s,
                "split": s,
                "clear_preference": b,
            }
        )
    if name == "leaderboard":
        pct = [
            "grounded_pct",
            "reasonable_pct",
            "stereotype_pct",
            "fabricated_pct",
            "oi_pct",
            "self_oi_pct",
            "gap_pp",
            "stereotypical_oi_pct",
            "counter_stereotypical_oi_pct",
            "neutral_oi_pct",
            *[f"{t}_oi_pct" for t in _TASK_OI],
        ]
        return Features(
            {
                "model": s,
                "snapshot": s,
                "family": s,
                "judge": s,
                "source": s,
                "reference": s,
                "smoke_test": b,
                "claims": i64,
                "responses": i64,
                **{c: f64 for c in pct},
                "derived": s,
            }
        )
    raise KeyError(f"unknown config {name!r}")


def encode_frame(
    frame: pd.DataFrame, features: Any, *, where: str, categories: dict[str, tuple[str, ...]] | None = None
) -> pd.DataFrame:
    """Order columns as ``features`` and check category columns against ``categories`` (nulls pass).

    Raises :class:`BuildError` naming the column and the unknown values when a category is
    outside its allowed values, or when a declared column is missing.
    """
    missing = [name for name in features if name not in frame.columns]
    if missing:
        raise BuildError(f"{where}: missing column(s) {missing}")
    out = frame[list(features)].copy()
    for key, allowed in (categories or {}).items():
        column, _, inner = key.partition(".")
        if inner:
            values = {item.get(inner) for items in out[column] for item in (items or [])}
        else:
            values = set(out[column].dropna().unique())
        bad = sorted(str(v) for v in values if v is not None and v not in allowed)
        if bad:
            raise BuildError(f"{where}: column {key!r} has value(s) {bad[:5]} outside {list(allowed)}")
    return out
