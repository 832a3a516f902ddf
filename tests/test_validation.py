"""Human validation package: sample -> blind queue -> durable labels -> agreement (Appendix H)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mirage_bench import validation
from mirage_bench.instruments.launch import start_run
from mirage_bench.leaderboard.store import SubmissionStore
from mirage_bench.metrics.agreement import agreement as agreement_metric
from mirage_bench.types import Label


@pytest.fixture(scope="module")
def claims(tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("validation") / "run"
    run_dir, _ = start_run(model="scripted:simulate", judge="scripted:simulate", personas="6",
                           tasks="apartment", stages="task,judge", out=out, progress=False)
    return validation.claims_from_runs([run_dir])


def test_sample_queue_labels_and_agreement(claims, tmp_path: Path) -> None:
    store = SubmissionStore(tmp_path / "store")
    spec = validation.SampleSpec(per_class=3, min_models=1, min_tasks=1, min_personas=1, strict=False)
    items = validation.create_sample(claims, spec)
    assert items and [i.position for i in items] == list(range(len(items)))
    validation.save_sample(store, "s1", items)
    assert [i.item_id for i in validation.load_sample(store, "s1")] == [i.item_id for i in items]

    item, blind = validation.next_item(store, "s1", "ann1")
    assert item.item_id == items[0].item_id and blind.position == 1 and blind.labelled == 0
    assert not hasattr(blind, "judge_label") and item.model not in repr(blind)
    # label every item: the judge's label except on the first item, flipped to another class
    flipped = Label.FABRICATED if items[0].judge_label != Label.FABRICATED else Label.GROUNDED
    for n, it in enumerate(items):
        label = flipped if n == 0 else it.judge_label
        assert validation.record_label(store, "s1", " ann1 ", it.item_id, label) == n + 1
    assert validation.next_item(store, "s1", "ann1") == (None, None)
    assert validation.progress(store, "s1", "ann1") == (len(items), len(items))
    out = validation.agreement(store, "s1", "ann1")
    expected = agreement_metric([i.judge_label.value for i in items],
                                [flipped.value] + [i.judge_label.value for i in items[1:]])
    assert out == expected and out["disagreements"] == 1
    with pytest.raises(ValueError, match="not in sample"):
        validation.record_label(store, "s1", "ann1", "no-such-item", Label.GROUNDED)


def test_a_second_annotator_resumes_separately(claims, tmp_path: Path) -> None:
    store = SubmissionStore(tmp_path / "store")
    spec = validation.SampleSpec(per_class=2, min_models=1, min_tasks=1, min_personas=1, strict=False)
    items = validation.create_sample(claims, spec)
    validation.save_sample(store, "s2", items)
    validation.record_label(store, "s2", "a", items[0].item_id, items[0].judge_label)
    assert validation.next_item(store, "s2", "a")[0].item_id == items[1].item_id
    assert validation.next_item(store, "s2", "b")[0].item_id == items[0].item_id
