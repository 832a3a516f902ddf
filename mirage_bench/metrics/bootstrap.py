"""Vectorised nonparametric bootstrap: index draws, record-level resampled sums, percentile CIs.

Every resample draws ``n`` indices uniformly with replacement (``numpy.random.Generator.integers``,
Lemire's unbiased method), which is exactly the nonparametric bootstrap of ``scipy.stats.bootstrap``;
draws are made in chunks of rows so that memory stays small and the gathered block stays in cache.
For over-inference the resampled unit is the *record* (one persona × task response): each record is
reduced to two counts, (#Stereotype + #Fabricated, #claims), packed into one machine word (high and
low 16 bits of a ``uint32`` when every resampled sum fits in 16 bits, else 32 bits of an ``int64``)
so that one gather-and-sum per resample yields both resampled sums.

>>> sums = record_bootstrap_sums(np.array([[1, 2], [0, 3], [2, 2]]), n_resamples=4, seed=0)
>>> sums.shape
(4, 1, 2)
>>> bool((sums[..., 0] <= sums[..., 1]).all())
True
>>> low, high = percentile_ci(np.arange(101.0), 0.9)
>>> round(float(low), 6), round(float(high), 6)
(5.0, 95.0)
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator

import numpy as np

#: Default number of bootstrap resamples.
DEFAULT_RESAMPLES = 10_000
#: Rows of resamples drawn per chunk: (chunk × n) indices stay within a few MB.
CHUNK_ELEMENTS = 262_144


def as_generator(seed: int | np.random.Generator | None) -> np.random.Generator:
    """A ``numpy.random.Generator`` from a seed (or the generator itself)."""
    return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)


def _index_dtype(n: int) -> type[np.integer]:
    return np.uint16 if n <= np.iinfo(np.uint16).max else np.int64


def index_chunks(n: int, n_resamples: int, rng: np.random.Generator, width: int = 1) -> Iterator[np.ndarray]:
    """Yield blocks of bootstrap index rows, shape ``(rows, n)``, ``n_resamples`` rows in all.

    Each row is ``n`` draws with replacement from ``range(n)``. ``width`` (how many values each
    index gathers, e.g. one per model) shrinks the blocks so that the gathered data stays in cache.
    """
    if n < 1:
        raise ValueError("cannot bootstrap an empty sample")
    if n_resamples < 1:
        raise ValueError("n_resamples must be at least 1")
    rows = max(1, CHUNK_ELEMENTS // (n * max(1, width)))
    dtype = _index_dtype(n)
    for start in range(0, n_resamples, rows):
        yield rng.integers(0, n, size=(min(rows, n_resamples - start), n), dtype=dtype)


def _shift(values: np.ndarray, n: int) -> int:
    """Bits for the low half: 16 (uint32 words) when a resampled sum of ``n`` values fits, else 32."""
    if values.size and values.min() < 0:
        raise ValueError("record counts must be non-negative")
    largest = int(values.max()) * n if values.size else 0
    if largest >= 2**31:
        raise ValueError("record counts too large to pack: a resampled sum could exceed 2**31")
    return 16 if largest < 2**16 else 32


def _pack(values: np.ndarray, shift: int) -> np.ndarray:
    values = np.asarray(values)
    if values.shape[-1] != 2 or not np.issubdtype(values.dtype, np.integer):
        raise ValueError("record values must be integer pairs, shape (..., 2)")
    dtype = np.uint32 if shift == 16 else np.int64
    return (values[..., 0].astype(dtype) << dtype(shift)) | values[..., 1].astype(dtype)


def _unpack(sums: np.ndarray, shift: int) -> np.ndarray:
    sums = sums.astype(np.int64)
    return np.stack([sums >> shift, sums & ((1 << shift) - 1)], axis=-1)


def record_bootstrap_sums(
    values: np.ndarray,
    *,
    strata: np.ndarray | None = None,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int | np.random.Generator | None = 0,
) -> np.ndarray:
    """Resampled column sums of per-record count pairs, resampling records within each stratum.

    ``values`` has shape ``(n_records, 2)`` (non-negative integers, e.g. OI claims and all claims of
    each record); ``strata`` (integer codes ``0..S-1``, one per record; default: one stratum) are
    resampled independently, each keeping its own size. Returns an ``int64`` array of shape
    ``(n_resamples, S, 2)``: for each resample and stratum, the two sums over the resampled records.
    """
    values = np.asarray(values)
    strata = np.zeros(len(values), dtype=np.int64) if strata is None else np.asarray(strata)
    if strata.shape != (len(values),):
        raise ValueError("strata must hold one code per record")
    rng = as_generator(seed)
    n_strata = int(strata.max()) + 1 if len(strata) else 0
    out = np.zeros((n_resamples, n_strata, 2), dtype=np.int64)
    order = np.argsort(strata, kind="stable")
    bounds = np.searchsorted(strata[order], np.arange(n_strata + 1))
    for s in range(n_strata):
        block = values[order[bounds[s]:bounds[s + 1]]]
        if len(block) == 0:
            raise ValueError(f"stratum {s} has no records")
        shift = _shift(np.asarray(block), len(block))
        packed = _pack(block, shift)
        row = 0
        for idx in index_chunks(len(block), n_resamples, rng):
            out[row:row + len(idx), s] = _unpack(np.take(packed, idx).sum(axis=1, dtype=packed.dtype), shift)
            row += len(idx)
    return out


def paired_bootstrap_sums(
    values: np.ndarray,
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int | np.random.Generator | None = 0,
) -> np.ndarray:
    """Resampled sums when several groups share the same records (paired design).

    ``values`` has shape ``(n_groups, n_records, 2)``: e.g. for each model, the counts of each
    persona × task instance (zeros where a model has no record). One set of instance indices is
    drawn per resample and applied to every group, preserving the cross-model correlation of the
    shared instances. Returns shape ``(n_resamples, n_groups, 2)``.
    """
    values = np.asarray(values)
    if values.ndim != 3 or values.shape[-1] != 2:
        raise ValueError("paired values must have shape (n_groups, n_records, 2)")
    n_groups, n_records, _ = values.shape
    shift = _shift(values, n_records)
    packed = _pack(values, shift)
    rng = as_generator(seed)
    out = np.empty((n_resamples, n_groups, 2), dtype=np.int64)
    row = 0
    for idx in index_chunks(n_records, n_resamples, rng, width=n_groups):
        sums = np.take(packed, idx, axis=1).sum(axis=2, dtype=packed.dtype)  # (groups, rows)
        out[row:row + len(idx)] = _unpack(sums.T, shift)
        row += len(idx)
    return out


def percentile_ci(
    samples: np.ndarray, confidence: float = 0.95, axis: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Percentile bootstrap interval ``(low, high)`` along ``axis``, ignoring NaN resamples (NaN when
    every resample is NaN)."""
    if not 0 < confidence < 1:
        raise ValueError("confidence must lie strictly between 0 and 1")
    alpha = (1 - confidence) / 2
    with warnings.catch_warnings():  # every resample degenerate: the interval is NaN, said by the NaN
        warnings.filterwarnings("ignore", "All-NaN slice encountered", RuntimeWarning)
        low, high = np.nanpercentile(samples, [100 * alpha, 100 * (1 - alpha)], axis=axis)
    return low, high


def ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """Elementwise ``numerator / denominator`` with NaN where the denominator is 0."""
    numerator = np.asarray(numerator, dtype=float)
    denominator = np.asarray(denominator, dtype=float)
    out = np.full(np.broadcast(numerator, denominator).shape, np.nan)
    np.divide(numerator, denominator, out=out, where=denominator != 0)
    return out
