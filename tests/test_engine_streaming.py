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
