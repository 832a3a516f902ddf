"""Per-instance scheduling: judge calls and whole records start in the first moments of a run."""

from __future__ import annotations

import time
from pathlib import Path

from mirage_bench.instruments.launch import start_run
from mirage_bench.instruments.simulate import simulated_backend


class Timed:
    """Wraps a backend and records when each call started."""

    def __init__(self, backend) -> None:
        self._backend = backend
        self.name, self.snapshot = backend.name, backend.snapshot
        self.smoke_test = getattr(backend, "smoke_test", False)
        self.started: list[float] = []

    def is_retryable(self, error: BaseException) -> bool:
        return self._backend.is_retryable(error)

    async def generate(self, messages, params):
        self.started.append(time.monotonic())
        return await self._backend.generate(messages, params)


def test_judge_calls_start_before_most_model_calls(tmp_path: Path) -> None:
    model, judge = Timed(simulated_backend(latency_s=0.01)), Timed(simulated_backend(latency_s=0.01))
    start_run(model="scripted", judge="scripted", personas="10",
              tasks="apartment,birthday_gift,dating_profile",
              out=tmp_path / "run", concurrency=4, backends=(model, judge))
    assert len(model.started) == 60 and len(judge.started) == 30
    first_judge = min(judge.started)
    # breadth-first scheduling sent all 60 model calls before the first judge call
    model_calls_before = sum(t < first_judge for t in model.started)
    assert model_calls_before <= 16, model_calls_before


def test_a_run_tunes_the_collector_and_restores_it(tmp_path: Path) -> None:
    """Inside a run the startup objects are frozen and young collections are batched; after it the
    process's collector is as it was (no frozen objects kept, the threshold restored)."""
    import gc

    from mirage_bench.instruments.pipeline import RUN_GC_THRESHOLD0

    seen: list[tuple[int, int]] = []

    class Probe(Timed):
        async def generate(self, messages, params):
            seen.append((gc.get_threshold()[0], gc.get_freeze_count()))
            return await super().generate(messages, params)

    before = (gc.get_threshold(), gc.get_freeze_count())
    model, judge = Probe(simulated_backend()), Probe(simulated_backend())
    start_run(model="scripted", judge="scripted", personas="2", tasks="apartment", out=tmp_path / "run",
              backends=(model, judge))
    assert seen and all(t == max(RUN_GC_THRESHOLD0, before[0][0]) and frozen > 1000 for t, frozen in seen)
    assert (gc.get_threshold(), gc.get_freeze_count()) == before


def test_overlapping_runs_share_the_collector_setting_and_the_last_one_restores_it() -> None:
    """Two runs in one process (the Space's worker thread and another) overlap: leaving the first
    keeps the second's setting, leaving the second restores the process's own."""
    import gc

    from mirage_bench.instruments.pipeline import RUN_GC_THRESHOLD0, throughput_gc

    before = (gc.get_threshold(), gc.get_freeze_count())
    first, second = throughput_gc(), throughput_gc()
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)
    assert gc.get_threshold()[0] == max(RUN_GC_THRESHOLD0, before[0][0]) and gc.get_freeze_count() > 1000
    second.__exit__(None, None, None)
    assert (gc.get_threshold(), gc.get_freeze_count()) == before
