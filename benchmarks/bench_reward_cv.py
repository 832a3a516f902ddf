"""Time the reward model's inner C search with default BLAS/OpenMP threads vs single-threaded.

``fit_inner_cv`` wraps scikit-learn's GridSearchCV in ``threadpool_limits(1)``; this script runs the
same search (same pipeline, C grid and GroupKFold(4) splits, SYNTHETIC features) both ways side by
side in one run and checks both choose the same C. It also times one outer 5-fold CV over the
deterministic features of SYNTHETIC pairs.

    .venv/bin/python benchmarks/bench_reward_cv.py
"""

from __future__ import annotations

import asyncio
import time

import numpy as np
from sklearn.model_selection import GridSearchCV, GroupKFold

from mirage_bench.reward.data import clear_pairs
from mirage_bench.reward.features import build_features
from mirage_bench.reward.model import C_GRID, FixedFeaturizer, cross_validate, fit_inner_cv, make_pipeline
from mirage_bench.reward.synthetic import synthetic_pairs


def main(repeats: int = 5) -> None:
    """Print a table of mean seconds per inner search and the ratio."""
    rows = []
    for n_rows, n_feat in ((120, 8), (240, 16)):
        rng = np.random.default_rng(0)
        X = rng.normal(size=(n_rows, n_feat))
        y = (X[:, 0] + rng.normal(size=n_rows) > 0).astype(int)
        g = np.repeat(np.arange(n_rows // 8), 8)
        search = GridSearchCV(
            make_pipeline(), {"logreg__C": list(C_GRID)}, cv=GroupKFold(4), scoring="accuracy"
        )
        search.fit(X, y, groups=g)  # warm-up (lazy imports)
        fit_inner_cv(X, y, g)
        t = time.perf_counter()
        for _ in range(repeats):
            search.fit(X, y, groups=g)
        threaded = (time.perf_counter() - t) / repeats
        t = time.perf_counter()
        for _ in range(repeats):
            _, c_single = fit_inner_cv(X, y, g)
        single = (time.perf_counter() - t) / repeats
        same = search.best_params_["logreg__C"] == c_single
        rows.append((n_rows, n_feat, threaded, single, threaded / single, same))
    print("| rows | features | default threads s | 1 thread s | ratio | same C |")
    print("|---:|---:|---:|---:|---:|:---:|")
    for r in rows:
        print(f"| {r[0]} | {r[1]} | {r[2]:.3f} | {r[3]:.3f} | {r[4]:.1f}x | {r[5]} |")
    pairs = clear_pairs(synthetic_pairs(30, 12, seed=0))
    feats = asyncio.run(build_features(None, None, pairs))
    t = time.perf_counter()
    asyncio.run(cross_validate(pairs, FixedFeaturizer(feats), n_shuffles=1, blocks=("all",)))
    took = time.perf_counter() - t
    print(f"\nouter 5-fold CV, 1 shuffle, {len(pairs)} SYNTHETIC pairs, 7 features: {took:.2f} s")


if __name__ == "__main__":
    main()
