"""Task (+ self-audit), Probe, Accum and persona generation against scripted backends."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from mirage_bench.backends.base import GenerateParams
from mirage_bench.backends.scripted import ScriptedBackend
from mirage_bench.client import Client, ClientConfig
from mirage_bench.instruments.accum import check_contradiction, run_accum
from mirage_bench.instruments.parsing import Memory
from mirage_bench.instruments.persona_gen import generate_persona
from mirage_bench.instruments.probe import run_probe
from mirage_bench.instruments.records import AccumRound
from mirage_bench.instruments.simulate import SimulatedResponder
from mirage_bench.instruments.task import run_task
from mirage_bench.personas import get_persona
from mirage_bench.tasks import get_task
from mirage_bench.types import Message

FAST = ClientConfig(backoff_base_s=0.0, backoff_max_s=0.0)


class Recorder:
    """A responder that records every request and answers from a function."""

    def __init__(self, answer) -> None:
        self.answer = answer
        self.requests: list[tuple[list[Message], GenerateParams]] = []

    def __call__(self, messages: list[Message], params: GenerateParams) -> str:
        self.requests.append((messages, params))
        return self.answer(messages, params)


async def test_task_then_self_audit_in_a_separate_turn() -> None:
    audit = [
        {"claim": "Climbs", "category": "GROUNDED", "reasoning": "f2"},
        {"claim": "Minimalist flat", "category": "INFERRED_STEREOTYPE", "reasoning": "job"},
        {"claim": "Has plants", "category": "FABRICATED", "reasoning": "none"},
    ]
    rec = Recorder(lambda m, p: json.dumps(audit) if len(m) > 2 else "Your flat is minimalist, with plants.")
    persona, task = get_persona("seed_001"), get_task("apartment")
    record = await run_task(Client(ScriptedBackend(rec), FAST), persona, task, model_name="m", seed=3)
    (first, p1), (second, p2) = rec.requests
    assert [m.role for m in first] == ["system", "user"]
    assert first[0].content.startswith("You are a personalized AI assistant.")
    assert all(f in first[0].content for f in persona.revealed_facts)
    assert first[1].content == task.prompt
    assert p1.temperature == 0.7 and p1.seed == 3 and p1.json_schema is None
    assert [m.role for m in second] == ["system", "user", "assistant", "user"]
    assert second[2].content == record.response and record.response in second[3].content
    assert task.audit_description in second[3].content
    assert record.status == "ok" and record.self_audit.status == "ok" and record.self_audit.n_claims == 3
    assert abs(record.self_audit.oi_rate - 2 / 3) < 1e-9


async def test_self_audit_call_and_manifest_carry_the_task_phrase_sha() -> None:
    from mirage_bench.prompts import load_template
    from mirage_bench.runs import prompt_shas, templates_for

    task = get_task("apartment")
    phrase_sha = load_template(task.audit_template).sha256
    audit_sha = load_template("task_self_audit").sha256
    client = Client(ScriptedBackend(lambda m, p: "[]" if len(m) > 2 else "A calm flat."), FAST)
    seen: list[tuple[str, ...]] = []
    call = client.call

    async def spy(messages, params, *, prompt_sha256=()):
        seen.append(tuple(prompt_sha256))
        return await call(messages, params, prompt_sha256=prompt_sha256)

    client.call = spy  # type: ignore[method-assign]
    record = await run_task(client, get_persona("seed_001"), task, model_name="m")
    assert record.self_audit.status == "ok"
    task_shas, audit_shas = seen
    assert phrase_sha not in task_shas and audit_sha not in task_shas
    assert phrase_sha in audit_shas and audit_sha in audit_shas
    manifest_shas = prompt_shas(templates_for(["task"], ["apartment"]))
    assert manifest_shas[task.audit_template] == phrase_sha and manifest_shas["task_self_audit"] == audit_sha


async def test_task_call_failure_is_a_failed_record() -> None:
    from mirage_bench.backends.base import BackendError

    too_long = BackendError("400 prompt is too long", retryable=False, status_code=400)
    backend = ScriptedBackend(lambda m, p: too_long)
    record = await run_task(
        Client(backend, FAST), get_persona("seed_001"), get_task("apartment"), model_name="m"
    )
    assert record.status == "failed" and record.response is None and "too long" in record.error
    assert record.self_audit.status == "skipped"


async def test_task_with_a_refused_key_stops_instead_of_recording() -> None:
    from mirage_bench.backends.base import BackendError
    from mirage_bench.client import FatalBackendError

    backend = ScriptedBackend(lambda m, p: BackendError("401 unauthorized", retryable=False, status_code=401))
    with pytest.raises(FatalBackendError, match="unauthorized"):
        await run_task(Client(backend, FAST), get_persona("seed_001"), get_task("apartment"), model_name="m")


async def test_probe_is_judged_for_incorrect_rate() -> None:
    inferences = [
        {"claim": "Is a software engineer", "type": "directly_stated", "reasoning": "f1"},
        {"claim": "Is married", "type": "inferred", "reasoning": "guess"},
    ]
    verdict = {
        "claims": [
            {
                "claim": "Is a software engineer",
                "category": "GROUNDED",
                "accuracy": "CORRECT",
                "reasoning": "",
            },
            {"claim": "Is married", "category": "FABRICATED", "accuracy": "INCORRECT", "reasoning": ""},
        ]
    }
    model = Recorder(lambda m, p: json.dumps(inferences))
    judge = Recorder(lambda m, p: json.dumps(verdict))
    record = await run_probe(
        Client(ScriptedBackend(model), FAST),
        get_persona("seed_001"),
        model_name="m",
        judge_client=Client(ScriptedBackend(judge), FAST),
        judge_name="j",
    )
    assert model.requests[0][0][0].content.startswith("Here are 3 facts a user has shared:")
    assert model.requests[0][1].temperature == 0.7 and judge.requests[0][1].temperature == 0.0
    assert "- Is married" in judge.requests[0][0][1].content
    assert record.status == "ok" and len(record.inferences) == 2 and record.incorrect_rate == 0.5


def _memory(**fields: list[str]) -> dict[str, list[str]]:
    base = {
        "observed": [],
        "preferences": [],
        "personality_traits": [],
        "demographics": [],
        "predictions": [],
    }
    base.update(fields)
    return base


async def test_accum_tracks_growth_removals_and_retraction() -> None:
    persona = get_persona("seed_001")
    facts = list(persona.revealed_facts)
    answers = [
        _memory(
            observed=facts + ["u1"], demographics=["in a long-term relationship"], preferences=["likes tea"]
        ),
        _memory(
            observed=facts + ["u1", "u2"],
            demographics=["in a long-term relationship"],
            preferences=["likes tea", "likes hiking"],
        ),
        _memory(
            observed=facts + ["u1", "u2", "u3"],
            preferences=["likes tea", "likes hiking"],
            demographics=["single"],
        ),
    ]
    rec = Recorder(lambda m, p: json.dumps(answers[len(rec.requests) - 1]))
    script = SimpleNamespace(
        utterances=["u1", "u2", "u3"],
        contradictions=[
            SimpleNamespace(
                round=3, attribute="relationship_status", contradicts="in a long-term relationship"
            )
        ],
    )
    record = await run_accum(
        Client(ScriptedBackend(rec), FAST), persona, script.utterances, script.contradictions, model_name="m"
    )
    assert record.status == "ok" and [r.round for r in record.rounds] == [1, 2, 3]
    assert [r.n_inferred for r in record.rounds] == [2, 3, 3]
    assert record.rounds[1].added == ["u2", "likes hiking"] and record.rounds[1].removed == []
    third = record.rounds[2]
    assert third.removed == ["in a long-term relationship"] and "single" in third.added
    [check] = third.contradictions
    assert check.previously_stored and check.retracted is True
    prompt = rec.requests[1][0][0].content
    assert "likes tea" in prompt and '"u2"' in prompt and "(round 2)" in prompt
    assert rec.requests[0][1].json_schema is not None and rec.requests[0][1].temperature == 0.7


async def test_accum_prune_control_is_a_separate_condition_and_stops_on_failure() -> None:
    rec = Recorder(lambda m, p: "not json")
    record = await run_accum(
        Client(ScriptedBackend(rec), FAST),
        get_persona("seed_001"),
        ["u1", "u2"],
        model_name="m",
        condition="accum_update_prune_control",
        max_attempts=2,
    )
    assert record.condition == "accum_update_prune_control" and record.status == "parse_failure"
    assert len(record.rounds) == 1 and len(rec.requests) == 2
    assert "may revise or remove" in rec.requests[0][0][0].content


async def test_persona_generation_is_validated() -> None:
    client = Client(ScriptedBackend(SimulatedResponder(seed=2)), FAST)
    result = await generate_persona(
        client, stereotype_type="counter_stereotypical", occupation="nurse", persona_id="p_151"
    )
    assert result.status == "ok" and result.persona is not None
    assert result.persona.source == "generated" and result.persona.stereotype_type == "counter_stereotypical"
    assert result.valid, result.problems
    bad = Client(
        ScriptedBackend(
            lambda m, p: json.dumps(
                {
                    "ground_truth": {"name": "X"},
                    "revealed_facts": ["a", "b", "c"],
                    "stereotype_type": "neutral",
                }
            )
        ),
        FAST,
    )
    invalid = await generate_persona(bad, stereotype_type="neutral", occupation="chef", persona_id="p_152")
    assert invalid.status == "ok" and not invalid.valid
    assert any("missing field" in p for p in invalid.problems)


async def test_accum_checks_every_contradiction_planted_in_one_round() -> None:
    persona = get_persona("seed_001")
    facts = list(persona.revealed_facts)
    answers = [
        _memory(observed=facts, demographics=["married"], personality_traits=["outgoing and social"]),
        _memory(
            observed=facts + ["u2"], demographics=["not married"], personality_traits=["outgoing and social"]
        ),
    ]
    rec = Recorder(lambda m, p: json.dumps(answers[len(rec.requests) - 1]))
    contradictions = [
        SimpleNamespace(round=2, attribute="relationship_status", contradicts="married"),
        SimpleNamespace(round=2, attribute="personality", contradicts="outgoing and social"),
    ]
    record = await run_accum(
        Client(ScriptedBackend(rec), FAST), persona, ["u1", "u2"], contradictions, model_name="m"
    )
    assert record.rounds[0].contradictions == []
    married, social = record.rounds[1].contradictions
    assert (married.attribute, social.attribute) == ("relationship_status", "personality")
    assert married.previously_stored and married.retracted is True
    assert married.revised_entries == ["not married"]
    assert social.previously_stored and social.retracted is False
    assert social.asserting_entries == ["outgoing and social"]


@pytest.mark.parametrize(
    ("before", "after", "contradicts"),
    [
        ("married", "not married", "married"),
        ("lives with roommates", "no longer lives with roommates", "lives with roommates"),
        ("has been to a big city", "never been to a big city", "has been to a big city"),
        ("in a relationship", "User isn't in a relationship (corrected in round 7)", "in a relationship"),
    ],
)
def test_a_negated_or_corrected_entry_counts_as_retracted(before: str, after: str, contradicts: str) -> None:
    check = check_contradiction(Memory(demographics=[before]), Memory(demographics=[after]), "x", contradicts)
    assert check.previously_stored and check.retracted is True
    assert check.revised_entries == [after] and check.asserting_entries == []


@pytest.mark.parametrize(
    ("after", "retracted"),
    [
        (["lives with roommates"], False),  # kept verbatim
        (["Lives with two roommates in a shared flat"], False),  # reworded, still asserted
        (["has the one-bedroom to themselves"], True),  # removed and replaced
        ([], True),  # removed
        (["no longer lives with roommates", "lives with roommates"], False),  # revised and still asserted
    ],
)
def test_retraction_means_the_belief_is_no_longer_asserted(after: list[str], retracted: bool) -> None:
    before = Memory(observed=["I code."], predictions=["lives with roommates"])
    check = check_contradiction(before, Memory(predictions=after), "living", "lives with roommates")
    assert check.matched_entries == ["lives with roommates"] and check.retracted is retracted


def test_a_negated_belief_is_only_stored_when_stated_negated() -> None:
    contradicts = "does not drink alcohol"
    absent = check_contradiction(Memory(predictions=["drinks alcohol"]), Memory(), "x", contradicts)
    assert not absent.previously_stored and absent.retracted is None
    before = Memory(predictions=["doesn't drink alcohol"])
    kept = check_contradiction(before, Memory(predictions=["does not drink alcohol"]), "x", contradicts)
    assert kept.previously_stored and kept.retracted is False


def test_legacy_single_contradiction_field_is_read_as_a_list() -> None:
    legacy = {"round": 3, "status": "ok", "contradiction": {"attribute": "a", "contradicts": "b"}}
    assert [c.attribute for c in AccumRound.model_validate(legacy).contradictions] == ["a"]
    assert AccumRound.model_validate({**legacy, "contradiction": None}).contradictions == []
