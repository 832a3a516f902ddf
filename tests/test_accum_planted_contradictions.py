"""Every planted Accum contradiction, read with a domain expert's eye (issue 17).

A planted contradiction must contradict an inference that is *false* and *not licensed* by what the
user said before: otherwise keeping a true entry counts as failing to retract (seed_006 round 6,
"gentle, calm music", was supported by the Chopin nocturne of round 5), or a true entry counts as
asserting the contradicted text (seed_002's "childless couple" matched any "married couple" entry).
"""

from __future__ import annotations

import pytest

from mirage_bench.instruments.accum import asserts_belief, check_contradiction
from mirage_bench.instruments.accum.scripts import load_accum_scripts
from mirage_bench.instruments.parsing import Memory
from mirage_bench.personas import get_persona

CASES = [(s, c) for s in load_accum_scripts() for c in s.contradictions]


def test_there_are_46_planted_contradictions() -> None:
    assert len(CASES) == 46


@pytest.mark.parametrize(("script", "planted"), CASES, ids=[f"{s.persona_id}-r{c.round}" for s, c in CASES])
def test_no_true_statement_asserts_the_contradicted_inference(script, planted) -> None:  # noqa: ANN001
    """Nothing the user said before the planted round (or in the next round), nor any ground-truth
    value, states the contradicted inference, so a model that stores only true things never counts
    as failing to retract."""
    persona = get_persona(script.persona_id)
    true = [
        *persona.revealed_facts,
        *script.utterances[: planted.round - 1],
        *script.utterances[planted.round : planted.round + 1],
        *(str(v) for v in persona.ground_truth.values()),
    ]
    assert [t for t in true if asserts_belief(t, planted.contradicts)] == []


def test_seed_002_a_married_couple_entry_does_not_assert_the_contradicted_inference() -> None:
    (planted,) = [c for s, c in CASES if s.persona_id == "seed_002"]
    assert planted.contradicts == "has no children"
    before = Memory(observed=["My husband surprised me with breakfast in bed"],
                    demographics=["married couple", "married couple with a dog"])
    check = check_contradiction(before, before, planted.attribute, planted.contradicts)
    assert check.previously_stored is False  # a true entry is not the contradicted inference
    wrong = Memory(demographics=["has no children"])
    kept = check_contradiction(wrong, wrong, planted.attribute, planted.contradicts)
    assert kept.previously_stored and kept.retracted is False


def test_seed_006_round_6_is_not_supported_by_an_earlier_round() -> None:
    script = next(s for s, _ in CASES if s.persona_id == "seed_006")
    planted = next(c for c in script.contradictions if c.round == 6)
    assert planted.contradicts == "only listens to gentle, calm music"
    before_and_next = script.utterances[:5] + script.utterances[6:7]
    music = ("piano", "chopin", "nocturne", "classical", "calm", "gentle", "music")
    assert not [u for u in before_and_next if any(w in u.casefold() for w in music)]
    assert "Death metal" in script.utterances[5]
    # the classical-piano side of the ground truth is still in the script, after the checked rounds
    assert "Chopin" in script.utterances[7]
    # keeping a true "plays classical piano" entry is not a failure to retract
    true_entry = Memory(preferences=["plays classical piano to wind down"])
    check = check_contradiction(true_entry, true_entry, "media_taste", planted.contradicts)
    assert check.previously_stored is False
