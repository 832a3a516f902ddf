"""The judged Accum retraction measure (issue 17): paraphrase cases, the next round, failures, and
the word-overlap fallback's documented behaviour on the same cases."""

from __future__ import annotations

import asyncio
import json

import pytest

from mirage_bench.backends.scripted import ScriptedBackend
from mirage_bench.client import Client, ClientConfig
from mirage_bench.instruments.accum import check_contradiction, run_accum
from mirage_bench.instruments.accum.scripted import PlannedMemoryModel, RoundPlan, RubricRetractionJudge
from mirage_bench.instruments.accum.scripts import get_accum_script
from mirage_bench.instruments.parsing import Memory
from mirage_bench.personas import get_persona
from mirage_bench.types import Message

FAST = ClientConfig(backoff_base_s=0.0, backoff_max_s=0.0)
PLANTED = 3  # the round whose utterance contradicts the inference stored in round 1

#: (id, contradicted inference, stored entry, entry after the planted round, entry after the next
#:  round or None = unchanged, the rubric's label of each changed entry, judged outcome,
#:  what the word-overlap fallback says (outcome)).
CASES = [
    ("qualified_still_asserts", "outgoing and social", "outgoing and social",
     "outgoing and social, but doesn't like big crowds", None, "asserts", "asserted", "revised"),
    ("hedged_still_asserts", "in a relationship", "in a relationship",
     "in a relationship, though the partner hasn't been named", None, "asserts", "asserted", "revised"),
    ("less_social_revises", "outgoing and social", "outgoing and social",
     "less social than assumed: prefers one-on-one", None, "revises", "revised", "retracted"),
    ("divorced_revises", "married", "married", "divorced; was married before", None, "revises",
     "revised", "asserted"),
    ("paper_big_city_revises", "lives in a big city", "lives in a big city",
     "lives in a small town; visited a big city for the first time", None, "revises", "revised",
     "asserted"),
]


def _run(contradicts: str, plan: dict[int, RoundPlan], labels: dict[str, str], *, judge: bool = True,
         rounds: int = 5, judge_responder=None):  # noqa: ANN001, ANN202
    persona = get_persona("seed_001")
    utterances = [f"utterance {i}" for i in range(1, rounds + 1)]
    contradictions = [type("C", (), {"round": PLANTED, "attribute": "x", "contradicts": contradicts})()]
    model = Client(ScriptedBackend(PlannedMemoryModel(plan)), FAST)
    rubric = RubricRetractionJudge({contradicts: labels})
    judge_client = Client(ScriptedBackend(judge_responder or rubric, name="scripted:retraction"), FAST)
    record = asyncio.run(run_accum(model, persona, utterances, contradictions, model_name="m",
                                   judge_client=judge_client if judge else None, judge_name="rubric"))
    [check] = record.rounds[PLANTED - 1].contradictions
    return record, check, rubric


def _plan(stored: str, field: str, after: str, nxt: str | None) -> dict[int, RoundPlan]:
    plan = {1: RoundPlan(add={field: [stored]}), PLANTED: RoundPlan(replace={stored: after})}
    if nxt is not None:
        plan[PLANTED + 1] = RoundPlan(replace={after: nxt})
    return plan


@pytest.mark.parametrize(("case", "contradicts", "stored", "after", "nxt", "label", "judged", "fallback"),
                         CASES, ids=[c[0] for c in CASES])
def test_paraphrase_cases_judged_and_fallback(case, contradicts, stored, after, nxt, label, judged,
                                              fallback) -> None:  # noqa: ANN001
    plan = _plan(stored, "personality_traits", after, nxt)
    labels = {stored: "asserts", after: label}
    _, check, rubric = _run(contradicts, plan, labels)
    assert rubric.calls == 1
    assert check.method == "judge" and check.judge is not None and check.judge.status == "ok"
    assert check.previously_stored is True
    assert check.outcome == judged
    assert check.retracted is (judged != "asserted")
    assert check.checked_rounds == [PLANTED, PLANTED + 1]
    assert check.judge.after_round == {"asserts": "asserted", "revises": "revised"}[label]
    # The offline fallback on the same memories (documented, often wrong on paraphrase):
    assert check.fallback_previously_stored is True
    assert check.outcome != fallback or judged == fallback
    _, offline, _ = _run(contradicts, plan, labels, judge=False)
    assert offline.method == "word_overlap_fallback" and offline.judge is None
    assert offline.outcome == fallback
    assert offline.retracted is (fallback != "asserted")
    assert (offline.previously_stored, offline.retracted) == (
        check.fallback_previously_stored, check.fallback_retracted)


def test_a_retraction_one_round_late_counts_for_both() -> None:
    plan = {1: RoundPlan(add={"demographics": ["married"]}), PLANTED + 1: RoundPlan(remove=["married"])}
    _, check, _ = _run("married", plan, {"married": "asserts"})
    assert check.judge.after_round == "asserted" and check.judge.after_next_round == "retracted"
    assert (check.retracted, check.outcome, check.retracted_round) == (True, "retracted", PLANTED + 1)
    _, offline, _ = _run("married", plan, {}, judge=False)
    assert (offline.retracted, offline.retracted_round) == (True, PLANTED + 1)


def test_a_retraction_undone_in_the_next_round_is_not_one() -> None:
    plan = {1: RoundPlan(add={"demographics": ["married"]}), PLANTED: RoundPlan(remove=["married"]),
            PLANTED + 1: RoundPlan(add={"demographics": ["married"]})}
    _, check, _ = _run("married", plan, {"married": "asserts"})
    assert (check.retracted, check.outcome, check.retracted_round) == (False, "asserted", None)


def test_the_last_round_is_judged_without_a_next_memory() -> None:
    plan = {1: RoundPlan(add={"demographics": ["married"]}), PLANTED: RoundPlan(remove=["married"])}
    record, check, _ = _run("married", plan, {"married": "asserts"}, rounds=PLANTED)
    assert check.checked_rounds == [PLANTED] and check.judge.after_next_round is None
    assert check.outcome == "retracted" and check.retracted_round == PLANTED


def test_nothing_stored_is_outside_the_denominator() -> None:
    _, check, _ = _run("married", {}, {"married": "asserts"})
    assert (check.previously_stored, check.retracted, check.outcome) == (False, None, "not_stored")


def test_a_judge_answer_that_never_parses_is_a_counted_failure_not_a_score() -> None:
    calls = []

    def junk(messages: list[Message], params) -> str:  # noqa: ANN001
        calls.append(params)
        return "I think it was retracted."

    plan = {1: RoundPlan(add={"demographics": ["married"]})}
    _, check, _ = _run("married", plan, {}, judge_responder=junk)
    assert len(calls) == 3  # retried like every judge call
    assert calls[0].json_schema["title"] == "RetractionAnswer" and calls[0].temperature == 0.0
    assert check.method == "judge" and check.judge.status == "parse_failure"
    assert check.retracted is None and check.previously_stored is False and check.outcome is None
    assert check.fallback_previously_stored is True  # the heuristic's view is still on record


def test_judge_calls_go_through_the_client_cache(tmp_path) -> None:
    from mirage_bench.client import ResponseCache

    plan = {1: RoundPlan(add={"demographics": ["married"]})}
    rubric = RubricRetractionJudge({"married": {"married": "asserts"}})
    persona = get_persona("seed_001")
    contradictions = [type("C", (), {"round": PLANTED, "attribute": "x", "contradicts": "married"})()]
    for _ in range(2):
        judge = Client(ScriptedBackend(rubric, name="scripted:retraction"), FAST,
                       cache=ResponseCache(tmp_path / "cache.sqlite"))
        model = Client(ScriptedBackend(PlannedMemoryModel(plan)), FAST)
        record = asyncio.run(run_accum(model, persona, ["a", "b", "c", "d"], contradictions, model_name="m",
                                       judge_client=judge, judge_name="rubric"))
        asyncio.run(judge.aclose())
    assert rubric.calls == 1
    assert record.rounds[PLANTED - 1].contradictions[0].outcome == "asserted"


def test_end_to_end_on_a_shipped_script_with_the_retraction_rate_and_its_denominator() -> None:
    """seed_001's script: round 6 contradicts 'outgoing and social', round 7 'in a relationship'."""
    from mirage_bench.instruments.accum.summary import accum_summary
    from mirage_bench.metrics.retraction import retraction_breakdown

    script = get_accum_script("seed_001")
    assert [(c.round, c.contradicts) for c in script.contradictions] == [
        (6, "outgoing and social"), (7, "in a relationship")]
    plan = {
        2: RoundPlan(add={"personality_traits": ["outgoing and social"],
                          "demographics": ["in a relationship"]}),
        6: RoundPlan(replace={"outgoing and social": "outgoing and social, but doesn't like big crowds"}),
        8: RoundPlan(remove=["in a relationship"]),  # one round after the planted round 7
    }
    labels = {
        "outgoing and social": {"outgoing and social": "asserts",
                                "outgoing and social, but doesn't like big crowds": "asserts"},
        "in a relationship": {"in a relationship": "asserts"},
    }
    rubric = RubricRetractionJudge(labels)
    records = []
    for judged in (True, False):
        model = Client(ScriptedBackend(PlannedMemoryModel(plan)), FAST)
        judge = Client(ScriptedBackend(rubric, name="scripted:retraction"), FAST) if judged else None
        records.append(asyncio.run(run_accum(model, get_persona("seed_001"), script.utterances,
                                             script.contradictions, model_name="m", judge_client=judge,
                                             judge_name="rubric")))
    judged_rec, offline_rec = records
    social, = judged_rec.rounds[5].contradictions
    relationship, = judged_rec.rounds[6].contradictions
    assert (social.outcome, relationship.outcome) == ("asserted", "retracted")
    assert relationship.retracted_round == 8
    summary = accum_summary([judged_rec])
    assert (summary["retractions"], summary["contradictions_with_stored_inference"]) == (1, 2)
    assert summary["retraction_rate"] == 0.5
    table = retraction_breakdown([json.loads(judged_rec.model_dump_json())]).iloc[0]
    assert table.method == "judge" and table.n_stored == 2 and table.n_retracted == 1
    assert table.n_late == 1 and table.n_judge_failed == 0 and table.n_still_asserted == 1
    # the fallback misreads the qualified entry as a retraction: 2/2
    offline = retraction_breakdown([offline_rec.model_dump(mode="json")]).iloc[0]
    assert offline.method == "word_overlap_fallback"
    assert (offline.n_retracted, offline.n_stored) == (2, 2)


def test_check_contradiction_documents_the_paper_example() -> None:
    """GPT-5.5 kept 'urban professional lifestyle' though round 7 says a big-city visit was a first."""
    before = Memory(predictions=["urban professional lifestyle"])
    kept = check_contradiction(before, before, "x", "urban professional lifestyle", round_number=7)
    assert kept.outcome == "asserted" and kept.retracted is False


def test_a_run_with_a_judge_decides_retraction_by_the_judge(tmp_path) -> None:
    """The pipeline hands its judge client to Accum: every check of a run is judged and counted."""
    from mirage_bench.instruments.launch import start_run
    from mirage_bench.runs import RunDir

    run_dir, summary = start_run(model="scripted", judge="scripted", personas="seed_001", tasks="apartment",
                                 stages="accum", out=tmp_path / "r")
    checks = [c for a in RunDir(run_dir).read("accum") for r in a.rounds for c in r.contradictions]
    assert len(checks) == 4  # 2 planted contradictions x 2 conditions
    assert all(c.method == "judge" and c.judge is not None and c.judge.status == "ok" for c in checks)
    assert sorted(tuple(c.checked_rounds) for c in checks) == [(6, 7), (6, 7), (7, 8), (7, 8)]
    for a in summary["accum"].values():
        assert a["retraction_method"] == "judge" and a["retraction_judge_failures"] == 0
