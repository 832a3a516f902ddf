"""The ``preference_pairs`` config: raw study records → de-identified, participant-grouped rows.

Participants get random study ids (``secrets``), never derived from recruitment ids; an optional
private id map (JSON, kept outside the published folder) keeps them stable across builds. Splits
are assigned per participant (train 70 % / validation 15 % / test 15 %, seeded shuffle of the
random ids), so no participant spans two splits.
"""

from __future__ import annotations

import json
import random
import secrets
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from .configs import ConfigTable, config_features
from .deidentify import DeidentifiedRecord, WithholdPolicy, deidentify_records
from .detectors import Recognizer
from .preferences import RawPreferenceRecord, memory_preference

__all__ = ["PairsBuild", "assign_splits", "build_preference_pairs"]

SPLIT_FRACTIONS: tuple[tuple[str, float], ...] = (("train", 0.70), ("validation", 0.15), ("test", 0.15))


@dataclass
class PairsBuild:
    """The config, the private review entries and the summary that goes into the card."""

    table: ConfigTable
    review: list[dict[str, object]]
    summary: dict[str, object] = field(default_factory=dict)


def assign_splits(study_ids: Sequence[str], *, seed: int = 0) -> dict[str, str]:
    """Participant → split, by a seeded shuffle of the (random) study ids.

    >>> splits = assign_splits([f"s{i}" for i in range(20)])
    >>> Counter(splits.values())["train"], len(set(splits))
    (14, 20)
    """
    ordered = sorted(set(study_ids))
    random.Random(seed).shuffle(ordered)
    n = len(ordered)
    n_train = round(n * SPLIT_FRACTIONS[0][1])
    n_val = round(n * SPLIT_FRACTIONS[1][1])
    if n >= 3:
        n_train, n_val = min(max(n_train, 1), n - 2), max(n_val, 1)
    out = {}
    for index, study_id in enumerate(ordered):
        out[study_id] = "train" if index < n_train else "validation" if index < n_train + n_val else "test"
    return out


def _study_ids(
    participants: Sequence[str], id_map_path: Path | None, rng: random.Random | None
) -> dict[str, str]:
    mapping: dict[str, str] = {}
    if id_map_path is not None and id_map_path.exists():
        mapping = json.loads(id_map_path.read_text(encoding="utf-8"))
    used = set(mapping.values())
    for participant in sorted(set(participants)):
        if participant in mapping:
            continue
        while True:
            token = f"{rng.getrandbits(32):08x}" if rng is not None else secrets.token_hex(4)
            study_id = f"participant_{token}"
            if study_id not in used:
                break
        used.add(study_id)
        mapping[participant] = study_id
    if id_map_path is not None:
        id_map_path.parent.mkdir(parents=True, exist_ok=True)
        id_map_path.write_text(json.dumps(mapping, indent=1, sort_keys=True), encoding="utf-8")
    return mapping


def _withheld_per_participant(
    results: list[DeidentifiedRecord], study: dict[str, str]
) -> dict[str, dict[str, int]]:
    """Random study id → withhold reason → count, for participants with a withheld comparison."""
    out: dict[str, dict[str, int]] = {}
    for result in results:
        if result.action == "withhold":
            reasons = out.setdefault(study[result.record.participant_id], {})
            reasons[result.reason] = reasons.get(result.reason, 0) + 1
    return dict(sorted(out.items()))


def build_preference_pairs(
    records: Sequence[RawPreferenceRecord],
    recognizer: Recognizer | None,
    *,
    policy: WithholdPolicy = "bears_on_preference",
    id_map_path: Path | None = None,
    split_seed: int = 0,
    rng: random.Random | None = None,
) -> PairsBuild:
    """De-identify ``records`` and build the ``preference_pairs`` rows (one Hub split per ``split``).

    ``rng`` makes the random ids reproducible (tests); by default they come from ``secrets``.
    """
    results: list[DeidentifiedRecord] = deidentify_records(records, recognizer, policy=policy)
    study = _study_ids([r.participant_id for r in records], id_map_path, rng)
    splits = assign_splits([study[r.participant_id] for r in records], seed=split_seed)
    rows: list[dict[str, object]] = []
    review: list[dict[str, object]] = []
    for result in results:
        record = result.record
        entry = result.review_entry()
        entry["participant"] = study[record.participant_id]
        if result.action == "publish":
            five, collapsed, strength = memory_preference(
                record.preference, memory_position=record.memory_position
            )
            pair_id = f"pair_{(rng.getrandbits(48) if rng is not None else secrets.randbits(48)):012x}"
            entry["pair_id"] = pair_id
            participant = study[record.participant_id]
            rows.append(
                {
                    "pair_id": pair_id,
                    "participant": participant,
                    "query": result.fields["query"],
                    "memories": result.fields["retrieved_memories"],
                    "response_with_memory": result.fields["response_with_memory"],
                    "response_without_memory": result.fields["response_without_memory"],
                    "generator": record.generator,
                    "regime": record.regime,
                    "preference_5pt": five,
                    "preference": collapsed,
                    "strength": strength,
                    "split": splits[participant],
                    "clear_preference": strength == "much",
                }
            )
        review.append(entry)
    table = ConfigTable("preference_pairs", config_features("preference_pairs"))
    frame = pd.DataFrame(rows, columns=list(table.features))
    if len(frame):
        frame = frame.sort_values(["split", "participant", "pair_id"], kind="stable")
        for split_name, _ in SPLIT_FRACTIONS:
            part = frame[frame["split"] == split_name].reset_index(drop=True)
            if len(part):
                table.splits[split_name] = part
    actions = Counter(result.action for result in results)
    kinds: Counter[str] = Counter()
    fields: Counter[str] = Counter()
    for result in results:
        fields.update({name.split("[")[0] for name in result.touched})
        for counts in result.touched.values():
            kinds.update(counts)
    summary = {
        "records": len(results),
        "published": actions["publish"],
        "withheld": actions["withhold"],
        "excluded": actions["exclude"],
        "excluded_reasons": dict(Counter(r.reason.split(":")[0] for r in results if r.action == "exclude")),
        "withheld_reasons": dict(Counter(r.reason for r in results if r.action == "withhold")),
        "withheld_per_participant": _withheld_per_participant(results, study),
        "participants": len({study[r.participant_id] for r in records}),
        "published_participants": int(frame["participant"].nunique()) if len(frame) else 0,
        "entities_replaced": dict(sorted(kinds.items())),
        "records_touched_per_field": dict(sorted(fields.items())),
        "recognizer": recognizer.name if recognizer is not None else "none (patterns and gazetteer only)",
        "withhold_policy": policy,
    }
    return PairsBuild(table, review, summary)
