"""Judge–human agreement (Appendix H) and the stratified validation sample of H.1.

Agreement statistics use scikit-learn (``accuracy_score``, ``cohen_kappa_score``, ``f1_score``,
``precision_recall_fscore_support``, ``confusion_matrix``) with the human labels as the reference
and the judge's as the prediction. The binary collapse maps Stereotype and Fabricated to
"over-inference" and Grounded and Reasonable to "acceptable". The disagreement structure counts
disagreements by ordinal distance on G → R → S → F (1 = adjacent classes, 2, 3). The paper gives no
CI for κ; :func:`agreement` adds a percentile bootstrap CI over items (vectorised: one bincount of
16 cell codes per resample).

>>> predictions, references = labels_from_confusion([[99, 7, 3, 0], [1, 79, 3, 0], [0, 5, 85, 4],
...                                                  [0, 9, 9, 96]])
>>> out = agreement(predictions, references)
>>> out["accuracy"], round(out["kappa"], 3), out["binary_accuracy"], round(out["binary_kappa"], 3)
(0.8975, 0.863, 0.95, 0.9)
>>> out["disagreements_by_distance"]
{1: 29, 2: 12, 3: 0}
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from sklearn.metrics import (
    accuracy_score,
    cohen_kappa_score,
    confusion_matrix,
    f1_score,
    precision_recall_fscore_support,
)

from mirage_bench.metrics.bootstrap import as_generator, index_chunks, percentile_ci
from mirage_bench.metrics.labels import LABEL_NAMES, N_CLASSES, OI_CODES, encode_labels

ArrayLike = Sequence[Any] | np.ndarray | pd.Series
_CODES = list(range(N_CLASSES))


def labels_from_confusion(matrix: Sequence[Sequence[int]] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Item-level ``(predictions, references)`` codes reproducing a confusion matrix.

    ``matrix[i][j]`` counts items whose reference (human) label is class i and prediction (judge)
    label class j, classes in G, R, S, F order (the layout of H.3).

    >>> labels_from_confusion([[1, 2], [0, 1]])
    (array([0, 1, 1, 1]), array([0, 0, 0, 1]))
    """
    counts = np.asarray(matrix, dtype=np.int64)
    if counts.ndim != 2 or counts.shape[0] != counts.shape[1] or (counts < 0).any():
        raise ValueError("a confusion matrix must be square with non-negative counts")
    k = counts.shape[0]
    cells = np.repeat(np.arange(k * k), counts.ravel())
    return cells % k, cells // k


def _kappa_from_counts(counts: np.ndarray) -> np.ndarray:
    """Cohen's κ of confusion matrices, shape ``(..., k, k)``."""
    counts = counts.astype(float)
    n = counts.sum(axis=(-2, -1))
    observed = np.trace(counts, axis1=-2, axis2=-1) / n
    expected = (counts.sum(axis=-1) * counts.sum(axis=-2)).sum(axis=-1) / n**2
    with np.errstate(invalid="ignore", divide="ignore"):
        return (observed - expected) / (1 - expected)


def _binary(codes: np.ndarray) -> np.ndarray:
    return (codes >= OI_CODES[0]).astype(np.int8)


def agreement(
    predictions: ArrayLike,
    references: ArrayLike,
    *,
    n_resamples: int = 0,
    confidence: float = 0.95,
    seed: int | np.random.Generator | None = 0,
) -> dict[str, Any]:
    """Four-class and binary agreement of judge labels (``predictions``) with human labels.

    Returns ``n``, ``accuracy``, ``kappa``, ``macro_f1`` (mean F1 over the classes present in either
    labelling, listed in ``macro_f1_classes``: sklearn's default, so that a subset lacking a class
    is not scored 0 for it), ``per_class_f1``, ``per_class_recall`` and ``per_class_precision``
    (dicts by label, NaN for a class absent from both labellings), ``binary_accuracy``, ``binary_kappa``,
    ``confusion_matrix`` (rows = references, columns = predictions, G, R, S, F order),
    ``disagreements``, ``disagreements_by_distance`` ({1: n, 2: n, 3: n}); with ``n_resamples`` > 0
    also ``kappa_ci`` and ``binary_kappa_ci`` (percentile bootstrap over items).
    """
    pred, ref = encode_labels(predictions), encode_labels(references)
    if pred.shape != ref.shape:
        raise ValueError(f"{len(pred)} predictions but {len(ref)} references")
    if len(pred) == 0:
        raise ValueError("no items: agreement needs at least one labelled pair")
    matrix = confusion_matrix(ref, pred, labels=_CODES)
    precision, recall, f1, _ = precision_recall_fscore_support(ref, pred, labels=_CODES, zero_division=0.0)
    # classes that occur in either labelling (sklearn's default); an absent class has no F1
    present = np.union1d(ref, pred).astype(int).tolist()
    absent = [c for c in _CODES if c not in present]
    precision, recall, f1 = (np.where(np.isin(_CODES, absent), np.nan, v) for v in (precision, recall, f1))
    distance = np.bincount(np.abs(pred.astype(int) - ref.astype(int)), minlength=N_CLASSES)
    out: dict[str, Any] = {
        "n": int(len(pred)),
        "accuracy": float(accuracy_score(ref, pred)),
        "kappa": float(cohen_kappa_score(ref, pred, labels=_CODES)),
        "macro_f1": float(f1_score(ref, pred, labels=present, average="macro", zero_division=0.0)),
        "macro_f1_classes": [LABEL_NAMES[c] for c in present],
        "per_class_f1": dict(zip(LABEL_NAMES, map(float, f1), strict=True)),
        "per_class_recall": dict(zip(LABEL_NAMES, map(float, recall), strict=True)),
        "per_class_precision": dict(zip(LABEL_NAMES, map(float, precision), strict=True)),
        "binary_accuracy": float(accuracy_score(_binary(ref), _binary(pred))),
        "binary_kappa": float(cohen_kappa_score(_binary(ref), _binary(pred), labels=[0, 1])),
        "confusion_matrix": matrix.tolist(),
        "disagreements": int(distance[1:].sum()),
        "disagreements_by_distance": {d: int(distance[d]) for d in range(1, N_CLASSES)},
    }
    if n_resamples > 0:
        rng = as_generator(seed)
        cells = (ref.astype(np.int64) * N_CLASSES + pred).astype(np.int64)
        kappas, binary = [], []
        to_binary = np.zeros((N_CLASSES * N_CLASSES, 4), dtype=np.int64)
        for cell in range(N_CLASSES * N_CLASSES):
            r, p = divmod(cell, N_CLASSES)
            to_binary[cell, int(r >= OI_CODES[0]) * 2 + int(p >= OI_CODES[0])] = 1
        for idx in index_chunks(len(cells), n_resamples, rng):
            rows = len(idx)
            flat = cells[idx] + (np.arange(rows) * N_CLASSES * N_CLASSES)[:, None]
            counts = np.bincount(flat.ravel(), minlength=rows * N_CLASSES * N_CLASSES).reshape(rows, -1)
            kappas.append(_kappa_from_counts(counts.reshape(rows, N_CLASSES, N_CLASSES)))
            binary.append(_kappa_from_counts((counts @ to_binary).reshape(rows, 2, 2)))
        out["kappa_ci"] = tuple(float(v) for v in percentile_ci(np.concatenate(kappas), confidence))
        out["binary_kappa_ci"] = tuple(float(v) for v in percentile_ci(np.concatenate(binary), confidence))
        out["n_resamples"] = int(n_resamples)
    return out


def stratified_validation_sample(
    claims: pd.DataFrame,
    *,
    per_class: int = 100,
    seed: int = 42,
    min_models: int = 8,
    min_tasks: int = 5,
    min_personas: int = 20,
    label_column: str = "label",
    strict: bool = True,
) -> pd.DataFrame:
    """Draw the H.1 human-validation sample: ``per_class`` claims per judge label, shuffled.

    For each judge-predicted class (G, R, S, F order) a simple random sample of ``per_class``
    claims is drawn with ``numpy.random.default_rng(seed)``; if it misses a diversity constraint
    (at least ``min_models`` models, ``min_tasks`` tasks and ``min_personas`` personas among the
    class's items), the class is redrawn constructively: walking the class's claims in a random
    order, first take claims that add a model, task or persona still needed, then fill up in the
    same random order. The four classes are concatenated and shuffled with the same generator so
    that the class cannot be inferred from the order; the result keeps the input's columns.

    With ``strict=True`` (default) a ``ValueError`` says which class cannot meet which constraint
    (too few claims, models, tasks or personas). With ``strict=False`` a short class yields all
    its claims and unmet diversity is tolerated; the shortfalls are listed in
    ``result.attrs["shortfalls"]``.
    """
    required = ["model", "task_id", "persona_id", label_column]
    missing = [c for c in required if c not in claims.columns]
    if missing:
        raise ValueError(f"claims table lacks column(s) {missing}")
    # one claim can add a model, a task and a persona at once: the bound is the largest minimum
    if max(min_models, min_tasks, min_personas) > per_class and strict:
        raise ValueError("per_class is too small to hold the diversity constraints")
    rng = np.random.default_rng(seed)
    codes = encode_labels(claims[label_column])
    model_codes = pd.factorize(claims["model"])[0]
    task_codes = pd.factorize(claims["task_id"])[0]
    persona_codes = pd.factorize(claims["persona_id"])[0]
    minimums = {"models": (model_codes, min_models), "tasks": (task_codes, min_tasks),
                "personas": (persona_codes, min_personas)}
    picked: list[np.ndarray] = []
    shortfalls: list[str] = []
    for code, name in enumerate(LABEL_NAMES):
        pool = np.flatnonzero(codes == code)
        problems = [f"{len(pool)} claims (< {per_class})"] if len(pool) < per_class else []
        problems += [f"{len(np.unique(c[pool]))} {what} (< {need})" for what, (c, need) in minimums.items()
                     if len(np.unique(c[pool])) < need]
        if problems:
            message = f"judge class {name}: only " + ", ".join(problems)
            if strict:
                raise ValueError(f"cannot draw the validation sample: {message}")
            shortfalls.append(message)
        order = rng.permutation(pool)
        take = order[:per_class]
        if not problems and not _diverse(take, minimums):
            take = _constructive(order, per_class, minimums)
        picked.append(take)
    rows = np.concatenate(picked)
    rows = rows[rng.permutation(len(rows))]
    sample = claims.iloc[rows].reset_index(drop=True)
    sample.attrs["shortfalls"] = shortfalls
    return sample


def _diverse(rows: np.ndarray, minimums: dict[str, tuple[np.ndarray, int]]) -> bool:
    return all(len(np.unique(c[rows])) >= need for c, need in minimums.values())


def _constructive(order: np.ndarray, size: int, minimums: dict[str, tuple[np.ndarray, int]]) -> np.ndarray:
    """Walk ``order``: first items adding a still-needed model/task/persona, then fill in order."""
    seen: dict[str, set[int]] = {what: set() for what in minimums}
    chosen: list[int] = []
    for row in order:
        if len(chosen) >= size or all(len(seen[w]) >= need for w, (_, need) in minimums.items()):
            break
        if any(len(seen[w]) < need and c[row] not in seen[w] for w, (c, need) in minimums.items()):
            chosen.append(int(row))
            for what, (c, _) in minimums.items():
                seen[what].add(int(c[row]))
    taken = set(chosen)
    for row in order:
        if len(chosen) >= size:
            break
        if int(row) not in taken:
            chosen.append(int(row))
    result = np.array(chosen, dtype=np.int64)
    if not _diverse(result, minimums):
        raise ValueError("cannot meet the diversity constraints within per_class items")
    return result
