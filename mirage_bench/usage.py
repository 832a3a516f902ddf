"""Which stage a model call belongs to, so token usage and cost can be recorded per stage.

The pipeline enters :func:`stage` around each instrument call (``task``, ``self_audit``, ``judge``,
``probe``, ``probe_judge``, ``accum``); :class:`mirage_bench.client.Client` adds each backend
completion's usage to the bucket of the current stage. A context variable is per asyncio task, so
concurrent instances never mix their stages.

>>> with stage("judge"):
...     current_stage()
'judge'
>>> current_stage() is None
True
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar

_STAGE: ContextVar[str | None] = ContextVar("mirage_bench_stage", default=None)

#: Which client role (``model`` / ``judge``) pays for each stage.
STAGE_ROLES: dict[str, str] = {
    "task": "model",
    "self_audit": "model",
    "probe": "model",
    "accum": "model",
    "judge": "judge",
    "probe_judge": "judge",
    "accum_retraction_judge": "judge",
}


@contextlib.contextmanager
def stage(name: str) -> Iterator[None]:
    """Attribute the calls made inside the block to stage ``name``."""
    token = _STAGE.set(name)
    try:
        yield
    finally:
        _STAGE.reset(token)


def current_stage() -> str | None:
    """The stage of the running call, or ``None`` outside any stage."""
    return _STAGE.get()


def add_usage(buckets: dict[str, dict[str, int]], name: str | None, **counts: int) -> None:
    """Add ``counts`` to ``buckets[name]`` (nothing when ``name`` is None)."""
    if name is None:
        return
    bucket = buckets.setdefault(
        name, {"calls": 0, "backend_calls": 0, "cache_hits": 0, "input_tokens": 0, "output_tokens": 0}
    )
    for key, value in counts.items():
        bucket[key] = bucket.get(key, 0) + value
