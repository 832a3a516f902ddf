"""Judge–human agreement (reproducing Appendix H) and the H.1 stratified validation sample."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from mirage_bench.metrics.agreement import agreement, labels_from_confusion, stratified_validation_sample
from mirage_bench.metrics.labels import LABEL_NAMES
from mirage_bench.reported import load_reported, reported_statistic


def h3_matrix() -> np.ndarray:
    h3 = load_reported("h3")
    return h3[h3.row_type == "label"].set_index("human_label").loc[list(LABEL_NAMES)].filter(
        like="judge_").to_numpy()


def printed(value: float, reported: float, decimals: int = 3) -> bool:
    """``value`` rounds (half up) to the printed ``reported`` figure."""
    return abs(value - reported) <= 0.5 * 10**-decimals + 1e-12


@pytest.fixture(scope="module")
def h3_agreement() -> dict:
    predictions, references = labels_from_confusion(h3_matrix())
    return agreement(predictions, references, n_resamples=2000, seed=0)


def test_reproduces_table11(h3_agreement: dict) -> None:
    out = h3_agreement
    assert out["n"] == 400
    for key, stat in (("accuracy", "agreement_accuracy"), ("kappa", "agreement_kappa"),
                      ("macro_f1", "agreement_macro_f1"), ("binary_accuracy", "agreement_binary_accuracy"),
                      ("binary_kappa", "agreement_binary_kappa")):
        assert printed(out[key], reported_statistic(stat)), key
    assert out["accuracy"] == 359 / 400


def test_reproduces_h2_per_class_f1_and_h4(h3_agreement: dict) -> None:
    out = h3_agreement
    for label, stat in zip(LABEL_NAMES, ("grounded", "reasonable", "stereotype", "fabricated"), strict=True):
        assert printed(out["per_class_f1"][label], reported_statistic(f"agreement_f1_{stat}")), label
    assert printed(out["per_class_recall"]["FABRICATED"], reported_statistic("agreement_recall_fabricated"))
    assert out["disagreements"] == reported_statistic("agreement_disagreements") == 41
    assert out["disagreements_by_distance"] == {1: 29, 2: 12, 3: 0}
    assert out["confusion_matrix"] == h3_matrix().tolist()
    matrix = np.array(out["confusion_matrix"])
    s_vs_f = reported_statistic("agreement_stereotype_vs_fabricated_disagreements")
    assert matrix[2, 3] + matrix[3, 2] == s_vs_f


def test_kappa_bootstrap_ci(h3_agreement: dict) -> None:
    low, high = h3_agreement["kappa_ci"]
    assert low < h3_agreement["kappa"] < high and 0.78 < low and high < 0.95
    blow, bhigh = h3_agreement["binary_kappa_ci"]
    assert blow < h3_agreement["binary_kappa"] < bhigh


def test_agreement_errors_and_degenerate_input() -> None:
    with pytest.raises(ValueError, match="2 predictions but 1 references"):
        agreement(["G", "F"], ["G"])
    with pytest.raises(ValueError, match="no items"):
        agreement([], [])
    perfect = agreement(["G", "R", "S", "F"], ["G", "R", "S", "F"])
    assert perfect["kappa"] == 1.0 and perfect["disagreements"] == 0
    with pytest.raises(ValueError, match="square"):
        labels_from_confusion([[1, 2, 3]])


def synthetic_judged_claims(n_models: int = 12, n_personas: int = 60, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    n = n_models * n_personas * 6 * 4
    return pd.DataFrame({
        "model": rng.integers(0, n_models, n).astype(str),
        "judge": "j",
        "persona_id": np.char.add("p", rng.integers(0, n_personas, n).astype(str)),
        "task_id": np.char.add("t", rng.integers(0, 6, n).astype(str)),
        "claim_index": np.arange(n),
        "label": np.array(LABEL_NAMES)[rng.choice(4, n, p=[0.26, 0.32, 0.11, 0.31])],
    })


def test_stratified_sample_meets_h1() -> None:
    claims = synthetic_judged_claims()
    sample = stratified_validation_sample(claims)
    assert len(sample) == 400 and list(sample.columns) == list(claims.columns)
    assert sample.label.value_counts().to_dict() == dict.fromkeys(LABEL_NAMES, 100)
    assert not sample.claim_index.duplicated().any()
    for _, part in sample.groupby("label"):
        assert part.model.nunique() >= 8 and part.task_id.nunique() >= 5 and part.persona_id.nunique() >= 20
    # shuffled: the class is not inferable from position (no long runs of one class)
    runs = (sample.label != sample.label.shift()).cumsum().value_counts().max()
    assert runs < 10
    again = stratified_validation_sample(claims)
    assert again.claim_index.tolist() == sample.claim_index.tolist()  # seed 42 is deterministic
    other = stratified_validation_sample(claims, seed=7)
    assert other.claim_index.tolist() != sample.claim_index.tolist()


def test_stratified_sample_constructive_fallback() -> None:
    # Fabricated claims: 3000 from one model/task/persona, 30 spread out -> a random draw misses diversity.
    claims = synthetic_judged_claims(seed=1)
    claims = claims[claims.label != "FABRICATED"]
    rare = pd.DataFrame({"model": [f"m{i % 9}" for i in range(30)], "judge": "j",
                         "persona_id": [f"q{i}" for i in range(30)],
                         "task_id": [f"t{i % 6}" for i in range(30)],
                         "claim_index": np.arange(10**6, 10**6 + 30), "label": "FABRICATED"})
    bulk = pd.DataFrame({"model": "m0", "judge": "j", "persona_id": "q0", "task_id": "t0",
                         "claim_index": np.arange(2 * 10**6, 2 * 10**6 + 3000), "label": "FABRICATED"})
    sample = stratified_validation_sample(pd.concat([claims, rare, bulk], ignore_index=True))
    fab = sample[sample.label == "FABRICATED"]
    assert len(fab) == 100
    assert fab.model.nunique() >= 8 and fab.task_id.nunique() >= 5 and fab.persona_id.nunique() >= 20


def test_stratified_sample_clear_errors_and_lenient_mode() -> None:
    claims = synthetic_judged_claims(n_models=5)
    with pytest.raises(ValueError, match=r"judge class GROUNDED: only 5 models \(< 8\)"):
        stratified_validation_sample(claims)
    few = synthetic_judged_claims()
    stereo = few.label == "INFERRED_STEREOTYPE"
    few = pd.concat([few[~stereo], few[stereo].head(40)])
    with pytest.raises(ValueError, match="INFERRED_STEREOTYPE: only 40 claims"):
        stratified_validation_sample(few)
    lenient = stratified_validation_sample(few, strict=False)
    assert (lenient.label == "INFERRED_STEREOTYPE").sum() == 40 and len(lenient) == 340
    assert any("INFERRED_STEREOTYPE" in s for s in lenient.attrs["shortfalls"])
    with pytest.raises(ValueError, match="lacks column"):
        stratified_validation_sample(claims.drop(columns="task_id"))


def test_stratified_sample_constraints_overlap_within_one_claim() -> None:
    """8 models + 5 tasks + 20 personas fit in 25 claims: one claim adds a model, task and persona."""
    claims = synthetic_judged_claims()
    sample = stratified_validation_sample(claims, per_class=25)
    assert len(sample) == 100
    for _, part in sample.groupby("label"):
        assert part.model.nunique() >= 8 and part.task_id.nunique() >= 5 and part.persona_id.nunique() >= 20
    with pytest.raises(ValueError, match="per_class is too small"):
        stratified_validation_sample(claims, per_class=19)
