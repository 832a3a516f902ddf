"""The Hub-backed store: the leaderboard's requests and results mirrored in two Hub dataset repos.

The pattern of the Hugging Face leaderboard template: a *requests* dataset (the queue: request
files and the uploaded responses they point to) and a *results* dataset (per submission the judged
verdicts, the claims and the board row; annotation samples and labels; reward sets). On start the
Space downloads both (:meth:`HubMirror.restore`, ``snapshot_download``) into its local store and
rebuilds the board and the queue from them; every state change of the store asks for a commit
(:meth:`HubMirror.request_push`), which a background thread makes at most every ``min_interval_s``
with ``upload_folder`` (huggingface_hub skips files whose content the Hub already holds), and
:meth:`HubMirror.flush` commits what is left before the process exits.

Settings (read by :meth:`HubConfig.from_env`, never at import):

- ``MIRAGE_REQUESTS_REPO`` and ``MIRAGE_RESULTS_REPO`` — dataset repo ids (*variables*);
  ``MIRAGE_HUB_REPO`` sets both to one repo.
- ``HF_TOKEN`` — a write token (a *secret*), read by huggingface_hub itself; ``HF_ENDPOINT`` as usual.

The local disk is the working copy and the Hub the durable one: a restore copies in only the files
the local store lacks (a disk that survived a restart is at least as fresh as its last commit), so a
wiped disk comes back as of the last commit and a kept disk is left as it is. A failed commit is
logged without keys and retried at the next change; it never stops the worker.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

#: What the requests repo holds (paths relative to the store root).
REQUESTS_PATTERNS: tuple[str, ...] = ("requests/*.json", "uploads/*.jsonl")
#: What the results repo holds. ``judgments.jsonl`` is there so that a RUNNING submission resumes
#: after a wiped restart where it stopped, not from scratch.
RESULTS_PATTERNS: tuple[str, ...] = (
    "results/*/leaderboard_row.json",
    "results/*/claims.parquet",
    "results/*/judgments.jsonl",
    "results/*/responses.jsonl",
    "annotation/samples/*.jsonl",
    "annotation/labels/*/*.jsonl",
    "reward/*.jsonl",
    "judges/canary/*.json*",
    "judges/canary/labels/*.jsonl",
)


@dataclass(frozen=True)
class HubConfig:
    """The two dataset repos the store is mirrored in (they may be the same repo)."""

    requests_repo: str
    results_repo: str

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> HubConfig | None:
        """The configuration from the environment, or None when no Hub repo is configured.

        >>> HubConfig.from_env({"MIRAGE_HUB_REPO": "org/lb"})
        HubConfig(requests_repo='org/lb', results_repo='org/lb')
        >>> HubConfig.from_env({}) is None
        True
        """
        env = dict(os.environ) if env is None else env
        both = env.get("MIRAGE_HUB_REPO", "").strip()
        requests = env.get("MIRAGE_REQUESTS_REPO", "").strip() or both
        results = env.get("MIRAGE_RESULTS_REPO", "").strip() or both
        if not requests and not results:
            return None
        if not requests or not results:
            missing = "MIRAGE_REQUESTS_REPO" if not requests else "MIRAGE_RESULTS_REPO"
            raise ValueError(
                f"{missing} is not set: set both MIRAGE_REQUESTS_REPO and MIRAGE_RESULTS_REPO "
                "(or MIRAGE_HUB_REPO for one repo holding both)"
            )
        return cls(requests, results)

    def patterns(self) -> dict[str, tuple[str, ...]]:
        """Repo id -> the store paths it holds."""
        if self.requests_repo == self.results_repo:
            return {self.requests_repo: REQUESTS_PATTERNS + RESULTS_PATTERNS}
        return {self.requests_repo: REQUESTS_PATTERNS, self.results_repo: RESULTS_PATTERNS}


def _redact(text: str) -> str:
    from mirage_bench.leaderboard.worker import redact

    return redact(text)


class HubMirror:
    """Keeps a local store folder and its Hub dataset repos in step (restore on start, commit on change)."""

    def __init__(self, root: Path | str, config: HubConfig, *, min_interval_s: float = 60.0) -> None:
        self.root = Path(root)
        self.config = config
        self.min_interval_s = min_interval_s
        self._fingerprints: dict[str, tuple[tuple[str, int, int], ...]] = {}
        self._repos_ready: set[str] = set()
        self._push_lock = threading.Lock()
        self._cond = threading.Condition()
        self._due: float | None = None
        self._closed = False
        self._thread: threading.Thread | None = None
        #: Commits made by this mirror (tests and logs).
        self.commits = 0
        self.last_error = ""

    # -- restore -----------------------------------------------------------------------------
    def restore(self) -> int:
        """Download both repos and copy into the store every file it lacks; returns how many.

        A repo that does not exist yet counts as empty (the first commit creates it). Any other
        failure (no network, a bad token) raises: a Space must not start on an empty board while
        its data sits unreachable on the Hub.
        """
        from huggingface_hub import snapshot_download
        from huggingface_hub.errors import RepositoryNotFoundError

        copied = 0
        for repo_id, patterns in self.config.patterns().items():
            with tempfile.TemporaryDirectory(prefix="mirage-hub-") as tmp:
                try:
                    snapshot_download(
                        repo_id,
                        repo_type="dataset",
                        local_dir=tmp,
                        allow_patterns=list(patterns),
                    )
                except RepositoryNotFoundError:
                    log.info("Hub repo %s does not exist yet: nothing to restore", repo_id)
                    continue
                staged = Path(tmp)
                for path in sorted(staged.rglob("*")):
                    rel = path.relative_to(staged)
                    if not path.is_file() or rel.parts[0] == ".cache":
                        continue
                    target = self.root / rel
                    if target.exists():
                        continue
                    target.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(path, target)
                    copied += 1
        # what was just restored is on the Hub already: no commit needed for it
        self._fingerprints = {repo: self._fingerprint(p) for repo, p in self.config.patterns().items()}
        log.info("restored %d file(s) from the Hub (%s)", copied, ", ".join(self.config.patterns()))
        return copied

    # -- commits -----------------------------------------------------------------------------
    def _files(self, patterns: tuple[str, ...]) -> list[Path]:
        return sorted({p for pattern in patterns for p in self.root.glob(pattern) if p.is_file()})

    def _fingerprint(self, patterns: tuple[str, ...]) -> tuple[tuple[str, int, int], ...]:
        out = []
        for path in self._files(patterns):
            try:
                st = path.stat()
            except OSError:
                continue
            out.append((path.relative_to(self.root).as_posix(), st.st_size, st.st_mtime_ns))
        return tuple(out)

    def push(self, message: str = "MirageBench leaderboard update") -> bool:
        """Commit what changed since the last commit, now (one commit per repo that changed).

        Returns True when every changed repo was committed; a failure is logged (without keys),
        kept in :attr:`last_error` and retried at the next call, never raised.
        """
        with self._push_lock:
            ok = True
            for repo_id, patterns in self.config.patterns().items():
                fingerprint = self._fingerprint(patterns)
                if not fingerprint or fingerprint == self._fingerprints.get(repo_id):
                    continue
                try:
                    from huggingface_hub import HfApi

                    api = HfApi()
                    if repo_id not in self._repos_ready:
                        # private: request files name their submitters
                        api.create_repo(repo_id, repo_type="dataset", private=True, exist_ok=True)
                        self._repos_ready.add(repo_id)
                    api.upload_folder(
                        repo_id=repo_id,
                        repo_type="dataset",
                        folder_path=str(self.root),
                        allow_patterns=list(patterns),
                        commit_message=message,
                    )
                except Exception as exc:  # a failed commit never stops the worker
                    self.last_error = _redact(f"{type(exc).__name__}: {exc}")
                    log.warning("Hub commit to %s failed: %s", repo_id, self.last_error)
                    ok = False
                    continue
                self._fingerprints[repo_id] = fingerprint
                self.commits += 1
                log.info("Hub commit to %s: %d file(s) in sync", repo_id, len(fingerprint))
            return ok

    def request_push(self, *, urgent: bool = False) -> None:
        """Ask for a commit: within a second when ``urgent`` (a status change, a new request, a
        label), else within ``min_interval_s`` (progress while judging). Requests are coalesced and
        committed by one background thread."""
        delay = 1.0 if urgent else self.min_interval_s
        with self._cond:
            if self._closed:
                return
            due = time.monotonic() + delay
            if self._due is None or due < self._due:
                self._due = due
            self._cond.notify_all()
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._loop, name="mirage-hub-sync", daemon=True)
                self._thread.start()

    def _loop(self) -> None:
        while True:
            with self._cond:
                while not self._closed and (self._due is None or time.monotonic() < self._due):
                    self._cond.wait(1.0 if self._due is None else max(0.01, self._due - time.monotonic()))
                if self._closed:
                    return
                self._due = None
            self.push()

    def flush(self, timeout_s: float = 30.0) -> bool:
        """Stop the background thread and commit what is left (on shutdown)."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout_s)
        return self.push("MirageBench leaderboard update (shutdown)")


def mirror_from_env(root: Path | str) -> HubMirror | None:
    """A :class:`HubMirror` of ``root`` when a Hub repo is configured in the environment, else None.

    ``MIRAGE_HUB_COMMIT_INTERVAL_S`` (default 60) spaces the progress commits while judging.
    """
    config = HubConfig.from_env()
    if config is None:
        return None
    interval = float(os.environ.get("MIRAGE_HUB_COMMIT_INTERVAL_S") or 60.0)
    return HubMirror(root, config, min_interval_s=interval)


def open_store(root: Path | str | None = None, *, restore: bool = True) -> Any:
    """The :class:`~mirage_bench.leaderboard.store.SubmissionStore` at ``root``, Hub-backed when a
    Hub repo is configured (restored from the Hub first when ``restore``), else local files only."""
    from mirage_bench.leaderboard.store import SubmissionStore

    store = SubmissionStore(root)
    mirror = mirror_from_env(store.root)
    if mirror is not None:
        if restore:
            mirror.restore()
        store.mirror = mirror
    return store
