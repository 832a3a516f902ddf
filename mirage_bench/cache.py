"""The persistent response cache: one sqlite file, WAL mode, successful completions only.

The cache key (:func:`cache_key`) is the sha256 of the backend name, the model snapshot, the
messages, the *semantic* generation parameters (temperature, max_tokens, top_p, seed, json_schema,
stop) and the sha256 of the prompt templates used. Timeouts, retry and rate-limit settings never
enter it, so changing them never invalidates a cache.

Several processes may write the same file at once (WAL journal, a busy timeout, one short
transaction per write). A row that cannot be decoded is treated as a miss, never as a crash.

Durability: ``PRAGMA synchronous=NORMAL`` (the default here). Under WAL it syncs at checkpoints,
not at every commit, so a killed or crashed *process* loses nothing that was committed and the file
is never corrupted; only an OS crash or power loss can drop the last commits, and a dropped cache
row merely costs one repeated call. ``synchronous="FULL"`` syncs every commit
(``benchmarks/bench_engine_runs.py`` measures the two side by side). With ``group_commit=True``
(a run's cache), the puts made inside an event loop during one loop iteration are committed
together at the next iteration: a ``kill -9`` can drop the rows of that last iteration (each costs
one repeated call on resume, nothing else: the run's records and usage ledger are written
separately); ``close()``, garbage collection and interpreter exit commit them.

>>> import tempfile, pathlib
>>> from mirage_bench.backends.base import Completion
>>> cache = ResponseCache(pathlib.Path(tempfile.mkdtemp()) / "c.sqlite")
>>> cache.put("k", Completion(text="hi"))
>>> cache.get("k").text, cache.get("missing"), len(cache)
('hi', None, 1)
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import sqlite3
import threading
import time
import weakref
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Literal

import orjson
from pydantic import ValidationError

from mirage_bench.backends.base import Completion, GenerateParams
from mirage_bench.types import Message

logger = logging.getLogger(__name__)

#: Bump when the key recipe changes (old rows then simply stop matching).
CACHE_KEY_VERSION = 1


def cache_key(
    backend_name: str,
    snapshot: str,
    messages: Sequence[Message],
    params: GenerateParams,
    prompt_sha256: str | Iterable[str] = (),
) -> str:
    """The sha256 hex digest identifying one call's semantic content.

    >>> p = GenerateParams(temperature=0.0)
    >>> m = [Message(role="user", content="hi")]
    >>> cache_key("openai:x", "x", m, p) == cache_key("openai:x", "x", m, p)
    True
    >>> cache_key("openai:x", "x", m, p) == cache_key("openai:x", "x", m, GenerateParams(temperature=0.7))
    False
    """
    shas = [prompt_sha256] if isinstance(prompt_sha256, str) else list(prompt_sha256)
    params_json = _params_json(params)
    dumps = orjson.dumps
    try:
        # The strings (kilobytes of prompt) through orjson, which escapes every string exactly as
        # ``json.dumps(ensure_ascii=False)`` does (checked over all code points) at several times its
        # speed: the bytes of :func:`_reference_cache_key`, assembled in its sorted-key order.
        parts = (b'{"backend":', dumps(backend_name),
                 b',"messages":', dumps([{"content": m.content, "role": m.role} for m in messages]),
                 b',"params":', params_json, b',"prompt_sha256":', dumps(shas),
                 b',"snapshot":', dumps(snapshot), b',"v":', dumps(CACHE_KEY_VERSION), b"}")
    except orjson.JSONEncodeError:  # a lone surrogate: the reference recipe raises as it always did
        return _reference_cache_key(backend_name, snapshot, messages, params, shas)
    return hashlib.sha256(b"".join(parts)).hexdigest()


#: The key's JSON of recently keyed :class:`GenerateParams` objects, by identity. An entry holds
#: its object, so that object's ``id`` cannot be reused while it is listed; a caller passing one
#: (frozen) params object to many calls, as the judge does, serialises it once: ~13 us of the
#: key's ~21 us per judge call (``model_dump`` and the sorted stdlib dump of the judge schema).
_PARAMS_JSON: dict[int, tuple[GenerateParams, bytes]] = {}
_PARAMS_JSON_MAX = 64


def _params_json(params: GenerateParams) -> bytes:
    """``params`` as the key writes it: sorted stdlib JSON (floats as Python writes them), memoised."""
    entry = _PARAMS_JSON.get(id(params))
    if entry is not None and entry[0] is params:
        return entry[1]
    encoded = json.dumps(params.model_dump(mode="json"), sort_keys=True, ensure_ascii=False,
                         separators=(",", ":")).encode("utf-8")
    if len(_PARAMS_JSON) >= _PARAMS_JSON_MAX:
        _PARAMS_JSON.clear()
    _PARAMS_JSON[id(params)] = (params, encoded)
    return encoded


def _reference_cache_key(backend_name: str, snapshot: str, messages: Sequence[Message],
                         params: GenerateParams, shas: list[str]) -> str:
    """The key recipe in one ``json.dumps``: :func:`cache_key` must always give the same digest."""
    payload = {
        "v": CACHE_KEY_VERSION,
        "backend": backend_name,
        "snapshot": snapshot,
        "messages": [{"role": m.role, "content": m.content} for m in messages],
        "params": params.model_dump(mode="json"),
        "prompt_sha256": shas,
    }
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


#: Per database file, the cache of this process whose group transaction may be open.
_OPEN_GROUPS: weakref.WeakValueDictionary[str, ResponseCache] = weakref.WeakValueDictionary()


def _commit_foreign_group(path_key: str, me: ResponseCache | None) -> None:
    """Commit another connection's open group on the same file before writing through this one.

    The group's commit waits for its event loop's next iteration; a second connection of this
    process writing to the file from that very loop would wait for the lock until its busy timeout.
    """
    other = _OPEN_GROUPS.get(path_key)
    if other is not None and other is not me:
        other._commit_group()


def _commit_and_close(conn: sqlite3.Connection) -> None:
    try:
        if conn.in_transaction:
            conn.execute("COMMIT")
    except sqlite3.Error as exc:  # a closed or busy database: those rows cost one repeated call each
        logger.warning("cache: could not commit the last rows: %s", exc)
    finally:
        conn.close()


class ResponseCache:
    """A sqlite-backed map from cache key to :class:`Completion` (successful completions only)."""

    def __init__(
        self,
        path: str | Path,
        *,
        busy_timeout_s: float = 60.0,
        synchronous: Literal["NORMAL", "FULL"] = "NORMAL",
        group_commit: bool = False,
    ) -> None:
        if synchronous not in ("NORMAL", "FULL"):
            raise ValueError(f"synchronous must be 'NORMAL' or 'FULL', got {synchronous!r}")
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        #: Commit the puts of one event-loop iteration together (see the module docstring).
        self.group_commit = group_commit
        self._path_key = str(self.path.resolve())
        _commit_foreign_group(self._path_key, None)  # this process's open group would block us
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(self.path, timeout=busy_timeout_s, check_same_thread=False,
                                     isolation_level=None)
        self._conn.execute(f"PRAGMA busy_timeout={int(busy_timeout_s * 1000)}")
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute(f"PRAGMA synchronous={synchronous}")  # after journal_mode: WAL semantics
        self._conn.execute(
            "CREATE TABLE IF NOT EXISTS responses ("
            " key TEXT PRIMARY KEY, completion TEXT NOT NULL, backend TEXT, created_at REAL)"
        )
        self._group_loop: asyncio.AbstractEventLoop | None = None
        self._group_thread: threading.Thread | None = None
        #: Commits an open group and closes the connection: on close(), garbage collection or exit.
        self._finalizer = weakref.finalize(self, _commit_and_close, self._conn)

    def get(self, key: str) -> Completion | None:
        """The cached completion for ``key``, or ``None`` (also for an undecodable row, which is logged)."""
        with self._lock:
            row = self._conn.execute("SELECT completion FROM responses WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        try:
            return Completion.model_validate_json(row[0])
        except (ValidationError, ValueError, TypeError) as exc:
            logger.warning("ignoring corrupted cache row %s in %s: %s", key[:12], self.path, exc)
            return None

    def put(self, key: str, completion: Completion, *, backend: str | None = None) -> None:
        """Store (or replace) the completion for ``key``.

        Inside a running event loop the rows of one loop iteration share one transaction, committed
        by a callback at the next iteration (:meth:`_group`); elsewhere each put commits at once.
        """
        _commit_foreign_group(self._path_key, self)
        with self._lock:
            if self.group_commit:
                self._group()
            self._conn.execute(
                "INSERT OR REPLACE INTO responses (key, completion, backend, created_at) VALUES (?, ?, ?, ?)",
                (key, completion.model_dump_json(), backend, time.time()),
            )

    def _group(self) -> None:
        """Open (or join) the running loop's group transaction; commit one a finished loop left open.

        A commit per completion cost ~0.2 ms of CPU per call at 50 ms latency (a WAL frame per page
        per commit, and checkpoints), more than the rest of the engine's own work; one commit per
        loop iteration writes each page once per batch. Called with the lock held.
        """
        try:
            loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:  # no loop in this thread: autocommit
            loop = None
        if self._conn.in_transaction:
            if loop is not None and loop is self._group_loop:
                return
            if threading.current_thread() is not self._group_thread:
                return  # a worker thread's row joins the loop's open group
            self._conn.execute("COMMIT")  # a group whose loop is gone
        self._group_loop = loop
        if loop is None:
            return
        self._group_thread = threading.current_thread()
        self._conn.execute("BEGIN")
        _OPEN_GROUPS[self._path_key] = self
        loop.call_soon(self._commit_group)

    def _commit_group(self) -> None:
        with self._lock:
            self._group_loop = None
            if not self._finalizer.alive or not self._conn.in_transaction:  # closed, or committed already
                return
            try:
                self._conn.execute("COMMIT")
            except sqlite3.Error as exc:  # e.g. busy past the timeout: those rows cost one repeated call
                logger.warning("cache %s: dropping rows that could not be committed: %s", self.path, exc)
                self._conn.execute("ROLLBACK")

    def delete(self, key: str) -> bool:
        """Forget ``key`` (e.g. a completion whose text failed to parse); return whether it existed."""
        _commit_foreign_group(self._path_key, self)
        with self._lock:
            cursor = self._conn.execute("DELETE FROM responses WHERE key = ?", (key,))
        return cursor.rowcount > 0

    def __contains__(self, key: object) -> bool:
        with self._lock:
            row = self._conn.execute("SELECT 1 FROM responses WHERE key = ?", (str(key),)).fetchone()
        return row is not None

    def __len__(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        """Commit any open group of rows and close the database connection (idempotent)."""
        with self._lock:
            self._finalizer()

    def __enter__(self) -> ResponseCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
