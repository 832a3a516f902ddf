"""The 150 MirageBench personas: loading, lookup and validation.

The personas ship as ``mirage_bench/data/personas.jsonl``: one JSON object per line with
``persona_id``, ``stereotype_type``, ``source``, ``ground_truth`` (the 15 attributes of the
persona-generation prompt, G.8) and exactly three ``revealed_facts`` (see ``docs/personas.md``).

>>> personas = load_personas()
>>> len(personas), personas[0].persona_id, personas[-1].persona_id
(150, 'seed_001', 'p_150')
>>> get_persona("seed_006").ground_truth["name"]
'Derek Park'
>>> validate_personas(personas)
[]
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

from pydantic import ValidationError

from mirage_bench.fileio import load_checked_cached, parse_json_line
from mirage_bench.paths import DATA_DIR
from mirage_bench.structs import all_errors
from mirage_bench.types import GROUND_TRUTH_FIELDS, STEREOTYPE_TYPES, Persona

__all__ = [
    "AGE_RANGE",
    "DEFAULT_PERSONAS_PATH",
    "MIN_OCCUPATIONS",
    "N_PERSONAS",
    "N_SEED_PERSONAS",
    "OCCUPATION_CUES",
    "PER_GROUP",
    "PersonaFileError",
    "expected_persona_ids",
    "get_persona",
    "load_personas",
    "occupation_revealed",
    "read_personas_file",
    "validate_persona",
    "validate_personas",
]

#: The shipped persona file.
DEFAULT_PERSONAS_PATH: Path = DATA_DIR / "personas.jsonl"
#: Personas in the benchmark, per stereotype group, and hand-crafted seeds (§4.1).
N_PERSONAS = 150
PER_GROUP = 50
N_SEED_PERSONAS = 8
#: Coverage constraints of issue 2 §3.
MIN_OCCUPATIONS = 60
AGE_RANGE: tuple[int, int] = (18, 75)
N_FACTS = 3

_ID_RE = re.compile(r"^(?:seed_(?P<seed>\d{3})|p_(?P<num>\d{3}))$")
_LIST_FIELDS = frozenset({"hobbies"})
_INT_FIELDS = frozenset({"age"})


class PersonaFileError(ValueError):
    """A persona file that cannot be read: missing, not JSON, or a record of the wrong shape.

    ``problems`` lists every bad line (``"path:LINE: reason"``), so nothing is silently dropped.
    """

    def __init__(self, path: Path, problems: list[str]) -> None:
        self.path = path
        self.problems = problems
        super().__init__(f"{path}: {len(problems)} unreadable record(s):\n" + "\n".join(problems))


def expected_persona_ids(n: int = N_PERSONAS, n_seeds: int = N_SEED_PERSONAS) -> list[str]:
    """The ids a complete persona file has, in order.

    >>> expected_persona_ids()[6:10]
    ['seed_007', 'seed_008', 'p_009', 'p_010']
    """
    return [f"seed_{i:03d}" if i <= n_seeds else f"p_{i:03d}" for i in range(1, n + 1)]


def read_personas_file(path: str | Path) -> tuple[list[Persona], list[str]]:
    """Parse a persona JSONL file, returning ``(personas, problems)``.

    Every line must hold one persona object (blank lines are reported, not skipped). A line that
    is not JSON or does not fit :class:`~mirage_bench.types.Persona` becomes a problem naming its
    line number; the other lines are still parsed. Raises ``FileNotFoundError`` for a missing file.
    """
    path = Path(path)
    personas: list[Persona] = []
    problems: list[str] = []
    text = path.read_text(encoding="utf-8")
    for lineno, line in enumerate(text.splitlines(), start=1):
        where = f"{path}:{lineno}"
        if not line.strip():
            problems.append(f"{where}: blank line")
            continue
        record, problem = parse_json_line(line)
        if problem is not None:
            problems.append(f"{where}: {problem}")
            continue
        try:
            personas.append(Persona.model_validate(record))
        except ValidationError as exc:
            details = all_errors(exc)
            pid = record.get("persona_id", "?") if isinstance(record, dict) else "?"
            problems.append(f"{where}: persona {pid}: {details}")
    return personas, problems


def load_personas(path: str | Path | None = None) -> list[Persona]:
    """Load personas from ``path`` (default: the shipped ``personas.jsonl``), in file order.

    Parsed records are cached per file (keyed by path, size and modification time, so an edited
    file is re-read); each call returns fresh copies, so callers may mutate them freely. Raises
    :class:`PersonaFileError` if any line is unreadable. Loading does not run the full
    :func:`validate_personas` check; the test suite and ``mirage-bench personas validate`` do.
    """
    cached = load_checked_cached(
        Path(path if path is not None else DEFAULT_PERSONAS_PATH), read_personas_file, PersonaFileError
    )
    return [_clone(p) for p in cached]


def _clone(persona: Persona) -> Persona:
    """Copy a validated persona, its dict and lists included (cheaper than ``model_copy(deep=True)``;
    ``benchmarks/bench_personas.py`` measures both)."""
    return Persona.model_construct(
        persona_id=persona.persona_id,
        stereotype_type=persona.stereotype_type,
        source=persona.source,
        ground_truth={k: list(v) if isinstance(v, list) else v for k, v in persona.ground_truth.items()},
        revealed_facts=list(persona.revealed_facts),
    )


def get_persona(persona_id: str, path: str | Path | None = None) -> Persona:
    """Return one persona by id; ``KeyError`` names the closest existing ids if there is none.

    >>> get_persona("seed_001").ground_truth["occupation"]
    'software engineer'
    """
    personas = load_personas(path)
    for persona in personas:
        if persona.persona_id == persona_id:
            return persona
    ids = [p.persona_id for p in personas]
    near = difflib.get_close_matches(persona_id, ids, n=5, cutoff=0.5)
    hint = f"; did you mean {', '.join(near)}?" if near else f"; ids run {ids[0]}..{ids[-1]}" if ids else ""
    raise KeyError(f"no persona {persona_id!r} among {len(ids)} personas{hint}")


# --------------------------------------------------------------------------- occupation heuristic

#: Words too generic to show an occupation on their own ("police officer" is shown by "police").
_GENERIC_OCCUPATION_WORDS = frozenset(
    """officer worker assistant specialist manager technician coordinator senior junior head chief
    professional owner operator associate lead staff member the and for of in at a an to""".split()
)

#: Domain words that reveal an occupation without naming it (keyed by an occupation word). The
#: list is deliberately small and English-only; see ``docs/personas.md`` for the heuristic's limits.
OCCUPATION_CUES: dict[str, frozenset[str]] = {
    key: frozenset(words.split())
    for key, words in {
        "teacher": "student pupil class classroom lesson school kids homework recess grading",
        "professor": "student seminar lecture campus syllabus tenure grading",
        "nurse": "patient hospital ward shift clinic icu",
        "doctor": "patient hospital clinic diagnosis shift",
        "physician": "patient hospital clinic diagnosis",
        "surgeon": "surgery operating patient hospital",
        "hairdresser": "salon hair haircut balayage client",
        "barber": "haircut fade shop beard clipper",
        "stylist": "salon hair client",
        "carrier": "mail route delivery",
        "postal": "mail route",
        "teller": "bank cash deposit",
        "farmer": "farm harvest crop barn field tractor",
        "rancher": "ranch cattle herd horse",
        "chef": "kitchen restaurant menu line service",
        "cook": "kitchen restaurant grill menu",
        "pilot": "flight cockpit landing airport plane",
        "attendant": "flight passenger cabin plane",
        "librarian": "library book",
        "mechanic": "engine garage brake transmission car",
        "bartender": "bar cocktail drink",
        "barista": "espresso latte cafe coffee",
        "programmer": "code bug software",
        "developer": "code bug app software",
        "firefighter": "fire station blaze",
        "paramedic": "ambulance call patient",
        "veterinarian": "clinic animal dog cat patient",
        "electrician": "wiring circuit breaker panel",
        "plumber": "pipe leak drain",
        "lawyer": "court client case trial",
        "attorney": "court client case trial",
        "judge": "court trial",
        "accountant": "tax audit ledger",
        "dentist": "teeth tooth cavity patient",
        "receptionist": "phone front desk",
        "driver": "route truck bus cab haul",
        "soldier": "army base deployment",
        "sergeant": "army base deployment",
        "scientist": "lab experiment data research",
        "researcher": "lab experiment research",
        "designer": "client design portfolio",
        "musician": "gig band concert",
        "dancer": "stage rehearsal performance",
        "actor": "stage rehearsal audition role",
        "writer": "novel manuscript chapter draft editor",
        "journalist": "story editor deadline newsroom",
        "pastor": "sermon congregation church",
        "priest": "mass parish congregation",
        "resources": "hr onboarding hiring",
        "human": "hr",
        "adjuster": "claim claims insurance",
        "cashier": "register checkout store",
        "clerk": "counter register filing",
        "laboratory": "lab",
        "florist": "flower bouquet boutonniere",
        "zookeeper": "zoo",
        "nun": "convent",
    }.items()
}

_WORD_RE = re.compile(r"[^\W\d_]+")  # runs of letters (any script)
_TOKEN_RE = re.compile(r"\w+")
_ACRONYM_RE = re.compile(r"\b[A-Z]{2,5}\b")


def _words(text: str) -> list[str]:
    return _WORD_RE.findall(text.casefold())


def _same_stem(a: str, b: str) -> bool:
    """Crude stem match: a shared prefix of at least max(4, shorter length - 2) letters.

    >>> _same_stem("nurse", "nursing"), _same_stem("teacher", "teaching"), _same_stem("car", "carpenter")
    (True, True, False)
    """
    if a == b:
        return True
    shorter = min(len(a), len(b))
    need = max(4, shorter - 2)
    if shorter < need:
        return False
    return a[:need] == b[:need]


def occupation_revealed(occupation: str, facts: Iterable[str]) -> bool:
    """Heuristic: do the facts reveal the occupation?

    True when a fact contains a non-generic word of the occupation (three letters or more, up to
    a crude stem), an acronym of it written in capitals (``DJ``, ``GIS``), or a domain cue word
    listed for one of the occupation's words in :data:`OCCUPATION_CUES`.

    >>> occupation_revealed("kindergarten teacher", ["One of my students finally tied their shoes!"])
    True
    >>> occupation_revealed("nightclub DJ", ["Played a six-hour DJ set."])
    True
    >>> occupation_revealed("IT support technician", ["It rained all day."])
    False
    >>> occupation_revealed("software engineer", ["I went rock climbing last weekend."])
    False
    """
    facts = list(facts)
    fact_words = {w for fact in facts for w in _words(fact)}
    fact_acronyms = {a for fact in facts for a in _ACRONYM_RE.findall(fact)}
    if fact_acronyms & set(_ACRONYM_RE.findall(occupation)):
        return True
    occ_words = [w for w in _words(occupation) if len(w) >= 3 and w not in _GENERIC_OCCUPATION_WORDS]
    if not occ_words:  # e.g. "manager": fall back to the generic words themselves
        occ_words = [w for w in _words(occupation) if len(w) >= 3]
    targets = set(occ_words)
    for occ_word in occ_words:
        for key, cues in OCCUPATION_CUES.items():
            if _same_stem(occ_word, key):
                targets |= cues
    return any(_same_stem(t, w) for t in targets for w in fact_words)


# --------------------------------------------------------------------------- validation


def _norm_fact(fact: str) -> str:
    """Case- and punctuation-insensitive form of a fact (digits kept: "400 lb" differs from "500 lb")."""
    return " ".join(_TOKEN_RE.findall(fact.casefold()))


def validate_persona(persona: Persona) -> list[str]:
    """Problems of a single persona (empty list = valid); the per-record rules of issue 2 §3.

    Checks the id pattern, stereotype type, source, the exact set of 15 ground-truth fields and
    their types, the age range, exactly three distinct non-empty facts, and (heuristically, see
    :func:`occupation_revealed`) that the facts reveal the occupation. Works on records built
    with ``Persona.model_construct`` too, so malformed data gets messages, not exceptions.
    """
    pid = getattr(persona, "persona_id", None)
    tag = f"{pid}" if isinstance(pid, str) and pid else "<no id>"
    problems: list[str] = []
    match = _ID_RE.match(pid) if isinstance(pid, str) else None
    if match is None:
        problems.append(f"{tag}: persona_id must look like seed_001 or p_009")
    stype = getattr(persona, "stereotype_type", None)
    if stype not in STEREOTYPE_TYPES:
        problems.append(f"{tag}: stereotype_type {stype!r} not in {list(STEREOTYPE_TYPES)}")
    source = getattr(persona, "source", None)
    if match is not None:
        if match["seed"] and source != "seed":
            problems.append(f"{tag}: seed personas must have source 'seed', not {source!r}")
        if match["num"] and source not in ("authored", "generated"):
            problems.append(f"{tag}: source must be 'authored' or 'generated' for p_ ids, not {source!r}")

    gt = getattr(persona, "ground_truth", None)
    if not isinstance(gt, dict):
        problems.append(f"{tag}: ground_truth must be an object")
        gt = {}
    missing = [f for f in GROUND_TRUTH_FIELDS if f not in gt]
    extra = sorted(set(gt) - set(GROUND_TRUTH_FIELDS))
    if missing:
        problems.append(f"{tag}: ground_truth missing field(s) {missing}")
    if extra:
        problems.append(f"{tag}: ground_truth has unexpected field(s) {extra}")
    for field in GROUND_TRUTH_FIELDS:
        if field not in gt:
            continue
        value = gt[field]
        if field in _INT_FIELDS:
            if not isinstance(value, int) or isinstance(value, bool):
                problems.append(f"{tag}: ground_truth.{field} must be an integer, got {value!r}")
            elif not AGE_RANGE[0] <= value <= AGE_RANGE[1]:
                problems.append(f"{tag}: ground_truth.{field} {value} outside {AGE_RANGE[0]}-{AGE_RANGE[1]}")
        elif field in _LIST_FIELDS:
            if (
                not isinstance(value, list)
                or not value
                or not all(isinstance(v, str) and v.strip() == v and v for v in value)
            ):
                problems.append(f"{tag}: ground_truth.{field} must be a non-empty list of trimmed strings")
        elif not isinstance(value, str) or not value.strip() or value.strip() != value:
            problems.append(f"{tag}: ground_truth.{field} must be a non-empty trimmed string, got {value!r}")

    facts = getattr(persona, "revealed_facts", None)
    if not isinstance(facts, list) or not all(isinstance(f, str) for f in facts):
        problems.append(f"{tag}: revealed_facts must be a list of strings")
        return problems
    if len(facts) != N_FACTS:
        problems.append(f"{tag}: has {len(facts)} revealed facts, needs exactly {N_FACTS}")
    if any(not f.strip() for f in facts):
        problems.append(f"{tag}: empty revealed fact")
    if len({_norm_fact(f) for f in facts}) != len(facts):
        problems.append(f"{tag}: repeats a revealed fact")
    occupation = gt.get("occupation")
    if isinstance(occupation, str) and occupation.strip() and not occupation_revealed(occupation, facts):
        problems.append(f"{tag}: no revealed fact seems to reveal the occupation {occupation!r}")
    return problems


def validate_personas(personas: Sequence[Persona], *, complete: bool = True) -> list[str]:
    """Problems of a persona set (empty list = valid).

    Runs :func:`validate_persona` on each record, then checks the set: unique ids, no revealed
    fact shared between personas (compared case- and punctuation-insensitively) and unique names.
    With ``complete=True`` (the shipped benchmark) it also checks exactly 150 personas with the ids
    ``seed_001..seed_008, p_009..p_150`` in order, 50 per stereotype group, and at least 60 distinct
    occupations.
    """
    problems: list[str] = []
    for persona in personas:
        problems.extend(validate_persona(persona))

    ids = [getattr(p, "persona_id", None) for p in personas]
    for pid, count in Counter(ids).items():
        if count > 1:
            problems.append(f"{pid}: persona_id used {count} times")

    seen_facts: dict[str, str] = {}
    for persona in personas:
        for fact in getattr(persona, "revealed_facts", None) or []:
            if not isinstance(fact, str):
                continue
            key = _norm_fact(fact)
            owner = seen_facts.setdefault(key, persona.persona_id)
            if owner != persona.persona_id:
                problems.append(f"{persona.persona_id}: revealed fact {fact!r} is also a fact of {owner}")

    names: dict[str, str] = {}
    for persona in personas:
        gt = getattr(persona, "ground_truth", None)
        name = gt.get("name") if isinstance(gt, dict) else None
        if isinstance(name, str):
            owner = names.setdefault(name.casefold(), persona.persona_id)
            if owner != persona.persona_id:
                problems.append(f"{persona.persona_id}: name {name!r} is also the name of {owner}")

    if not complete:
        return problems

    if len(personas) != N_PERSONAS:
        problems.append(f"set: {len(personas)} personas, expected exactly {N_PERSONAS}")
    expected = expected_persona_ids()
    for position, (got, want) in enumerate(zip(ids, expected, strict=False), start=1):
        if got != want:
            problems.append(
                f"set: persona {position} has id {got!r}, expected {want!r} (ids must run in order)"
            )
            break
    groups = Counter(getattr(p, "stereotype_type", None) for p in personas)
    for group in STEREOTYPE_TYPES:
        if groups.get(group, 0) != PER_GROUP:
            problems.append(f"set: {groups.get(group, 0)} {group} personas, expected {PER_GROUP}")
    occupations = {
        gt["occupation"].strip().casefold()
        for p in personas
        if isinstance(gt := getattr(p, "ground_truth", None), dict) and isinstance(gt.get("occupation"), str)
    }
    if len(occupations) < MIN_OCCUPATIONS:
        problems.append(f"set: {len(occupations)} distinct occupations, need at least {MIN_OCCUPATIONS}")
    return problems
