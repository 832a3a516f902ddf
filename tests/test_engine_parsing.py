"""Parsing of instrument outputs: only no-guessing repairs, everything else is a ParseError."""

from __future__ import annotations

import json

import pytest

from mirage_bench.instruments.parsing import (
    JUDGE_OUTPUT_SCHEMA,
    ParseError,
    parse_judge_output,
    parse_memory,
    parse_probe,
    parse_self_audit,
)
from mirage_bench.types import Accuracy, Label

GOOD = {
    "claims": [
        {
            "claim": "Works as an engineer",
            "category": "GROUNDED",
            "accuracy": "CORRECT",
            "reasoning": "fact 1",
        }
    ]
}


def test_clean_judge_output_needs_no_repair() -> None:
    parsed = parse_judge_output(json.dumps(GOOD))
    assert parsed.repairs == []
    assert parsed.value.claims[0].label is Label.GROUNDED
    assert parsed.value.claims[0].accuracy is Accuracy.CORRECT


@pytest.mark.parametrize(
    ("text", "repairs"),
    [
        ("```json\n" + json.dumps(GOOD) + "\n```", ["code_fence"]),
        (
            '{"claims": [{"claim": "x", "category": "GROUNDED", "accuracy": "CORRECT", "reasoning": "",},],}',
            ["trailing_comma"],
        ),
        (json.dumps(GOOD["claims"]), ["top_level_list"]),
        (
            json.dumps(
                {
                    "claims": [
                        {
                            "claim": "x",
                            "category": "inferred stereotype",
                            "accuracy": "Partially-Correct",
                            "reasoning": "",
                        }
                    ]
                }
            ),
            ["label_normalised"],
        ),
        (json.dumps({"claims": [{"claim": "x", "label": "FABRICATED", "accuracy": "UNVERIFIABLE"}]}), []),
    ],
)
def test_allowed_repairs_are_recorded(text: str, repairs: list[str]) -> None:
    assert parse_judge_output(text).repairs == repairs


def test_trailing_comma_inside_a_string_is_left_alone() -> None:
    text = '[{"claim": "likes a,] b", "category": "GROUNDED", "accuracy": "CORRECT", "reasoning": ",}",}]'
    claim = parse_judge_output(text).value.claims[0]
    assert claim.claim == "likes a,] b" and claim.reasoning == ",}"


@pytest.mark.parametrize(
    "text",
    [
        "Sure! Here is the JSON: " + json.dumps(GOOD),  # prose around the JSON: would need guessing
        json.dumps(GOOD)[:-10],  # truncated
        json.dumps(
            {"claims": [{"claim": "x", "category": "REASONABLE", "accuracy": "CORRECT"}]}
        ),  # unknown label
        json.dumps({"claims": [{"claim": "x", "accuracy": "CORRECT"}]}),  # missing label
        json.dumps({"verdicts": []}),
        "",
    ],
)
def test_unrepairable_outputs_raise(text: str) -> None:
    with pytest.raises(ParseError):
        parse_judge_output(text)


def test_schema_matches_the_output_contract_prompt() -> None:
    from mirage_bench.prompts import load_template

    contract = load_template("judge_output_format").text
    item = JUDGE_OUTPUT_SCHEMA["properties"]["claims"]["items"]
    for key in item["required"]:
        assert f'"{key}"' in contract
    for value in item["properties"]["category"]["enum"] + item["properties"]["accuracy"]["enum"]:
        assert value in contract


def test_self_audit_and_probe() -> None:
    audit = parse_self_audit('```\n[{"claim": "a", "category": "fabricated", "reasoning": "r"}]\n```')
    assert audit.value[0].category is Label.FABRICATED and audit.repairs == ["code_fence", "label_normalised"]
    with pytest.raises(ParseError):
        parse_self_audit('{"claims": []}')  # the G.6 contract is a bare array
    probe = parse_probe('[{"claim": "c", "type": "inferred", "reasoning": "r"}]')
    assert probe.value[0].type == "inferred"


def test_memory_requires_all_five_fields() -> None:
    full = {
        "observed": ["a"],
        "preferences": [{"x": 1}],
        "personality_traits": [],
        "demographics": [],
        "predictions": [],
    }
    memory = parse_memory(json.dumps(full)).value
    assert memory.preferences == ['{"x": 1}']
    del full["predictions"]
    with pytest.raises(ParseError, match="predictions"):
        parse_memory(json.dumps(full))


def test_the_output_contracts_own_example_is_not_a_claim() -> None:
    """Measured with a base model behind llama.cpp's server: it copied the example object back."""
    from mirage_bench.prompts import load_template

    contract = load_template("judge_output_format").text
    start = contract.index('{"claims": [{"claim"')
    example = json.loads(contract[start : contract.index("\n", start)])
    with pytest.raises(ParseError, match="placeholder"):
        parse_judge_output(json.dumps(example))
    blank = {"claims": [{**GOOD["claims"][0], "claim": "  "}]}
    with pytest.raises(ParseError, match="empty"):
        parse_judge_output(json.dumps(blank))
    inside = "Uses <br> tags in emails"
    bracketed_inside = {"claims": [{**GOOD["claims"][0], "claim": inside}]}
    assert parse_judge_output(json.dumps(bracketed_inside)).value.claims[0].claim == inside
