"""The plain-text timing table the stage-by-stage benchmarks print (imported as a sibling script module)."""

from __future__ import annotations

from collections.abc import Sequence


def print_timings(
    rows: Sequence[tuple[str, float, str]], *, first: str = "step", last: str = "notes", digits: int = 3
) -> None:
    """Print ``(name, seconds, note)`` rows as an aligned table headed ``first | seconds | last``."""
    width = max(len(first), *(len(name) for name, _, _ in rows))
    print(f"{first:<{width}}  {'seconds':>8}  {last}")
    for name, seconds, note in rows:
        print(f"{name:<{width}}  {seconds:8.{digits}f}  {note}")
