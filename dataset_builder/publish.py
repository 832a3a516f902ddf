"""``mirage-bench publish``: upload a validated build to the Hugging Face Hub, one commit per repository.

A build has up to two repositories: the public one (``README.md``, ``eval.yaml``, ``data/**.parquet``)
and, when it holds sensitive configs (the de-identified preference pairs), the gated one built in
``gated/``. The gated repository is created, made gated with manual approval
(``HfApi.update_repo_settings(gated="manual")``) and checked to be gated *before* anything is
uploaded to it, and checked again afterwards. ``_private/`` is never uploaded.

Before uploading, the folder is validated again (offline checks of :mod:`dataset_builder.validate`
plus the build report's verdict), smoke-test rows are refused unless ``allow_smoke``, each card is
checked by the Hub's own YAML validator (``DatasetCard.validate``), and each remote tree is compared
file by file (git blob sha1 for regular files, sha256 for LFS files) to report what is added,
modified, unchanged or deleted. Every failure is a :class:`PublishError` with a one-line cause.
``HF_ENDPOINT`` is honoured (huggingface_hub reads it), so a local server can stand in for the Hub.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mirage_bench.fileio import file_sha256
from mirage_bench.structs import field_values

from .build import GATED_DIR, PRIVATE_DIR

__all__ = [
    "PublishError",
    "PublishPlan",
    "count_smoke_rows",
    "git_blob_sha1",
    "plan_publish",
    "publish",
]

#: Remote files the comparison ignores (created by the Hub with every repository).
_HUB_FILES = frozenset({".gitattributes"})
#: Configs whose rows carry a ``smoke_test`` flag.
_SMOKE_CONFIGS = ("responses", "judged_claims", "leaderboard")


class PublishError(RuntimeError):
    """The build may not be published (invalid build, smoke rows, Hub failure, …); one-line message."""


@dataclass
class PublishPlan:
    """Local files to upload to one repository and how they compare with the remote one."""

    files: dict[str, Path]
    repo_id: str = ""
    gated: bool = False
    added: list[str] = field(default_factory=list)
    modified: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    remote_consulted: bool = False
    remote_exists: bool | None = None
    remote_error: str | None = None
    remote_gated: str | bool | None = None
    commit_url: str | None = None

    @property
    def changed(self) -> bool:
        """True when the commit would change anything."""
        return bool(self.added or self.modified or self.deleted)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready summary."""
        return field_values(self, exclude=("files",))


def git_blob_sha1(path: Path) -> str:
    """The git blob id of a file (what the Hub reports as ``blob_id`` for non-LFS files).

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "f"; _ = p.write_bytes(b"hello\\n")
    >>> git_blob_sha1(p)
    'ce013625030ba8dba906f756967f9e9ca394464a'
    """
    data = path.read_bytes()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def publishable_files(build_dir: Path) -> dict[str, Path]:
    """Repo path → local path of every file that is published."""
    files = {"README.md": build_dir / "README.md", "eval.yaml": build_dir / "eval.yaml"}
    for path in sorted((build_dir / "data").rglob("*.parquet")):
        files[path.relative_to(build_dir).as_posix()] = path
    return {name: path for name, path in files.items() if path.exists()}


def check_build(build_dir: Path) -> None:
    """Raise :class:`PublishError` unless the build's report and a fresh validation both pass."""
    from .validate import validate_build

    report_path = build_dir / PRIVATE_DIR / "build_report.json"
    if not report_path.exists():
        raise PublishError(
            f"{build_dir} has no {PRIVATE_DIR}/build_report.json: build it with `mirage-bench build-dataset`"
        )
    report = json.loads(report_path.read_text(encoding="utf-8"))
    if not report.get("valid"):
        raise PublishError(
            "the build's validation failed, refusing to publish: " + "; ".join(report.get("problems", []))
        )
    problems = validate_build(build_dir)
    if (build_dir / GATED_DIR).is_dir():
        problems += [f"{GATED_DIR}/: {p}" for p in validate_build(build_dir / GATED_DIR, gated=True)]
    if problems:
        raise PublishError(
            f"the folder no longer validates ({len(problems)} problem(s)), refusing to publish: "
            + "; ".join(problems)
        )


def count_smoke_rows(build_dir: Path) -> dict[str, int]:
    """Rows flagged ``smoke_test`` per config of the build (configs without such rows left out)."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    counts: dict[str, int] = {}
    for config in _SMOKE_CONFIGS:
        n = 0
        for path in sorted((build_dir / "data" / config).glob("*.parquet")):
            column = pq.read_table(path, columns=["smoke_test"]).column("smoke_test")
            n += int(pc.sum(pc.fill_null(column, False)).as_py() or 0)
        if n:
            counts[config] = n
    return counts


def _one_line(exc: BaseException) -> str:
    """The first line of an exception's message, with its type when the message is empty."""
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def _hub_errors() -> tuple[type[BaseException], ...]:
    """Exceptions that mean the Hub could not be used (HTTP errors, connection failures, bad answers)."""
    from huggingface_hub import errors

    # the HTTP library's own error base (httpx or httpx2, whichever this huggingface_hub uses)
    transport = getattr(errors, "HTTPError", OSError)
    return (errors.HfHubHTTPError, transport, OSError, ValueError, KeyError)


def plan_publish(build_dir: Path, repo_id: str, api: Any | None, *, gated: bool = False) -> PublishPlan:
    """Compare the build (or its ``gated/`` part) with repository ``repo_id``.

    ``api=None``: no remote look-up (every file listed as added, ``remote_consulted`` false). A
    remote that cannot be reached is not an error here: the plan says so in ``remote_error``.
    """
    from huggingface_hub.errors import RepositoryNotFoundError, RevisionNotFoundError

    folder = build_dir / GATED_DIR if gated else build_dir
    plan = PublishPlan(publishable_files(folder), repo_id=repo_id, gated=gated)
    remote: dict[str, Any] = {}
    if api is not None:
        try:
            for entry in api.list_repo_tree(repo_id, repo_type="dataset", recursive=True):
                if hasattr(entry, "blob_id"):
                    remote[entry.path] = entry
            plan.remote_exists = True
            plan.remote_consulted = True
        except (RepositoryNotFoundError, RevisionNotFoundError):
            plan.remote_exists, plan.remote_consulted = False, True
        except _hub_errors() as exc:
            plan.remote_error = _one_line(exc)
        if plan.remote_exists:
            try:
                plan.remote_gated = api.dataset_info(repo_id).gated
            except _hub_errors() as exc:
                plan.remote_error = plan.remote_error or _one_line(exc)
    for name, path in plan.files.items():
        entry = remote.get(name)
        if entry is None:
            plan.added.append(name)
        elif (
            (entry.lfs.sha256 == file_sha256(path))
            if entry.lfs is not None
            else (entry.blob_id == git_blob_sha1(path))
        ):
            plan.unchanged.append(name)
        else:
            plan.modified.append(name)
    plan.deleted = sorted(name for name in remote if name not in plan.files and name not in _HUB_FILES)
    return plan


def _unreachable(api: Any, repo_id: str) -> str | None:
    """Why the Hub cannot be reached (one probe, no retries), or ``None`` when it answers at all."""
    from huggingface_hub import constants
    from huggingface_hub.utils import get_session

    try:
        get_session().get(f"{api.endpoint}/api/datasets/{repo_id}", timeout=constants.HF_HUB_ETAG_TIMEOUT)
    except _hub_errors() as exc:
        return f"{api.endpoint} cannot be reached ({_one_line(exc)})"
    return None


def _check_gated(api: Any, repo_id: str, when: str) -> None:
    gated = api.dataset_info(repo_id).gated
    if gated != "manual":
        raise PublishError(
            f"{repo_id} is not gated with manual approval {when} (the Hub reports gated={gated!r}); "
            "nothing sensitive was uploaded after this check"
        )


def _upload(api: Any, plan: PublishPlan, message: str | None) -> None:
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete

    operations: list[Any] = [
        CommitOperationAdd(path_in_repo=name, path_or_fileobj=str(path)) for name, path in plan.files.items()
    ]
    operations += [CommitOperationDelete(path_in_repo=name) for name in plan.deleted]
    summary = message or (
        f"MirageBench dataset build: {len(plan.added)} added, {len(plan.modified)} modified, "
        f"{len(plan.deleted)} deleted"
    )
    info = api.create_commit(plan.repo_id, operations=operations, commit_message=summary, repo_type="dataset")
    plan.commit_url = str(info.commit_url) if getattr(info, "commit_url", None) else None


def publish(
    build_dir: str | Path,
    repo_id: str | None = None,
    *,
    gated_repo_id: str | None = None,
    private: bool = False,
    dry_run: bool = False,
    allow_smoke: bool = False,
    message: str | None = None,
    token: str | None = None,
) -> list[PublishPlan]:
    """Validate, compare and (unless ``dry_run``) publish; returns one plan per repository.

    ``repo_id`` defaults to :data:`mirage_bench.repo_ids.DATASET_REPO_ID`; the gated repository
    (only when the build has ``gated/``) to ``sensitive_repo_id(repo_id)``. The gated repository
    is made gated (manual approval) and verified before its upload and after. Raises
    :class:`PublishError` with a one-line cause for an invalid build, smoke-test rows without
    ``allow_smoke``, a card the Hub rejects or any Hub failure. A dry run makes read-only calls
    only (none at all when ``HF_HUB_OFFLINE`` is set) and reports a remote it cannot reach.
    """
    from huggingface_hub import DatasetCard, HfApi, constants

    from mirage_bench.repo_ids import DATASET_REPO_ID, sensitive_repo_id

    build_dir = Path(build_dir)
    repo_id = repo_id or DATASET_REPO_ID
    check_build(build_dir)
    smoke = count_smoke_rows(build_dir)
    if smoke and not allow_smoke:
        rows = ", ".join(f"{config} {n}" for config, n in smoke.items())
        raise PublishError(
            f"the build holds smoke-test rows ({rows}): they are not measurements; rebuild without "
            "smoke-test runs, or pass --allow-smoke to publish them flagged smoke_test=true"
        )
    report = json.loads((build_dir / PRIVATE_DIR / "build_report.json").read_text(encoding="utf-8"))
    synthetic = {k: v for k, v in (report.get("synthetic") or {}).items() if v}
    if synthetic and not allow_smoke:
        rows = ", ".join(f"{config} {n}" for config, n in synthetic.items())
        raise PublishError(
            f"the build holds synthetic test-fixture records ({rows}): they are not study data; "
            "rebuild from the real study folder, or pass --allow-smoke to publish them anyway"
        )
    has_gated = (build_dir / GATED_DIR / "README.md").exists()
    gated_repo = (gated_repo_id or sensitive_repo_id(repo_id)) if has_gated else None
    if gated_repo == repo_id:
        raise PublishError("the gated repository must differ from the public one")
    api = HfApi(token=token)
    offline = bool(constants.HF_HUB_OFFLINE)
    targets = [(gated_repo, True)] if gated_repo else []
    targets.append((repo_id, False))
    if dry_run:
        unreachable = None if offline else _unreachable(api, repo_id)
        plans = [
            plan_publish(build_dir, repo, None if offline or unreachable else api, gated=g)
            for repo, g in targets
        ]
        for plan in plans:
            plan.remote_error = plan.remote_error or unreachable
        return plans
    if offline:
        raise PublishError("HF_HUB_OFFLINE is set: unset it to publish (or use --dry-run)")
    for repo, g in targets:
        card = DatasetCard.load((build_dir / GATED_DIR if g else build_dir) / "README.md")
        try:
            card.validate(repo_type="dataset")
        except ValueError as exc:
            raise PublishError(f"the Hub rejected the dataset card of {repo}: {_one_line(exc)}") from exc
        except _hub_errors() as exc:
            raise PublishError(f"could not validate the card of {repo} on the Hub: {_one_line(exc)}") from exc
    plans = []
    for repo, g in targets:  # the gated repository first: a gating failure stops everything
        try:
            api.create_repo(repo, repo_type="dataset", private=private, exist_ok=True)
            if g:
                api.update_repo_settings(repo, gated="manual", repo_type="dataset")
                _check_gated(api, repo, "before the upload")
            plan = plan_publish(build_dir, repo, api, gated=g)
            if plan.remote_error:
                raise PublishError(f"could not compare with {repo}: {plan.remote_error}")
            if plan.changed:
                _upload(api, plan, message)
            if g:
                _check_gated(api, repo, "after the upload")
                plan.remote_gated = "manual"
        except PublishError:
            raise
        except _hub_errors() as exc:
            raise PublishError(f"publishing {repo} failed: {_one_line(exc)}") from exc
        plans.append(plan)
    return plans
