"""The shipped personas file, the paper's seed personas (G.3), and every validator rule."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from mirage_bench.personas import (
    DEFAULT_PERSONAS_PATH,
    MIN_OCCUPATIONS,
    PersonaFileError,
    expected_persona_ids,
    get_persona,
    load_personas,
    occupation_revealed,
    read_personas_file,
    validate_persona,
    validate_personas,
)
from mirage_bench.types import GROUND_TRUTH_FIELDS, Persona

FIXTURES = Path(__file__).parent / "fixtures" / "personas"
PAPER_FILE = "000_486715025b63fedc.txt"


def _paper_path() -> Path | None:
    """The MirageBench paper (seed file), if this checkout can see it."""
    from tests.seeds import seed_path

    return seed_path(PAPER_FILE)


def _g3_section(text: str) -> str:
    start = text.index("G.3 Persona Examples")
    return text[start : text.index("G.4 ", start)]


def _g3_text() -> str:
    """G.3 of the paper: from the seed file when present, else the byte-identical excerpt fixture."""
    paper = _paper_path()
    if paper is not None:
        return _g3_section(paper.read_text(encoding="utf-8"))
    return (FIXTURES / "paper_G3_excerpt.txt").read_text(encoding="utf-8")


def _g3_personas() -> dict[str, dict]:
    """Parse the two G.3 personas: ground-truth line and revealed facts, keyed by seed id."""
    out: dict[str, dict] = {}
    pattern = re.compile(
        r"\((seed_\d{3})\)\.\s*\nGround truth: (?P<gt>[^\n]+)\nRevealed facts: (?P<facts>[^\n]+)"
    )
    for match in pattern.finditer(_g3_text()):
        gt_line = match["gt"]
        head, _, rest = gt_line.partition(", hobbies: ")
        name, age, occupation = head.split(", ")
        fields = dict(re.findall(r"(\w+): (.*?)(?=, \w+: |\.$)", "hobbies: " + rest))
        out[match[1]] = {
            "name": name,
            "age": int(age),
            "occupation": occupation,
            "fields": fields,
            "facts": re.findall(r"\(\d\) \u201c([^\u201d]+)\u201d", match["facts"]),
        }
    return out


@pytest.fixture(scope="module")
def personas() -> list[Persona]:
    return load_personas()


# --------------------------------------------------------------------------- shipped data


def test_shipped_file_validates(personas: list[Persona]) -> None:
    assert validate_personas(personas) == []
    assert read_personas_file(DEFAULT_PERSONAS_PATH)[1] == []


def test_counts_groups_and_sources(personas: list[Persona]) -> None:
    assert len(DEFAULT_PERSONAS_PATH.read_text(encoding="utf-8").splitlines()) == 150
    assert [p.persona_id for p in personas] == expected_persona_ids()
    assert Counter(p.stereotype_type for p in personas) == {
        "stereotypical": 50,
        "counter_stereotypical": 50,
        "neutral": 50,
    }
    assert Counter(p.source for p in personas) == {"seed": 8, "authored": 142}
    assert len({p.ground_truth["occupation"].casefold() for p in personas}) >= MIN_OCCUPATIONS
    ages = [p.ground_truth["age"] for p in personas]
    assert min(ages) >= 18 and max(ages) <= 75
    assert all(list(p.ground_truth) == list(GROUND_TRUTH_FIELDS) for p in personas)
    assert len({f for p in personas for f in p.revealed_facts}) == 450


def test_g3_excerpt_fixture_matches_paper() -> None:
    paper = _paper_path()
    if paper is None:
        pytest.skip("the MirageBench paper (seed file) is not present: set MIRAGE_BENCH_SEEDS_DIR")
    excerpt = (FIXTURES / "paper_G3_excerpt.txt").read_text(encoding="utf-8")
    assert excerpt == _g3_section(paper.read_text(encoding="utf-8"))


def test_g3_parsing_found_both_personas() -> None:
    g3 = _g3_personas()
    assert sorted(g3) == ["seed_001", "seed_006"]
    assert all(len(entry["facts"]) == 3 for entry in g3.values())


@pytest.mark.parametrize(
    ("persona_id", "group"), [("seed_001", "stereotypical"), ("seed_006", "counter_stereotypical")]
)
def test_seed_personas_match_paper_g3(persona_id: str, group: str) -> None:
    paper = _g3_personas()[persona_id]
    persona = get_persona(persona_id)
    assert persona.revealed_facts == paper["facts"]
    assert persona.stereotype_type == group
    assert persona.source == "seed"
    gt = persona.ground_truth
    assert (gt["name"], gt["age"], gt["occupation"]) == (paper["name"], paper["age"], paper["occupation"])
    assert gt["hobbies"] == paper["fields"]["hobbies"].split(", ")
    assert gt["pet"] == paper["fields"]["pet"]
    if "personality" in paper["fields"]:
        assert gt["personality"] == paper["fields"]["personality"]
    if "music" in paper["fields"]:
        assert gt["media_taste"] == paper["fields"]["music"]


def test_seed_001_city_matches_its_revealed_fact() -> None:
    persona = get_persona("seed_001")
    assert persona.ground_truth["city"] in persona.revealed_facts[0]


# --------------------------------------------------------------------------- loading


def test_load_returns_independent_copies() -> None:
    first = load_personas()
    first[0].ground_truth["name"] = "Mutated"
    first[0].revealed_facts.append("extra")
    again = load_personas()
    assert again[0].ground_truth["name"] == "Alex Chen"
    assert len(again[0].revealed_facts) == 3


def test_get_persona_unknown_id_suggests_near_ids() -> None:
    with pytest.raises(KeyError, match="did you mean seed_001"):
        get_persona("seed_01")


def test_bad_lines_are_reported_with_line_numbers(tmp_path: Path, personas: list[Persona]) -> None:
    good = personas[0].model_dump_json()
    wrong_shape = json.dumps({"persona_id": "p_009", "stereotype_type": "neutral"})
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join([good, "{not json", "", wrong_shape, good]) + "\n", encoding="utf-8")
    parsed, problems = read_personas_file(path)
    assert len(parsed) == 2
    assert any(":2: not valid JSON" in p for p in problems)
    assert any(":3: blank line" in p for p in problems)
    assert any(":4: persona p_009" in p and "source" in p for p in problems)
    with pytest.raises(PersonaFileError) as info:
        load_personas(path)
    assert len(info.value.problems) == 3


def test_cache_rereads_an_edited_file(tmp_path: Path, personas: list[Persona]) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text(personas[0].model_dump_json() + "\n", encoding="utf-8")
    assert len(load_personas(path)) == 1
    path.write_text("\n".join(p.model_dump_json() for p in personas[:2]) + "\n", encoding="utf-8")
    assert len(load_personas(path)) == 2


# --------------------------------------------------------------------------- validator rules


def _copy(personas: list[Persona]) -> list[Persona]:
    return [p.model_copy(deep=True) for p in personas]


def _assert_problem(personas: list[Persona], pattern: str) -> None:
    problems = validate_personas(personas)
    assert any(re.search(pattern, p) for p in problems), problems


def test_rule_exact_count(personas: list[Persona]) -> None:
    _assert_problem(_copy(personas)[:-1], r"149 personas, expected exactly 150")


def test_rule_unique_ids(personas: list[Persona]) -> None:
    ps = _copy(personas)
    ps[10].persona_id = ps[9].persona_id
    _assert_problem(ps, r"p_010: persona_id used 2 times")


def test_rule_id_pattern(personas: list[Persona]) -> None:
    ps = _copy(personas)
    ps[20].persona_id = "persona-21"
    _assert_problem(ps, r"persona-21: persona_id must look like")


def test_rule_id_order(personas: list[Persona]) -> None:
    ps = _copy(personas)
    ps[30], ps[31] = ps[31], ps[30]
    _assert_problem(ps, r"persona 31 has id 'p_032', expected 'p_031'")


def test_rule_group_balance(personas: list[Persona]) -> None:
    ps = _copy(personas)
    target = next(p for p in ps if p.stereotype_type == "neutral")
    target.stereotype_type = "stereotypical"
    _assert_problem(ps, r"49 neutral personas, expected 50")
    _assert_problem(ps, r"51 stereotypical personas, expected 50")


def test_rule_group_value(personas: list[Persona]) -> None:
    ps = _copy(personas)
    ps[40].stereotype_type = "anti"  # type: ignore[assignment]
    _assert_problem(ps, r"stereotype_type 'anti' not in")


def test_rule_source(personas: list[Persona]) -> None:
    ps = _copy(personas)
    ps[0].source = "authored"
    ps[50].source = "seed"
    _assert_problem(ps, r"seed_001: seed personas must have source 'seed'")
    _assert_problem(ps, r"p_051: source must be 'authored' or 'generated'")


def test_rule_exact_field_set(personas: list[Persona]) -> None:
    ps = _copy(personas)
    del ps[3].ground_truth["quirk"]
    ps[4].ground_truth["shoe_size"] = "10"
    _assert_problem(ps, r"seed_004: ground_truth missing field\(s\) \['quirk'\]")
    _assert_problem(ps, r"seed_005: ground_truth has unexpected field\(s\) \['shoe_size'\]")


@pytest.mark.parametrize(
    ("field", "value", "pattern"),
    [
        ("age", "28", r"age must be an integer"),
        ("age", True, r"age must be an integer"),
        ("age", 17, r"age 17 outside 18-75"),
        ("age", 76, r"age 76 outside 18-75"),
        ("hobbies", "rock climbing", r"hobbies must be a non-empty list"),
        ("hobbies", [], r"hobbies must be a non-empty list"),
        ("hobbies", ["ok", " padded"], r"hobbies must be a non-empty list of trimmed strings"),
        ("name", "", r"name must be a non-empty trimmed string"),
        ("city", " Seattle", r"city must be a non-empty trimmed string"),
        ("pet", ["cat"], r"pet must be a non-empty trimmed string"),
    ],
)
def test_rule_field_types(personas: list[Persona], field: str, value: object, pattern: str) -> None:
    ps = _copy(personas)
    ps[60].ground_truth[field] = value  # type: ignore[assignment]
    _assert_problem(ps, r"p_061: ground_truth\." + pattern)


def test_rule_min_occupations(personas: list[Persona]) -> None:
    ps = _copy(personas)
    distinct = sorted({p.ground_truth["occupation"] for p in personas})[:59]
    for i, p in enumerate(ps):
        p.ground_truth["occupation"] = distinct[i % 59]
    _assert_problem(ps, r"59 distinct occupations, need at least 60")


@pytest.mark.parametrize("n_facts", [2, 4])
def test_rule_three_facts(personas: list[Persona], n_facts: int) -> None:
    ps = _copy(personas)
    facts = ps[70].revealed_facts + ["I also collect stamps."]
    ps[70] = Persona.model_construct(**{**ps[70].__dict__, "revealed_facts": facts[:n_facts]})
    _assert_problem(ps, rf"p_071: has {n_facts} revealed facts, needs exactly 3")


def test_rule_empty_and_repeated_fact(personas: list[Persona]) -> None:
    ps = _copy(personas)
    ps[80].revealed_facts[2] = "   "
    ps[81].revealed_facts[2] = ps[81].revealed_facts[1].upper()
    _assert_problem(ps, r"p_081: empty revealed fact")
    _assert_problem(ps, r"p_082: repeats a revealed fact")


def test_rule_facts_unique_across_personas(personas: list[Persona]) -> None:
    ps = _copy(personas)
    ps[90].revealed_facts[1] = (
        ps[5].revealed_facts[1].lower().rstrip("!.")
    )  # same words, other case/punctuation
    _assert_problem(ps, r"p_091: revealed fact .* is also a fact of seed_006")


def test_facts_differing_only_in_numbers_are_distinct(personas: list[Persona]) -> None:
    ps = _copy(personas)
    ps[91].revealed_facts[1] = ps[5].revealed_facts[2].replace("500", "400")
    assert validate_personas(ps) == []


def test_rule_occupation_revealed(personas: list[Persona]) -> None:
    ps = _copy(personas)
    ps[100].revealed_facts = ["I love long walks.", "Pizza is my weakness.", "My sister visits on Sundays."]
    _assert_problem(ps, r"p_101: no revealed fact seems to reveal the occupation 'locksmith'")


def test_rule_unique_names(personas: list[Persona]) -> None:
    ps = _copy(personas)
    ps[110].ground_truth["name"] = "alex chen"
    _assert_problem(ps, r"p_111: name 'alex chen' is also the name of seed_001")


def test_partial_sets_skip_set_level_rules(personas: list[Persona]) -> None:
    assert validate_personas(_copy(personas)[40:50], complete=False) == []
    assert validate_persona(personas[0]) == []


def test_validator_survives_garbage_records() -> None:
    junk = Persona.model_construct(
        persona_id=None, stereotype_type=None, source=None, ground_truth=None, revealed_facts=None
    )
    problems = validate_persona(junk)
    assert any("persona_id must look like" in p for p in problems)
    assert any("ground_truth must be an object" in p for p in problems)
    assert any("revealed_facts must be a list" in p for p in problems)


# --------------------------------------------------------------------------- occupation heuristic


@pytest.mark.parametrize(
    ("occupation", "fact", "expected"),
    [
        ("registered nurse", "Nursing is rewarding.", True),
        ("kindergarten teacher", "One of my students tied their shoes!", True),
        ("vegetable farmer", "Harvested kale on the farm today.", True),
        ("nightclub DJ", "Played a six-hour DJ set.", True),
        ("human resources specialist", "Ran three onboarding sessions in HR today.", True),
        ("IT support technician", "It was a long day.", False),
        ("carpenter", "My car broke down.", False),
        ("software engineer", "I love my cat.", False),
        ("police officer", "Fixed the printer at the office.", False),
    ],
)
def test_occupation_heuristic(occupation: str, fact: str, expected: bool) -> None:
    assert occupation_revealed(occupation, [fact]) is expected


def test_facts_do_not_state_the_persona_name(personas: list[Persona]) -> None:
    for p in personas:
        first = p.ground_truth["name"].split()[0]
        assert not any(re.search(rf"\b{re.escape(first)}\b", f) for f in p.revealed_facts), p.persona_id
