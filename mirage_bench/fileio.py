"""Reading the package's files: numbered JSONL lines, one JSON line with a one-line problem, file hashes.

One place for what every JSONL reader of the package does the same way (skip blank lines, number
lines from 1, turn an unreadable line into a message instead of a traceback); each reader keeps its
own policy for what a bad line means (a problem listed, an error raised, a torn last line skipped).
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

__all__ = [
    "MAX_ECHO_CHARS",
    "file_sha256",
    "load_checked_cached",
    "nonblank_lines",
    "parse_json_line",
    "parse_json_object",
    "read_jsonl_lenient",
    "show",
]

T = TypeVar("T")

#: Longest echo of a submitted value in a message (longer ones are cut, their length stated).
MAX_ECHO_CHARS = 80


def show(value: Any, limit: int = MAX_ECHO_CHARS) -> str:
    """``repr(value)``, cut to ``limit`` characters with the full length stated.

    >>> show("abc")
    "'abc'"
    >>> show("x" * 10_000, limit=12)
    "'xxxxxxxxxx… (10,000 characters)"
    """
    text = repr(value)
    if len(text) <= limit:
        return text
    length = len(value) if isinstance(value, str) else len(text)
    return f"{text[: limit - 1]}… ({length:,} characters)"


def nonblank_lines(lines: str | Iterable[str]) -> Iterator[tuple[int, str]]:
    """``(line number from 1, line)`` for each line that is not blank (a text is split with ``splitlines``).

    >>> list(nonblank_lines("a\\n\\n  \\nb"))
    [(1, 'a'), (4, 'b')]
    """
    if isinstance(lines, str):
        lines = lines.splitlines()
    for number, line in enumerate(lines, start=1):
        if line.strip():
            yield number, line


def parse_json_line(line: str) -> tuple[Any, str | None]:
    """``(value, None)`` for a line that parses as JSON, else ``(None, problem)`` with a one-line reason.

    Catches what :func:`json.loads` raises on hostile input too (nesting past the parser's depth
    limit, a number literal too long to read), so a caller never shows a traceback for a bad line.

    >>> parse_json_line('{"a": 1}')
    ({'a': 1}, None)
    >>> parse_json_line('{"a": ')
    (None, 'not valid JSON (Expecting value at column 7)')
    """
    try:
        return json.loads(line), None
    except json.JSONDecodeError as exc:
        return None, f"not valid JSON ({exc.msg} at column {exc.colno})"
    except RecursionError:
        return None, "JSON nested too deeply (more than the parser's depth limit)"
    except (ValueError, TypeError, OverflowError) as exc:  # e.g. a number literal too long to read
        return None, f"not readable JSON ({show(str(exc))})"


def parse_json_object(line: str) -> tuple[dict[str, Any] | None, str | None]:
    """Like :func:`parse_json_line`, and a value that is not a JSON object is a problem too.

    >>> parse_json_object("[1]")
    (None, 'expected a JSON object, got list')
    """
    value, problem = parse_json_line(line)
    if problem is None and not isinstance(value, dict):
        return None, f"expected a JSON object, got {type(value).__name__}"
    return value, problem


def read_jsonl_lenient(path: Path, *, objects_only: bool = False) -> list[Any]:
    """The JSON values of a JSONL file that another process may be appending to.

    A missing file reads as no rows, and a line that does not parse is skipped (a torn last line
    from a kill, or one being written right now: its writer redoes that record). With
    ``objects_only`` a value that is not a JSON object is skipped too.
    """
    if not path.exists():
        return []
    out: list[Any] = []
    for _, line in nonblank_lines(path.read_text(encoding="utf-8")):
        value, problem = parse_json_line(line)
        if problem is None and (isinstance(value, dict) or not objects_only):
            out.append(value)
    return out


def load_checked_cached(
    path: Path,
    read: Callable[[str], tuple[Sequence[T], list[str]]],
    error: Callable[[Path, list[str]], Exception],
) -> tuple[T, ...]:
    """``read(path)``'s records, cached per file (path, size and modification time: an edited file is
    re-read); raises ``error(path, problems)`` when ``read`` reports any problem, and
    ``FileNotFoundError`` for a missing file. The caller copies the records if it lets them be mutated.
    """
    resolved = Path(path).resolve()
    stat = resolved.stat()
    return _read_checked(read, error, str(resolved), stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=16)
def _read_checked(
    read: Callable[[str], tuple[Sequence[T], list[str]]],
    error: Callable[[Path, list[str]], Exception],
    path: str,
    mtime_ns: int,
    size: int,
) -> tuple[T, ...]:
    records, problems = read(path)
    if problems:
        raise error(Path(path), problems)
    return tuple(records)


def file_sha256(path: Path) -> str:
    """The sha256 hex digest of a file, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
