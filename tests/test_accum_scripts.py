"""Accum scripts: the shipped file validates, and the validator catches each kind of problem."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mirage_bench.cli import app
from mirage_bench.instruments.accum.scripts import (
    DEFAULT_ACCUM_SCRIPTS_PATH,
    AccumScript,
    AccumScriptFileError,
    PlantedContradiction,
    get_accum_script,
    load_accum_scripts,
    read_accum_scripts_file,
    validate_accum_scripts,
)
from mirage_bench.personas import load_personas
from mirage_bench.types import GROUND_TRUTH_FIELDS, STEREOTYPE_TYPES, Persona

# --- the shipped scripts ---------------------------------------------------------------------


def test_shipped_scripts_validate_against_shipped_personas() -> None:
    assert validate_accum_scripts(load_accum_scripts(), load_personas()) == []


def test_shipped_scripts_cover_the_required_personas_and_groups() -> None:
    scripts = load_accum_scripts()
    personas = {p.persona_id: p for p in load_personas()}
    assert len(scripts) >= 30
    assert {"seed_001", "seed_006"} <= {s.persona_id for s in scripts}
    groups = Counter(personas[s.persona_id].stereotype_type for s in scripts)
    assert set(groups) == set(STEREOTYPE_TYPES)
    assert min(groups.values()) >= 10 and len(set(groups.values())) == 1
    for script in scripts:
        assert len(script.utterances) == 8
        assert script.contradictions
        assert all(2 <= c.round <= 8 and c.attribute in GROUND_TRUTH_FIELDS for c in script.contradictions)


def test_shipped_file_is_one_json_object_per_line() -> None:
    lines = DEFAULT_ACCUM_SCRIPTS_PATH.read_text(encoding="utf-8").splitlines()
    assert len(lines) == len(load_accum_scripts())
    assert all(set(json.loads(line)) == {"persona_id", "utterances", "contradictions"} for line in lines)


def test_seed_006_script_plants_a_contradiction_of_a_stereotype() -> None:
    script = get_accum_script("seed_006")
    rounds = {c.round: c for c in script.contradictions}
    assert rounds, "seed_006 needs a planted contradiction"
    for number, planted in rounds.items():
        assert script.utterance(number) == script.utterances[number - 1]
        assert planted.contradicts


def test_get_accum_script_and_utterance_errors() -> None:
    with pytest.raises(KeyError, match="no Accum script for persona 'seed_999'"):
        get_accum_script("seed_999")
    script = get_accum_script("seed_001")
    with pytest.raises(IndexError):
        script.utterance(0)
    with pytest.raises(IndexError):
        script.utterance(9)


# --- the validator on small synthetic sets ---------------------------------------------------


def _persona(pid: str, group: str) -> Persona:
    truth: dict[str, str | int | list[str]] = {f: f"{f} of {pid}" for f in GROUND_TRUTH_FIELDS}
    truth["age"] = 30
    truth["hobbies"] = ["chess"]
    truth["relationship_status"] = "single"
    return Persona(
        persona_id=pid,
        stereotype_type=group,  # type: ignore[arg-type]
        source="authored",
        ground_truth=truth,
        revealed_facts=[f"{pid} fact one.", f"{pid} fact two.", f"{pid} fact three."],
    )


PERSONAS = [_persona(f"p_{i:03d}", group) for i, group in enumerate(STEREOTYPE_TYPES, start=1)]


def _script(pid: str, **changes: object) -> AccumScript:
    record: dict[str, object] = {
        "persona_id": pid,
        "utterances": [f"{pid} says something new in round {r}." for r in range(1, 9)],
        "contradictions": [{"round": 7, "attribute": "relationship_status", "contradicts": "married"}],
    }
    record.update(changes)
    return AccumScript.model_validate(record)


def _check(scripts: list[AccumScript]) -> list[str]:
    return validate_accum_scripts(scripts, PERSONAS, min_per_group=1, required=())


def _valid_set() -> list[AccumScript]:
    return [_script(p.persona_id) for p in PERSONAS]


def test_synthetic_valid_set_has_no_problems() -> None:
    assert _check(_valid_set()) == []


@pytest.mark.parametrize(
    ("index", "changes", "expected"),
    [
        (0, {"utterances": [f"u{r}" for r in range(1, 8)]}, "7 utterances, expected 8"),
        (0, {"utterances": [f"u{r}" for r in range(1, 10)]}, "9 utterances, expected 8"),
        (0, {"utterances": ["same"] * 8}, "repeated utterance"),
        (0, {"utterances": ["  "] + [f"u{r}" for r in range(2, 9)]}, "round 1 utterance is empty"),
        (0, {"utterances": ["p_001 fact one."] + [f"u{r}" for r in range(2, 9)]}, "repeats a revealed fact"),
        (1, {"contradictions": []}, "no planted contradiction"),
        (
            1,
            {"contradictions": [{"round": 1, "attribute": "pet", "contradicts": "has a dog"}]},
            "round 1 not in 2..8",
        ),
        (
            1,
            {"contradictions": [{"round": 9, "attribute": "pet", "contradicts": "has a dog"}]},
            "round 9 not in 2..8",
        ),
        (
            2,
            {"contradictions": [{"round": 3, "attribute": "pets", "contradicts": "x"}]},
            "did you mean 'pet'",
        ),
        (2, {"contradictions": [{"round": 3, "attribute": "pet", "contradicts": " "}]}, "does not say what"),
        (
            2,
            {"contradictions": [{"round": 3, "attribute": "relationship_status", "contradicts": "single"}]},
            "names the ground truth",
        ),
        (
            2,
            {
                "contradictions": [
                    {"round": 3, "attribute": "pet", "contradicts": "has a dog"},
                    {"round": 3, "attribute": "city", "contradicts": "lives in a big city"},
                ]
            },
            "two contradictions planted in round 3",
        ),
    ],
)
def test_validator_reports_bad_scripts(index: int, changes: dict[str, object], expected: str) -> None:
    scripts = _valid_set()
    scripts[index] = _script(PERSONAS[index].persona_id, **changes)
    problems = _check(scripts)
    assert any(expected in p for p in problems), problems


def test_validator_reports_set_level_problems() -> None:
    valid = _valid_set()
    assert any("no such persona" in p for p in _check([*valid, _script("p_404")]))
    assert any(
        "2 scripts (one per persona)" in p
        for p in _check([*valid, _script("p_001", utterances=list("abcdefgh"))])
    )
    unbalanced = validate_accum_scripts(valid[:2], PERSONAS, min_per_group=1, required=())
    assert any("group neutral: 0 scripts" in p for p in unbalanced)
    assert any("groups unbalanced" in p for p in unbalanced)
    required = validate_accum_scripts(valid, PERSONAS, min_per_group=1, required=("seed_001",))
    assert required == ["seed_001: required persona has no script"]
    too_few = validate_accum_scripts(valid, PERSONAS, min_per_group=10, required=())
    assert len([p for p in too_few if "need at least 10" in p]) == 3


def test_validator_reports_utterances_shared_between_scripts() -> None:
    scripts = _valid_set()
    shared = list(scripts[0].utterances)
    scripts[1] = _script("p_002", utterances=[shared[0]] + [f"other {r}" for r in range(2, 9)])
    assert any("also in p_001's script" in p for p in _check(scripts))


# --- reading files ---------------------------------------------------------------------------


def test_unreadable_lines_are_all_reported(tmp_path: Path) -> None:
    good = _script("p_001").model_dump_json()
    bad_field = json.dumps({**json.loads(good), "extra": 1})
    bad_round = json.dumps({**json.loads(good), "contradictions": [{"round": "seven", "attribute": "pet"}]})
    path = tmp_path / "scripts.jsonl"
    path.write_text("\n".join([good, "", "{not json", bad_field, bad_round]) + "\n", encoding="utf-8")
    scripts, problems = read_accum_scripts_file(path)
    assert [s.persona_id for s in scripts] == ["p_001"]
    assert [p.split(": ", 1)[0] for p in problems] == [f"{path}:3", f"{path}:4", f"{path}:5"]
    assert "extra" in problems[1] and "contradicts" in problems[2]
    with pytest.raises(AccumScriptFileError) as info:
        load_accum_scripts(path)
    assert len(info.value.problems) == 3


def test_load_missing_file_raises(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        load_accum_scripts(tmp_path / "absent.jsonl")


def test_models_are_frozen_and_strict() -> None:
    planted = PlantedContradiction(round=3, attribute="pet", contradicts="has a dog")
    with pytest.raises(ValueError):
        planted.round = 4  # type: ignore[misc]
    with pytest.raises(ValueError):
        AccumScript.model_validate({"persona_id": "x", "utterances": ["a"], "contradictions": [], "extra": 1})


# --- CLI -------------------------------------------------------------------------------------


def test_cli_validate_ok() -> None:
    result = CliRunner().invoke(app, ["accum-scripts", "validate"])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(f"ok: {len(load_accum_scripts())} scripts")


def test_cli_validate_bad_file_fails(tmp_path: Path) -> None:
    path = tmp_path / "scripts.jsonl"
    path.write_text(_script("seed_001", utterances=["only one"]).model_dump_json() + "\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["accum-scripts", "validate", "--path", str(path)])
    assert result.exit_code == 1
    assert "seed_001: 1 utterances, expected 8" in result.output


def test_cli_show_marks_planted_rounds() -> None:
    result = CliRunner().invoke(app, ["accum-scripts", "show", "seed_001"])
    assert result.exit_code == 0, result.output
    script = get_accum_script("seed_001")
    assert f"round 1: {script.utterances[0]}" in result.stdout
    assert result.stdout.count("[planted contradiction]") == len(script.contradictions)
    missing = CliRunner().invoke(app, ["accum-scripts", "show", "nobody"])
    assert missing.exit_code == 1
