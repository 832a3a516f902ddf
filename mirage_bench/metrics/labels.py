"""Vectorised encoding of claim labels into integer codes 0..3 (G, R, S, F: the ordinal order).

Accepted spellings, case-insensitive: the :class:`~mirage_bench.types.Label` values
(``GROUNDED``, ``INFERRED_REASONABLE``, ``INFERRED_STEREOTYPE``, ``FABRICATED``), the short names
``grounded`` / ``reasonable`` / ``stereotype`` / ``fabricated``, and the paper's initials
``G`` / ``R`` / ``S`` / ``F``. Integer arrays already holding codes 0..3 pass through.

>>> encode_labels(["GROUNDED", "fabricated", "S", "INFERRED_REASONABLE"]).tolist()
[0, 3, 2, 1]
>>> LABEL_NAMES[2], OI_CODES
('INFERRED_STEREOTYPE', (2, 3))
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from mirage_bench.types import LABELS

#: Label values in ordinal order; index = code.
LABEL_NAMES: tuple[str, ...] = tuple(label.value for label in LABELS)
#: Short column names used in outputs (``grounded_rate`` …), in code order.
SHORT_NAMES: tuple[str, ...] = ("grounded", "reasonable", "stereotype", "fabricated")
#: Codes of the two over-inference classes (Stereotype, Fabricated).
OI_CODES: tuple[int, int] = (2, 3)
N_CLASSES = 4

_ALIASES: dict[str, int] = {}
for _code, (_full, _short, _initial) in enumerate(zip(LABEL_NAMES, SHORT_NAMES, "GRSF", strict=True)):
    for _alias in (_full, _short, _initial):
        _ALIASES[_alias.casefold()] = _code


def _one_dimensional(values: Any, what: str) -> np.ndarray | pd.Series:
    """A 1-D array, or the Series itself (``pd.factorize`` on a Series keeps pandas' fast path)."""
    if isinstance(values, pd.Series):
        return values.to_numpy() if pd.api.types.is_integer_dtype(values.dtype) else values
    array = values if isinstance(values, np.ndarray) else np.asarray(list(values))
    if array.ndim != 1:
        raise ValueError(f"{what} must be one-dimensional, got shape {array.shape}")
    return array


def encode_labels(labels: Iterable[Any] | np.ndarray | pd.Series) -> np.ndarray:
    """Integer codes (``int8``, 0..3 in G, R, S, F order) of a sequence of labels.

    Works on the distinct values only (``pandas.factorize``), so it is linear in the number of
    claims with a tiny constant. Raises ``ValueError`` naming the offending values if any label is
    not one of the accepted spellings (missing values included).
    """
    array = _one_dimensional(labels, "labels")
    if isinstance(array, np.ndarray) and array.size and np.issubdtype(array.dtype, np.integer):
        if array.min() < 0 or array.max() >= N_CLASSES:
            raise ValueError("integer label codes must lie in 0..3 (G, R, S, F)")
        return array.astype(np.int8)
    codes, uniques = pd.factorize(array, use_na_sentinel=True)
    if (codes < 0).any():
        raise ValueError(f"{int((codes < 0).sum())} missing label(s); every claim needs one of {LABEL_NAMES}")
    mapping = np.empty(len(uniques), dtype=np.int8)
    unknown = []
    for i, value in enumerate(uniques):
        key = str(getattr(value, "value", value)).strip().casefold()
        if key not in _ALIASES:
            unknown.append(value)
            continue
        mapping[i] = _ALIASES[key]
    if unknown:
        raise ValueError(f"unknown label value(s) {unknown[:10]!r}; expected one of {LABEL_NAMES}")
    return mapping[codes] if len(uniques) else np.zeros(0, dtype=np.int8)


def factorize(
    values: Iterable[Any] | np.ndarray | pd.Series, what: str, n: int
) -> tuple[np.ndarray, list[Any]]:
    """``(codes, uniques)`` of a grouping column, checking it has one value per claim.

    Uniques keep their first-appearance order. Raises ``ValueError`` on a length mismatch or a
    missing value.
    """
    array = _one_dimensional(values, what)
    if len(array) != n:
        raise ValueError(f"{what} must have one value per claim ({n}), got {len(array)}")
    codes, uniques = pd.factorize(array, use_na_sentinel=True)
    if (codes < 0).any():
        raise ValueError(f"{what} has {int((codes < 0).sum())} missing value(s)")
    return codes.astype(np.int64), [u.item() if hasattr(u, "item") else u for u in uniques]
