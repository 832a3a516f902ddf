"""The three ``evaluate`` modules load offline from their folders and reproduce the papers' numbers."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from mirage_bench.metrics.agreement import labels_from_confusion
from mirage_bench.metrics.evaluate_common import CITATIONS
from mirage_bench.metrics.labels import LABEL_NAMES
from mirage_bench.reported import load_reported, reported_statistic
from tests.test_metrics_oi import table1_claims

METRICS = Path(__file__).resolve().parent.parent / "mirage_bench" / "metrics"
CARD_SECTIONS = ("Description", "How to use", "Inputs", "Output values", "Examples", "Limitations",
                 "Citation")


@pytest.fixture(scope="module")
def evaluate_module():
    return pytest.importorskip("evaluate")


@pytest.mark.parametrize("name", ["over_inference", "judge_agreement", "reward_accuracy"])
def test_module_folder_and_card(name: str) -> None:
    folder = METRICS / name
    assert (folder / f"{name}.py").is_file()
    card = (folder / "README.md").read_text(encoding="utf-8")
    for section in CARD_SECTIONS:
        assert f"## {section}" in card, (name, section)
    # evaluate's requirement scanner wants one module per import line
    source = (folder / f"{name}.py").read_text(encoding="utf-8")
    for line in source.splitlines():
        if line.startswith("import "):
            assert "," not in line, line
    # evaluate copies a script (and its relative imports) into its module cache: shared code must
    # come by absolute import from the installed package (checked from a non-editable install too)
    imports = [node for node in ast.walk(ast.parse(source)) if isinstance(node, ast.ImportFrom)]
    assert all(node.level == 0 for node in imports)
    assert "mirage_bench.metrics.evaluate_common" in {node.module for node in imports}


@pytest.mark.parametrize("name", ["over_inference", "judge_agreement", "reward_accuracy"])
def test_module_folder_is_an_evaluate_space(name: str) -> None:
    """Each folder can be pushed as an evaluate Space: Space YAML, app.py, requirements.txt."""
    from huggingface_hub import SpaceCard

    folder = METRICS / name
    data = SpaceCard((folder / "README.md").read_text(encoding="utf-8")).data.to_dict()
    assert data["sdk"] == "gradio" and data["app_file"] == "app.py" and data["sdk_version"]
    assert {"evaluate", "metric"} <= set(data["tags"])
    app = (folder / "app.py").read_text(encoding="utf-8")
    assert "launch_gradio_widget" in app and 'if __name__ == "__main__":' in app  # nothing runs on import
    requirements = (folder / "requirements.txt").read_text(encoding="utf-8").splitlines()
    assert "mirage-bench" in requirements and any(r.startswith("evaluate") for r in requirements)


def test_documented_load_returns_the_module(evaluate_module) -> None:
    import mirage_bench.metrics

    metric = mirage_bench.metrics.load("over_inference")
    assert isinstance(metric, evaluate_module.EvaluationModule)
    assert mirage_bench.metrics.module_path("over_inference") == METRICS / "over_inference"
    with pytest.raises(ValueError, match="unknown MirageBench metric"):
        mirage_bench.metrics.load("accuracy")


def test_label_metrics_accept_classlabel_ids(evaluate_module) -> None:
    """A ClassLabel column (ids in G, R, S, F order) gives the same numbers as its strings."""
    import mirage_bench.metrics

    names = ["GROUNDED", "FABRICATED", "INFERRED_STEREOTYPE", "INFERRED_REASONABLE", "FABRICATED"]
    ids = [LABEL_NAMES.index(n) for n in names]
    oi = mirage_bench.metrics.load("over_inference")
    assert oi.compute(predictions=ids) == oi.compute(predictions=names)
    agreement = mirage_bench.metrics.load("judge_agreement")
    human = ["GROUNDED", "FABRICATED", "FABRICATED", "INFERRED_REASONABLE", "GROUNDED"]
    by_id = agreement.compute(predictions=ids, references=[LABEL_NAMES.index(n) for n in human])
    assert by_id["accuracy"] == agreement.compute(predictions=names, references=human)["accuracy"] == 0.6


def test_add_batch_takes_the_breakdown_columns(evaluate_module) -> None:
    import mirage_bench.metrics

    oi = mirage_bench.metrics.load("over_inference")
    labels = ["GROUNDED", "FABRICATED", "FABRICATED", "INFERRED_STEREOTYPE", "GROUNDED", "GROUNDED"]
    models = ["a", "a", "b", "b", "b", "a"]
    whole = oi.compute(predictions=labels, models=models)
    for start in (0, 2, 4):
        oi.add_batch(predictions=labels[start:start + 2], models=models[start:start + 2])
    assert oi.compute() == whole
    for label, model in zip(labels, models, strict=True):
        oi.add(prediction=label, model=model)
    assert oi.compute() == whole
    oi.add_batch(predictions=labels[:2], models=models[:2])
    with pytest.raises(ValueError, match="same per-example columns"):
        oi.add_batch(predictions=labels[2:4])
    with pytest.raises(ValueError, match="differ from the"):
        mirage_bench.metrics.load("over_inference").add_batch(predictions=labels, models=models[:2])
    reward = mirage_bench.metrics.load("reward_accuracy")
    reward.add_batch(predictions=[0.9, 0.2], references=[1, 0], generators=["g", "h"])
    assert set(reward.compute()["per_generator"]) == {"g", "h"}


@pytest.mark.parametrize("name", ["over_inference", "judge_agreement", "reward_accuracy"])
def test_module_info_carries_the_shared_citation(name: str, evaluate_module) -> None:
    metric = evaluate_module.load(str(METRICS / name))
    assert metric.citation == CITATIONS[name]
    assert metric.description.strip() and metric.inputs_description.strip()


def test_over_inference_module_reproduces_table1(evaluate_module) -> None:
    metric = evaluate_module.load(str(METRICS / "over_inference"))
    codes, models = table1_claims()
    out = metric.compute(predictions=np.asarray(LABEL_NAMES)[codes].tolist(), models=models.tolist())
    for key in ("oi_rate", "grounded_rate", "reasonable_rate", "stereotype_rate", "fabricated_rate",
                "n_claims"):
        assert key in out
    assert out["n_claims"] == 143_616
    assert round(100 * out["macro_oi_rate"], 1) == reported_statistic("macro_oi_pct")
    assert round(100 * out["micro_oi_rate"], 1) == reported_statistic("micro_oi_pct")
    t1 = load_reported("table1")
    assert set(out["per_model"]) == set(t1[t1.row_type == "model"].model)


def test_over_inference_module_breakdowns_and_ci(evaluate_module) -> None:
    metric = evaluate_module.load(str(METRICS / "over_inference"))
    out = metric.compute(predictions=["G", "F", "S", "R", "F", "G"], models=["a", "a", "a", "b", "b", "b"],
                         tasks=["t1", "t2", "t1", "t2", "t1", "t2"],
                         groups=["stereotypical", "stereotypical", "counter_stereotypical"] * 2,
                         records=["r1", "r1", "r2", "r1", "r2", "r2"], n_resamples=500)
    assert out["per_task"]["t1"]["oi_rate"] == 2 / 3
    assert out["stereotype_gap"] == pytest.approx(0.5 - 0.5)
    assert out["oi_ci"][0] <= out["oi_rate"] <= out["oi_ci"][1]
    assert "oi_ci" in out["per_model"]["a"]
    with pytest.raises(ValueError, match="unknown label"):
        metric.compute(predictions=["GROUNDED", "MADE_UP"])


def test_judge_agreement_module_reproduces_appendix_h(evaluate_module) -> None:
    metric = evaluate_module.load(str(METRICS / "judge_agreement"))
    h3 = load_reported("h3")
    matrix = h3[h3.row_type == "label"].filter(like="judge_").to_numpy()
    predictions, references = labels_from_confusion(matrix)
    out = metric.compute(predictions=[LABEL_NAMES[i] for i in predictions],
                         references=[LABEL_NAMES[i] for i in references])
    tol = 0.0005 + 1e-12  # rounds (half up) to the printed three decimals; accuracy is 359/400 = 0.8975
    assert abs(out["accuracy"] - 0.898) <= tol and abs(out["kappa"] - 0.863) <= tol
    assert abs(out["macro_f1"] - 0.896) <= tol
    assert abs(out["binary_accuracy"] - 0.950) <= tol and abs(out["binary_kappa"] - 0.900) <= tol
    assert [round(out["per_class_f1"][label], 3) for label in LABEL_NAMES] == [0.947, 0.863, 0.876, 0.897]
    assert out["confusion_matrix"] == matrix.tolist()
    assert out["disagreements_by_distance"] == {1: 29, 2: 12, 3: 0}


def test_reward_accuracy_module(evaluate_module) -> None:
    metric = evaluate_module.load(str(METRICS / "reward_accuracy"))
    rng = np.random.default_rng(0)
    references = rng.integers(0, 2, 200)
    predictions = np.clip(0.5 + (references - 0.5) * rng.uniform(-0.2, 0.8, 200), 0, 1)
    out = metric.compute(predictions=predictions.tolist(), references=references.tolist(),
                         generators=["g1", "g2"] * 100, n_resamples=500)
    # independent arithmetic on the same inputs (no ties: predictions are never exactly 0.5)
    assert not (predictions == 0.5).any()
    picks = predictions > 0.5
    assert out["accuracy"] == pytest.approx(float((picks == references).mean()))
    assert out["memory_selection_rate"] == pytest.approx(float(picks.mean()))
    assert out["human_memory_rate"] == pytest.approx(float(references.mean()))
    assert out["majority_baseline"] == pytest.approx(max(references.mean(), 1 - references.mean()))
    assert out["per_generator"]["g2"]["accuracy"] == pytest.approx(float((picks == references)[1::2].mean()))
    assert set(out["selective_accuracy"]) == {0.25, 0.5, 0.75, 1.0}
    assert out["selective_accuracy"][0.25] >= out["selective_accuracy"][1.0]
    assert out["selective_accuracy"][1.0] == out["accuracy"]
    assert set(out["per_generator"]) == {"g1", "g2"}
    margin = metric.compute(predictions=[1.5, -2.0], references=[1, 1], scale="margin")
    assert margin["accuracy"] == 0.5
