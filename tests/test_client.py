"""Tests of mirage_bench.client: retries, Retry-After, timeouts, concurrency, rate limits, the cache."""

from __future__ import annotations

import asyncio
import sqlite3
import threading

import pytest

from mirage_bench.backends.base import BackendError, Completion, GenerateParams, RateLimitError
from mirage_bench.backends.scripted import ScriptedBackend
from mirage_bench.cache import ResponseCache, cache_key
from mirage_bench.client import CallResult, Client, ClientConfig
from mirage_bench.types import Message

MSGS = [Message(role="system", content="sys"), Message(role="user", content="hello")]
PARAMS = GenerateParams(temperature=0.0, max_tokens=32)


class FakeClock:
    """Records requested sleeps instead of sleeping."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)


def sequence_responder(outcomes: list[object]):
    """Return each outcome in turn (exceptions are raised by the scripted backend); then 'ok'."""
    queue = list(outcomes)

    def respond(messages, params):
        return queue.pop(0) if queue else "ok"

    return respond


async def test_retry_on_429_honours_retry_after() -> None:
    clock = FakeClock()
    backend = ScriptedBackend(sequence_responder([RateLimitError("slow", retry_after=7.5)]))
    client = Client(backend, ClientConfig(backoff_base_s=0.001, backoff_max_s=0.002), sleep=clock.sleep)
    result = await client.call(MSGS, PARAMS)
    assert result.ok and result.text == "ok"
    assert result.attempts == 2 and backend.calls == 2
    assert clock.waits == [pytest.approx(7.5)]
    assert client.stats.retries == 1


async def test_backoff_grows_without_retry_after_and_is_capped() -> None:
    clock = FakeClock()
    errors = [BackendError("boom", retryable=True, status_code=500) for _ in range(5)]
    backend = ScriptedBackend(sequence_responder(errors))
    client = Client(backend, ClientConfig(max_attempts=6, backoff_base_s=1.0, backoff_max_s=3.0),
                    sleep=clock.sleep)
    result = await client.call(MSGS, PARAMS)
    assert result.ok and result.attempts == 6
    assert len(clock.waits) == 5 and all(0.0 <= w <= 3.0 for w in clock.waits)


async def test_no_retry_on_400_and_failure_is_not_a_sentinel() -> None:
    clock = FakeClock()
    # a 400 about this request's own content fails that record only (a bare 400 is fatal: below)
    bad = BackendError("bad request: maximum context length exceeded", retryable=False, status_code=400)
    backend = ScriptedBackend(sequence_responder([bad]))
    client = Client(backend, sleep=clock.sleep)
    result = await client.call(MSGS, PARAMS)
    assert not result.ok
    assert result.text is None and result.completion is None
    assert result.error_kind == "client" and "bad request" in (result.error or "")
    assert result.attempts == 1 and backend.calls == 1 and clock.waits == []
    assert client.stats.failures == 1


@pytest.mark.parametrize("status", [401, 403, 404, 400])
async def test_fatal_errors_raise_once_and_then_send_nothing(status: int) -> None:
    from mirage_bench.client import FatalBackendError

    bad = BackendError(f"openai {status}: refused", retryable=False, status_code=status)
    backend = ScriptedBackend(lambda m, p: bad)
    client = Client(backend, sleep=FakeClock().sleep, role="judge")
    with pytest.raises(FatalBackendError) as info:
        await client.call(MSGS, PARAMS)
    line = str(info.value)
    assert "\n" not in line and "judge backend scripted" in line and "->" in line
    with pytest.raises(FatalBackendError):
        await client.call(MSGS, PARAMS)
    assert backend.calls == 1 and client.stats.backend_calls == 1


async def test_a_retry_goes_ahead_of_fresh_calls() -> None:
    """Concurrency 1: a call that failed and waited out its backoff is served before queued fresh calls."""
    order: list[str] = []
    failed_once: set[str] = set()

    def responder(messages, params):
        name = messages[-1].content
        order.append(name)
        if name == "first" and name not in failed_once:
            failed_once.add(name)
            return BackendError("busy", retryable=True, status_code=503)
        return name

    async def no_wait(seconds: float) -> None:
        await asyncio.sleep(0)

    client = Client(ScriptedBackend(responder, latency_s=0.01), ClientConfig(concurrency=1), sleep=no_wait)
    calls = [client.call([Message(role="user", content=n)], PARAMS) for n in ["first", "a", "b", "c"]]
    results = await asyncio.gather(*calls)
    assert all(r.ok for r in results)
    assert order[:3] == ["first", "a", "first"], order


async def test_retries_exhausted_on_500() -> None:
    backend = ScriptedBackend(lambda m, p: BackendError("down", retryable=True, status_code=503))
    client = Client(backend, ClientConfig(max_attempts=3), sleep=FakeClock().sleep)
    result = await client.call(MSGS, PARAMS)
    assert not result.ok and result.error_kind == "server" and result.attempts == 3 and backend.calls == 3


async def test_timeout_is_retried_then_recorded() -> None:
    backend = ScriptedBackend(lambda m, p: "late", latency_s=5.0)
    client = Client(backend, ClientConfig(timeout_s=0.05, max_attempts=2), sleep=FakeClock().sleep)
    result = await client.call(MSGS, PARAMS)
    assert not result.ok and result.error_kind == "timeout" and result.attempts == 2
    assert "timed out" in (result.error or "")


async def test_unexpected_exception_is_recorded_not_raised() -> None:
    backend = ScriptedBackend(lambda m, p: ZeroDivisionError("bug"))
    client = Client(backend, sleep=FakeClock().sleep)
    result = await client.call(MSGS, PARAMS)
    assert not result.ok and result.error_kind == "unexpected" and result.attempts == 1


async def test_concurrency_limit_respected() -> None:
    in_flight = 0
    peak = 0

    async def respond(messages, params):
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0.01)
        in_flight -= 1
        return "ok"

    client = Client(ScriptedBackend(respond), ClientConfig(concurrency=3))
    calls = [client.call([Message(role="user", content=str(i))], PARAMS) for i in range(20)]
    results = await asyncio.gather(*calls)
    assert all(r.ok for r in results)
    assert peak == 3


async def test_requests_per_minute_limit_holds_back_excess_calls() -> None:
    backend = ScriptedBackend(lambda m, p: "ok")
    client = Client(backend, ClientConfig(requests_per_minute=2))
    calls = [client.call([Message(role="user", content=str(i))], PARAMS) for i in range(3)]
    tasks = [asyncio.create_task(c) for c in calls]
    await asyncio.sleep(0.2)
    assert backend.calls == 2
    assert sum(t.done() for t in tasks) == 2
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


async def test_tokens_per_minute_limit_holds_back_excess_calls() -> None:
    backend = ScriptedBackend(lambda m, p: "ok")
    client = Client(backend, ClientConfig(tokens_per_minute=100))
    big = GenerateParams(max_tokens=60)  # each attempt is charged ~60 tokens of a 100-token bucket
    calls = [client.call([Message(role="user", content=str(i))], big) for i in range(2)]
    tasks = [asyncio.create_task(c) for c in calls]
    await asyncio.sleep(0.2)
    assert backend.calls == 1
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


async def test_cache_hit_makes_zero_backend_calls(tmp_path) -> None:
    cache = ResponseCache(tmp_path / "cache.sqlite")
    backend = ScriptedBackend(lambda m, p: "answer")
    first = await Client(backend, cache=cache).call(MSGS, PARAMS, prompt_sha256="abc")
    assert first.ok and not first.cached and backend.calls == 1
    other = Client(backend, ClientConfig(timeout_s=3.0, max_attempts=2, concurrency=1, backoff_base_s=9.0),
                   cache=ResponseCache(tmp_path / "cache.sqlite"))
    second = await other.call(MSGS, PARAMS, prompt_sha256="abc")
    assert second.ok and second.cached and second.text == "answer" and second.attempts == 0
    assert backend.calls == 1 and other.stats.cache_hits == 1 and other.stats.backend_calls == 0
    assert second.cache_key == first.cache_key


def test_cache_key_depends_on_semantics_only() -> None:
    base = cache_key("openai:m", "m", MSGS, PARAMS, "sha-a")
    same = GenerateParams(temperature=0.0, max_tokens=32)
    assert base == cache_key("openai:m", "m", MSGS, same, ("sha-a",))
    assert base != cache_key("openai:m", "m", MSGS, PARAMS.model_copy(update={"temperature": 0.7}), "sha-a")
    assert base != cache_key("openai:m", "m", MSGS, PARAMS, "sha-b")
    assert base != cache_key("openai:m", "m2", MSGS, PARAMS, "sha-a")
    assert base != cache_key("openai:m", "m", MSGS[:1], PARAMS, "sha-a")
    schema_params = PARAMS.model_copy(update={"json_schema": {"type": "object"}})
    assert base != cache_key("openai:m", "m", MSGS, schema_params, "sha-a")


def test_cache_key_recipe_is_unchanged() -> None:
    """The fast key (orjson for the messages) gives the digest the one-``json.dumps`` recipe always gave."""
    import random

    from mirage_bench.cache import _reference_cache_key

    messages = [Message(role="system", content='Judge \u00e9\u4e2d\U0001F600 "q" \\ \n\t\x00\x1f\x7f\u2028'),
                Message(role="user", content="hi")]
    params = GenerateParams(temperature=0.7, max_tokens=9, top_p=0.5, seed=3, stop=("\n",),
                            json_schema={"type": "object", "properties": {"z": {"maxLength": 1e-07},
                                                                          "a": {"type": "string"}}})
    # computed by the first-wave implementation (a single sorted json.dumps): existing caches keep hitting
    assert cache_key("openai:m@http://x/v1", "m", messages, params, ("s1", "s2")) == (
        "a18433faea5bb84d8b4e820cc3c4a02adb2ecee48abda4b28e6bb1d5246f9ad5")
    rng = random.Random(5)
    alphabet = [chr(c) for c in (*range(0, 0x80), 0xE9, 0x2028, 0x4E2D, 0xFEFF, 0x1F600)]
    for _ in range(300):
        msgs = [Message(role=rng.choice(["system", "user", "assistant"]),
                        content="".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40))))
                for _ in range(rng.randint(1, 3))]
        shas = tuple(rng.choice(["a", "b\u00e9"]) for _ in range(rng.randint(0, 2)))
        expected = _reference_cache_key("b", "s", msgs, params, list(shas))
        assert cache_key("b", "s", msgs, params, shas) == expected
    lone = [Message(role="user", content="\ud800")]  # a lone surrogate fails as it always did
    with pytest.raises(UnicodeEncodeError):
        cache_key("b", "s", lone, params)


def test_cache_key_params_memo_is_per_object_and_exact() -> None:
    """The params JSON is memoised per params object: one object keyed again, an equal object and
    many distinct objects (past the memo's bound) all give the one-``json.dumps`` recipe's digest."""
    from mirage_bench.cache import _PARAMS_JSON, _PARAMS_JSON_MAX, _reference_cache_key
    from mirage_bench.instruments.judge import _judge_params

    judge = _judge_params(0.0, 4096, 0, True)
    assert _judge_params(0.0, 4096, 0, True) is judge  # the judge passes one object per setting
    for params in (judge, judge, GenerateParams(**judge.model_dump()), PARAMS):
        assert cache_key("b", "s", MSGS, params, "x") == _reference_cache_key("b", "s", MSGS, params, ["x"])
    for i in range(2 * _PARAMS_JSON_MAX + 1):
        params = GenerateParams(seed=i, json_schema={"type": "object", "maxProperties": i})
        assert cache_key("b", "s", MSGS, params) == _reference_cache_key("b", "s", MSGS, params, [])
        assert len(_PARAMS_JSON) <= _PARAMS_JSON_MAX
    keys = {cache_key("b", "s", MSGS, GenerateParams(seed=i)) for i in range(3 * _PARAMS_JSON_MAX)}
    assert len(keys) == 3 * _PARAMS_JSON_MAX  # ids reused by freed objects never hand back a stale entry


async def test_client_key_ignores_operational_settings(tmp_path) -> None:
    backend = ScriptedBackend()
    a = Client(backend, ClientConfig(timeout_s=1.0, max_attempts=1))
    b = Client(backend, ClientConfig(timeout_s=99.0, max_attempts=9, concurrency=2, requests_per_minute=5))
    assert a.key_for(MSGS, PARAMS, "s") == b.key_for(MSGS, PARAMS, "s")


async def test_failures_are_not_cached(tmp_path) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite")
    too_long = BackendError("bad: prompt is too long", retryable=False, status_code=400)
    backend = ScriptedBackend(sequence_responder([too_long]))
    client = Client(backend, cache=cache)
    assert not (await client.call(MSGS, PARAMS)).ok
    assert len(cache) == 0
    again = await client.call(MSGS, PARAMS)
    assert again.ok and not again.cached and backend.calls == 2 and len(cache) == 1


async def test_corrupted_cache_row_is_a_miss(tmp_path) -> None:
    path = tmp_path / "c.sqlite"
    cache = ResponseCache(path)
    backend = ScriptedBackend(lambda m, p: "fresh")
    client = Client(backend, cache=cache)
    key = client.key_for(MSGS, PARAMS)
    with sqlite3.connect(path) as raw:
        raw.execute("INSERT INTO responses (key, completion) VALUES (?, ?)", (key, "{not json"))
    result = await client.call(MSGS, PARAMS)
    assert result.ok and not result.cached and result.text == "fresh" and backend.calls == 1
    assert cache.get(key) == result.completion


async def test_forget_drops_a_cached_completion(tmp_path) -> None:
    client = Client(ScriptedBackend(lambda m, p: "x"), cache=ResponseCache(tmp_path / "c.sqlite"))
    first = await client.call(MSGS, PARAMS)
    assert client.forget(first.cache_key)
    assert not (await client.call(MSGS, PARAMS)).cached


def test_cache_concurrent_writers(tmp_path) -> None:
    path = tmp_path / "c.sqlite"
    ResponseCache(path).close()

    def writer(prefix: str) -> None:
        cache = ResponseCache(path)
        for i in range(100):
            cache.put(f"{prefix}{i}", Completion(text=f"{prefix}{i}"))
        cache.close()

    threads = [threading.Thread(target=writer, args=(p,)) for p in "abcd"]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    cache = ResponseCache(path)
    assert len(cache) == 400 and cache.get("c42").text == "c42"
    with sqlite3.connect(path) as raw:
        assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_client_survives_several_event_loops() -> None:
    client = Client(ScriptedBackend(lambda m, p: "ok", latency_s=0.001), ClientConfig(concurrency=1))

    async def burst() -> list[CallResult]:
        return await asyncio.gather(*(client.call([Message(role="user", content=str(i))], PARAMS)
                                      for i in range(4)))

    assert all(r.ok for r in asyncio.run(burst()))
    assert all(r.ok for r in asyncio.run(burst()))


async def test_token_usage_is_counted_for_backend_calls_only(tmp_path) -> None:
    from mirage_bench.backends.base import Usage

    usage = Usage(input_tokens=10, output_tokens=3)
    backend = ScriptedBackend(lambda m, p: Completion(text="t", usage=usage))
    client = Client(backend, cache=ResponseCache(tmp_path / "c.sqlite"))
    await client.call(MSGS, PARAMS)
    await client.call(MSGS, PARAMS)
    assert (client.stats.input_tokens, client.stats.output_tokens) == (10, 3)
    assert client.stats.as_dict()["cache_hits"] == 1


def test_cache_syncs_normal_under_wal_and_survives_a_killed_writer(tmp_path) -> None:
    import subprocess
    import sys

    normal = ResponseCache(tmp_path / "n.sqlite")
    assert normal._conn.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
    full = ResponseCache(tmp_path / "f.sqlite", synchronous="FULL")
    assert full._conn.execute("PRAGMA synchronous").fetchone()[0] == 2
    with pytest.raises(ValueError, match="synchronous"):
        ResponseCache(tmp_path / "x.sqlite", synchronous="OFF")  # type: ignore[arg-type]
    # a writer killed without closing (os._exit: no cleanup, no checkpoint) loses no committed row
    path = tmp_path / "killed.sqlite"
    script = (
        "import os, sys\n"
        "from mirage_bench.backends.base import Completion\n"
        "from mirage_bench.cache import ResponseCache\n"
        "c = ResponseCache(sys.argv[1])\n"
        "for i in range(50):\n"
        "    c.put(f'k{i}', Completion(text=str(i)))\n"
        "os._exit(9)\n"
    )
    cmd = [sys.executable, "-c", script, str(path)]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert result.returncode == 9, result.stderr
    reopened = ResponseCache(path)
    assert len(reopened) == 50 and reopened.get("k49").text == "49"


async def test_group_commit_commits_at_the_next_loop_iteration(tmp_path) -> None:
    """Grouped puts are readable at once here, committed for other connections a loop iteration later."""
    path = tmp_path / "cache.sqlite"
    cache = ResponseCache(path, group_commit=True)
    for i in range(5):
        cache.put(f"k{i}", Completion(text=str(i)))
    assert cache.get("k3").text == "3" and len(cache) == 5  # own connection: visible at once
    outside = sqlite3.connect(path)
    assert outside.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 0  # not committed yet
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert outside.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 5
    # a second connection of this process writing from the same loop never waits for the open group
    cache.put("k5", Completion(text="5"))
    other = ResponseCache(path, busy_timeout_s=1.0)
    other.put("k6", Completion(text="6"))
    assert other.get("k5").text == "5"
    cache.put("k7", Completion(text="7"))
    cache.close()  # commits the open group
    assert outside.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 8
    other.close()
    outside.close()


def test_group_commit_outside_a_loop_commits_each_put(tmp_path) -> None:
    path = tmp_path / "cache.sqlite"
    cache = ResponseCache(path, group_commit=True)
    cache.put("k", Completion(text="x"))
    with sqlite3.connect(path) as outside:
        assert outside.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 1
    cache.close()
    cache.close()  # idempotent
