"""Accum scripts: eight scripted user utterances per persona, with planted contradictions.

The paper's Accum pilot (§5.4, G.7) fed 8 conversation rounds for 2 personas. MirageBench ships
scripts for at least 30 personas (10 per stereotype group) in
``mirage_bench/data/accum_scripts.jsonl``, one JSON object per line::

    {"persona_id": "seed_001",
     "utterances": ["<round 1>", ..., "<round 8>"],
     "contradictions": [{"round": 6, "attribute": "relationship_status",
                         "contradicts": "in a long-term relationship"}]}

Each utterance is something the persona might say, consistent with its ground truth, revealing new
details gradually. A *planted contradiction* is a round whose utterance directly contradicts a
plausible earlier over-inference (``contradicts``) about one ground-truth ``attribute``, like the
paper's persona who visits a big city "for the first time for fun" in round 7; it lets the engine
measure whether a model retracts the inference. The scripts were written for this package (they
are not from the paper).

>>> scripts = load_accum_scripts()
>>> script = get_accum_script("seed_001")
>>> len(script.utterances), script.contradictions[0].round >= FIRST_CONTRADICTION_ROUND
(8, True)
>>> validate_accum_scripts(scripts)
[]
"""

from __future__ import annotations

import difflib
import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from mirage_bench.fileio import load_checked_cached
from mirage_bench.paths import DATA_DIR
from mirage_bench.structs import all_errors
from mirage_bench.types import GROUND_TRUTH_FIELDS, STEREOTYPE_TYPES, Persona

__all__ = [
    "AccumScript",
    "AccumScriptFileError",
    "DEFAULT_ACCUM_SCRIPTS_PATH",
    "FIRST_CONTRADICTION_ROUND",
    "MIN_SCRIPTS_PER_GROUP",
    "N_ROUNDS",
    "PlantedContradiction",
    "REQUIRED_PERSONAS",
    "get_accum_script",
    "load_accum_scripts",
    "read_accum_scripts_file",
    "validate_accum_scripts",
]

#: The shipped script file.
DEFAULT_ACCUM_SCRIPTS_PATH: Path = DATA_DIR / "accum_scripts.jsonl"
#: Conversation rounds per script (G.7).
N_ROUNDS = 8
#: A planted contradiction must come after at least one memory update, so that the inference it
#: contradicts can already be in memory.
FIRST_CONTRADICTION_ROUND = 2
#: At least this many scripts per stereotype group, and the groups equally sized (issue 2 §4).
MIN_SCRIPTS_PER_GROUP = 10
#: The two personas printed in G.3 must have scripts.
REQUIRED_PERSONAS: tuple[str, ...] = ("seed_001", "seed_006")


class PlantedContradiction(BaseModel):
    """A round whose utterance directly contradicts a plausible earlier over-inference.

    ``attribute`` is the ground-truth attribute (one of ``GROUND_TRUTH_FIELDS``) the utterance
    reveals; ``contradicts`` is the over-inference it rules out, in a few words.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    round: int
    attribute: str
    contradicts: str


class AccumScript(BaseModel):
    """The eight user utterances of one persona's Accum conversation, rounds 1..8."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    persona_id: str
    utterances: list[str] = Field(min_length=1)
    contradictions: list[PlantedContradiction]

    def utterance(self, round_number: int) -> str:
        """The utterance of round ``round_number`` (1-based); ``IndexError`` outside 1..len."""
        if not 1 <= round_number <= len(self.utterances):
            raise IndexError(f"{self.persona_id}: no round {round_number} (rounds 1..{len(self.utterances)})")
        return self.utterances[round_number - 1]


class AccumScriptFileError(ValueError):
    """A script file that cannot be read; ``problems`` lists every bad line (``path:LINE: reason``)."""

    def __init__(self, path: Path, problems: list[str]) -> None:
        self.path = path
        self.problems = problems
        super().__init__(f"{path}: {len(problems)} unreadable record(s):\n" + "\n".join(problems))


def read_accum_scripts_file(path: str | Path) -> tuple[list[AccumScript], list[str]]:
    """Parse a JSONL script file; return the readable scripts and one problem per unreadable line.

    Blank lines are ignored; nothing else is skipped silently. ``FileNotFoundError`` if absent.
    """
    path = Path(path)
    scripts: list[AccumScript] = []
    problems: list[str] = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                scripts.append(AccumScript.model_validate(json.loads(line)))
            except json.JSONDecodeError as exc:
                problems.append(f"{path}:{number}: not JSON: {exc}")
            except ValidationError as exc:
                problems.append(f"{path}:{number}: {all_errors(exc)}")
    return scripts, problems


def load_accum_scripts(path: str | Path | None = None) -> list[AccumScript]:
    """Load the Accum scripts (default: the shipped file).

    Raises ``AccumScriptFileError`` listing every unreadable line, or ``FileNotFoundError``.
    Structural checks across scripts (counts, rounds, persona ids) are in
    :func:`validate_accum_scripts`.
    """
    resolved = Path(path) if path is not None else DEFAULT_ACCUM_SCRIPTS_PATH
    return list(load_checked_cached(resolved, read_accum_scripts_file, AccumScriptFileError))


def get_accum_script(persona_id: str, path: str | Path | None = None) -> AccumScript:
    """The script of ``persona_id``; ``KeyError`` (with the closest ids) if it has none."""
    scripts = {s.persona_id: s for s in load_accum_scripts(path)}
    try:
        return scripts[persona_id]
    except KeyError:
        close = difflib.get_close_matches(str(persona_id), sorted(scripts), n=3)
        hint = f" (closest: {', '.join(close)})" if close else ""
        raise KeyError(f"no Accum script for persona {persona_id!r}{hint}") from None


def _script_problems(script: AccumScript, persona: Persona | None) -> list[str]:
    where = script.persona_id
    problems: list[str] = []
    if len(script.utterances) != N_ROUNDS:
        problems.append(
            f"{where}: {len(script.utterances)} utterances, expected {N_ROUNDS} (rounds 1..{N_ROUNDS})"
        )
    for index, utterance in enumerate(script.utterances, start=1):
        if not utterance.strip():
            problems.append(f"{where}: round {index} utterance is empty")
        elif utterance != utterance.strip():
            problems.append(f"{where}: round {index} utterance has leading/trailing whitespace")
    repeated = [u for u, n in Counter(script.utterances).items() if n > 1]
    if repeated:
        problems.append(f"{where}: repeated utterance(s): {repeated}")
    if persona is not None:
        facts = {f.strip().casefold() for f in persona.revealed_facts}
        for index, utterance in enumerate(script.utterances, start=1):
            if utterance.strip().casefold() in facts:
                problems.append(
                    f"{where}: round {index} repeats a revealed fact (utterances must add new detail)"
                )
    if not script.contradictions:
        problems.append(f"{where}: no planted contradiction (at least one is required)")
    seen: set[int] = set()
    for planted in script.contradictions:
        if not FIRST_CONTRADICTION_ROUND <= planted.round <= min(N_ROUNDS, len(script.utterances)):
            problems.append(
                f"{where}: contradiction round {planted.round} not in {FIRST_CONTRADICTION_ROUND}..{N_ROUNDS}"
            )
        if planted.attribute not in GROUND_TRUTH_FIELDS:
            close = difflib.get_close_matches(planted.attribute, GROUND_TRUTH_FIELDS, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            problems.append(
                f"{where}: contradiction attribute {planted.attribute!r} is not a ground-truth field{hint}"
            )
        elif persona is not None:
            truth = persona.ground_truth.get(planted.attribute, "")
            truth_text = ", ".join(truth) if isinstance(truth, list) else str(truth)
            if (
                planted.contradicts.strip()
                and planted.contradicts.strip().casefold() in truth_text.casefold()
            ):
                problems.append(
                    f"{where}: round {planted.round} 'contradicts' names the ground truth of "
                    f"{planted.attribute} ({truth_text!r}), not an over-inference"
                )
        if not planted.contradicts.strip():
            problems.append(
                f"{where}: contradiction in round {planted.round} does not say what it contradicts"
            )
        if planted.round in seen:
            problems.append(f"{where}: two contradictions planted in round {planted.round} (one per round)")
        seen.add(planted.round)
    return problems


def validate_accum_scripts(
    scripts: Sequence[AccumScript] | None = None,
    personas: Sequence[Persona] | None = None,
    *,
    min_per_group: int = MIN_SCRIPTS_PER_GROUP,
    required: Sequence[str] = REQUIRED_PERSONAS,
) -> list[str]:
    """Check a set of scripts; return the problems found (empty list = valid).

    Checks: at least ``min_per_group`` scripts per stereotype group and the groups balanced; the
    ``required`` personas present; one script per persona; every persona id exists in
    ``personas`` (default: the shipped personas); exactly 8 non-empty, distinct utterances (rounds
    1..8) that do not repeat a revealed fact; no utterance shared between scripts; at least one
    planted contradiction per script, in rounds 2..8, naming a ground-truth attribute and the
    inference it contradicts (which must not be the persona's ground truth for that attribute), and
    at most one contradiction per round (so each round's retraction check is about one inference).
    """
    if scripts is None:
        scripts = load_accum_scripts()
    if personas is None:
        from mirage_bench.personas import load_personas

        personas = load_personas()
    by_id = {p.persona_id: p for p in personas}
    problems: list[str] = []

    counts = Counter(s.persona_id for s in scripts)
    problems += [f"{pid}: {n} scripts (one per persona)" for pid, n in sorted(counts.items()) if n > 1]
    unknown = sorted(pid for pid in counts if pid not in by_id)
    problems += [f"{pid}: no such persona" for pid in unknown]
    problems += [f"{pid}: required persona has no script" for pid in required if pid not in counts]

    groups = Counter(by_id[pid].stereotype_type for pid in counts if pid in by_id)
    for group in STEREOTYPE_TYPES:
        if groups.get(group, 0) < min_per_group:
            problems.append(f"group {group}: {groups.get(group, 0)} scripts, need at least {min_per_group}")
    if len(set(groups.get(g, 0) for g in STEREOTYPE_TYPES)) > 1:
        shown = ", ".join(f"{g}={groups.get(g, 0)}" for g in STEREOTYPE_TYPES)
        problems.append(f"groups unbalanced: {shown}")

    owners: dict[str, str] = {}
    for script in scripts:
        problems += _script_problems(script, by_id.get(script.persona_id))
        for utterance in set(script.utterances):
            key = utterance.strip().casefold()
            if key in owners and owners[key] != script.persona_id:
                problems.append(
                    f"{script.persona_id}: utterance also in {owners[key]}'s script: {utterance!r}"
                )
            owners.setdefault(key, script.persona_id)
    return problems
