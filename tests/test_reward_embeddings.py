"""Embeddings through :class:`mirage_bench.embeddings.EmbeddingClient`: cache, retries, concurrency.

The OpenAI path runs against the real local HTTP server ``tests/openai_server.py`` (its
``/v1/embeddings`` route), so the ``openai`` SDK, the error mapping and the retry loop are the
ones used against the real API.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from mirage_bench.backends.base import BackendError
from mirage_bench.cache import ResponseCache
from mirage_bench.client import ClientConfig
from mirage_bench.embeddings import (
    EmbeddingClient,
    Embeddings,
    OpenAIEmbeddingBackend,
    embedding_cache_key,
    make_embedding_backend,
)
from mirage_bench.reward.retrieval import RetrievalError, make_embedder, retrieve
from tests.openai_server import FakeOpenAIServer

FIX = Path(__file__).parent / "fixtures" / "reward"


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    """The real local OpenAI-compatible HTTP server (fresh per test)."""
    with FakeOpenAIServer() as running:
        yield running
TEXTS = ["likes green tea", "runs marathons", "likes green tea", "plays chess"]


class FakeSleep:
    """Records retry waits instead of sleeping."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def _openai_client(server: FakeOpenAIServer, cache: ResponseCache | None, sleep: FakeSleep | None = None,
                   **config: object) -> EmbeddingClient:
    backend = OpenAIEmbeddingBackend("text-embedding-3-small", base_url=server.base_url, batch_size=2)
    return EmbeddingClient(backend, ClientConfig(**config), cache, sleep=sleep or FakeSleep())


async def _embed(client: EmbeddingClient, texts: list[str]):  # noqa: ANN202
    try:
        return await client.embed(texts)
    finally:
        await client.aclose()


def test_cache_hit_makes_zero_backend_calls_on_rerun(server: FakeOpenAIServer, tmp_path: Path) -> None:
    cache_path = tmp_path / "emb.sqlite"
    first = _openai_client(server, ResponseCache(cache_path))
    result = asyncio.run(_embed(first, TEXTS))
    assert result.ok and result.vectors is not None
    assert result.vectors.shape == (4, server.embedding_dim)
    # 3 unique texts in batches of 2: two requests; duplicates share one row
    assert first.stats.backend_calls == 2 and len(server.requests) == 2
    assert np.allclose(result.vectors[0], server.embedding_of("likes green tea"))
    assert np.array_equal(result.vectors[0], result.vectors[2])

    rerun = _openai_client(server, ResponseCache(cache_path))  # a new process would do the same
    again = asyncio.run(_embed(rerun, TEXTS))
    assert again.ok and np.array_equal(again.vectors, result.vectors)  # exact: float64 round trip
    assert rerun.stats.backend_calls == 0 and rerun.stats.cache_hits == 3 and again.cached == 3
    assert len(server.requests) == 2  # the server saw nothing new

    other_model = OpenAIEmbeddingBackend("text-embedding-3-large", base_url=server.base_url)
    assert embedding_cache_key(other_model.name, other_model.snapshot, TEXTS[0]) != rerun.key_for(TEXTS[0])


def test_retries_a_429_honouring_retry_after(server: FakeOpenAIServer, tmp_path: Path) -> None:
    server.fail_next(429, retry_after=3)
    sleep = FakeSleep()
    client = _openai_client(server, ResponseCache(tmp_path / "c.sqlite"), sleep,
                            backoff_base_s=0.0, backoff_max_s=0.0)
    result = asyncio.run(_embed(client, ["a query", "a memory"]))
    assert result.ok and result.attempts == 2
    assert server.errors_sent == [429] and len(server.requests) == 2
    assert client.stats.retries == 1 and client.stats.failures == 0
    assert sleep.waits == [3.0]  # max(backoff 0, Retry-After 3)


def test_client_error_fails_without_retry_and_caches_nothing(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    server.fail_next(400, message="bad input")
    cache = ResponseCache(tmp_path / "c.sqlite")
    client = _openai_client(server, cache, max_attempts=4)
    result = asyncio.run(_embed(client, ["x", "y"]))
    assert not result.ok and result.vectors is None
    assert result.error_kind == "client" and "bad input" in (result.error or "") and result.attempts == 1
    assert len(cache) == 0 and client.stats.failures == 1


def test_retries_are_bounded_and_retrieval_reports_the_failure(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    server.fail_next(503, count=3)
    client = _openai_client(server, None, max_attempts=3, backoff_base_s=0.0, backoff_max_s=0.0)
    with pytest.raises(RetrievalError, match="server"):
        asyncio.run(retrieve(client, ["q"], ["m1"], k=1))  # one batch of 2
    assert server.errors_sent == [503, 503, 503]


class CountingBackend:
    """An in-process backend that records how many batches run at once."""

    name = "counting"
    snapshot = "v1"
    batch_size = 1

    def __init__(self) -> None:
        self.active = 0
        self.peak = 0

    async def embed(self, texts: list[str]) -> Embeddings:
        self.active += 1
        self.peak = max(self.peak, self.active)
        await asyncio.sleep(0.01)
        self.active -= 1
        return Embeddings(np.array([[float(len(t)), 1.0] for t in texts]))

    def is_retryable(self, error: BaseException) -> bool:
        return isinstance(error, BackendError) and error.retryable


def test_concurrency_is_bounded_by_the_client_config() -> None:
    backend = CountingBackend()
    client = EmbeddingClient(backend, ClientConfig(concurrency=2))
    result = asyncio.run(client.embed([f"text {i}" for i in range(8)]))
    assert result.ok and backend.peak == 2 and client.stats.backend_calls == 8


def test_undecodable_cache_row_is_a_miss(tmp_path: Path) -> None:
    from mirage_bench.backends.base import Completion

    cache = ResponseCache(tmp_path / "c.sqlite")
    client = EmbeddingClient(make_embedding_backend("hashing"), cache=cache)
    cache.put(client.key_for("tea"), Completion(text="not a vector"))
    result = asyncio.run(client.embed(["tea"]))
    assert result.ok and client.stats.cache_hits == 0 and client.stats.backend_calls == 1


def test_build_pairs_cli_embeds_through_the_cached_client(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    from mirage_bench.cli import app

    args = [
        "reward", "build-pairs", "--participants", str(FIX / "synthetic_participants.jsonl"),
        "--generator", "synthetic", "--screener", "synthetic",
        "--embedder", f"openai:text-embedding-3-small@{server.base_url}",
        "--cache", str(tmp_path / "rw.sqlite"), "--k", "3", "--per-participant", "2",
    ]
    first = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "a.jsonl")])
    assert first.exit_code == 0, first.output
    n_people = len((FIX / "synthetic_participants.jsonl").read_text().splitlines())
    embedding_requests = [r for r in server.requests if "input" in r]
    assert len(embedding_requests) == n_people  # one batch (queries + memories) per participant
    second = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "b.jsonl")])
    assert second.exit_code == 0, second.output
    assert len([r for r in server.requests if "input" in r]) == n_people  # all from the cache
    assert "'backend_calls': 0" in second.output
    assert (tmp_path / "a.jsonl").read_text() == (tmp_path / "b.jsonl").read_text()


def test_make_embedder_rejects_unknown_specs(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown embedder"):
        make_embedder("word2vec")
    assert make_embedder("hashing", cache_path=tmp_path / "c.sqlite").cache is not None
