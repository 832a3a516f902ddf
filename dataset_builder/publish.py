"""``mirage-bench publish``: upload a validated build to the Hugging Face Hub in one commit.

The published set is ``README.md``, ``eval.yaml`` and ``data/**.parquet`` (never ``_private/``).
Before uploading, the folder is validated again (offline checks of :mod:`dataset_builder.validate`
plus the build report's verdict), the card is checked by the Hub's own YAML validator
(``DatasetCard.validate``), and the remote tree is compared file by file (git blob sha1 for
regular files, sha256 for LFS files) to report what is added, modified, unchanged or deleted.
``HF_ENDPOINT`` is honoured (huggingface_hub reads it), so a local server can stand in for the Hub.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dataset_builder.build import PRIVATE_DIR

__all__ = ["PublishError", "PublishPlan", "git_blob_sha1", "plan_publish", "publish"]

#: Remote files the comparison ignores (created by the Hub with every repository).
_HUB_FILES = frozenset({".gitattributes"})


class PublishError(RuntimeError):
    """The build may not be published (invalid build, Hub validation failure, …)."""


@dataclass
class PublishPlan:
    """Local files to upload and how they compare with the remote repository."""

    files: dict[str, Path]
    added: list[str] = field(default_factory=list)
    modified: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    remote_consulted: bool = False
    commit_url: str | None = None

    @property
    def changed(self) -> bool:
        """True when the commit would change anything."""
        return bool(self.added or self.modified or self.deleted)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready summary."""
        return {
            "added": self.added,
            "modified": self.modified,
            "unchanged": self.unchanged,
            "deleted": self.deleted,
            "remote_consulted": self.remote_consulted,
            "commit_url": self.commit_url,
        }


def git_blob_sha1(path: Path) -> str:
    """The git blob id of a file (what the Hub reports as ``blob_id`` for non-LFS files).

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "f"; _ = p.write_bytes(b"hello\\n")
    >>> git_blob_sha1(p)
    'ce013625030ba8dba906f756967f9e9ca394464a'
    """
    data = path.read_bytes()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def publishable_files(build_dir: Path) -> dict[str, Path]:
    """Repo path → local path of every file that is published."""
    files = {"README.md": build_dir / "README.md", "eval.yaml": build_dir / "eval.yaml"}
    for path in sorted((build_dir / "data").rglob("*.parquet")):
        files[path.relative_to(build_dir).as_posix()] = path
    return {name: path for name, path in files.items() if path.exists()}


def check_build(build_dir: Path) -> None:
    """Raise :class:`PublishError` unless the build's report and a fresh validation both pass."""
    from dataset_builder.validate import validate_build

    report_path = build_dir / PRIVATE_DIR / "build_report.json"
    if not report_path.exists():
        raise PublishError(
            f"{build_dir} has no {PRIVATE_DIR}/build_report.json: build it with `mirage-bench build-dataset`"
        )
    report = json.loads(report_path.read_text(encoding="utf-8"))
    if not report.get("valid"):
        raise PublishError(
            "the build's validation failed, refusing to publish:\n- "
            + "\n- ".join(report.get("problems", []))
        )
    problems = validate_build(build_dir)
    if problems:
        raise PublishError("the folder no longer validates, refusing to publish:\n- " + "\n- ".join(problems))


def plan_publish(build_dir: Path, repo_id: str, api: Any | None) -> PublishPlan:
    """Compare the build with the remote repository (``api=None``: no remote look-up)."""
    from huggingface_hub.errors import RepositoryNotFoundError, RevisionNotFoundError

    plan = PublishPlan(publishable_files(build_dir))
    remote: dict[str, Any] = {}
    if api is not None:
        try:
            for entry in api.list_repo_tree(repo_id, repo_type="dataset", recursive=True):
                if hasattr(entry, "blob_id"):
                    remote[entry.path] = entry
        except (RepositoryNotFoundError, RevisionNotFoundError):
            remote = {}
        plan.remote_consulted = True
    for name, path in plan.files.items():
        entry = remote.get(name)
        if entry is None:
            plan.added.append(name)
        elif (
            (entry.lfs.sha256 == _sha256(path))
            if entry.lfs is not None
            else (entry.blob_id == git_blob_sha1(path))
        ):
            plan.unchanged.append(name)
        else:
            plan.modified.append(name)
    plan.deleted = sorted(name for name in remote if name not in plan.files and name not in _HUB_FILES)
    return plan


def publish(
    build_dir: str | Path,
    repo_id: str,
    *,
    private: bool = False,
    dry_run: bool = False,
    message: str | None = None,
    token: str | None = None,
) -> PublishPlan:
    """Validate, compare and (unless ``dry_run``) create the repo and upload everything in one commit.

    Raises :class:`PublishError` for an invalid build or a card the Hub rejects. A dry run makes
    read-only calls only (none at all when ``HF_HUB_OFFLINE`` is set).
    """
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete, DatasetCard, HfApi, constants

    build_dir = Path(build_dir)
    check_build(build_dir)
    api = HfApi(token=token)
    offline = bool(constants.HF_HUB_OFFLINE)
    if dry_run:
        return plan_publish(build_dir, repo_id, None if offline else api)
    if offline:
        raise PublishError("HF_HUB_OFFLINE is set: unset it to publish (or use --dry-run)")
    card = DatasetCard.load(build_dir / "README.md")
    try:
        card.validate(repo_type="dataset")
    except ValueError as exc:
        raise PublishError(f"the Hub rejected the dataset card: {exc}") from exc
    api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
    plan = plan_publish(build_dir, repo_id, api)
    if not plan.changed:
        return plan
    operations: list[Any] = [
        CommitOperationAdd(path_in_repo=name, path_or_fileobj=str(path)) for name, path in plan.files.items()
    ]
    operations += [CommitOperationDelete(path_in_repo=name) for name in plan.deleted]
    summary = message or (
        f"MirageBench dataset build: {len(plan.added)} added, {len(plan.modified)} modified, "
        f"{len(plan.deleted)} deleted"
    )
    info = api.create_commit(repo_id, operations=operations, commit_message=summary, repo_type="dataset")
    plan.commit_url = str(info.commit_url) if getattr(info, "commit_url", None) else None
    return plan
