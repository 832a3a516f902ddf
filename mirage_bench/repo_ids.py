"""The Hub repository ids of the published dataset: one constant each, used by the README, the card
and ``mirage-bench publish``.

The public repository holds every config except the sensitive ones; the de-identified human
preference pairs go to their own repository, which ``publish`` makes gated (manual approval)
before the first upload.

>>> sensitive_repo_id(DATASET_REPO_ID) == SENSITIVE_REPO_ID
True
"""

from __future__ import annotations

__all__ = ["DATASET_REPO_ID", "SENSITIVE_REPO_ID", "SENSITIVE_SUFFIX", "sensitive_repo_id"]

#: The public MirageBench dataset repository: ``load_dataset(DATASET_REPO_ID)``.
DATASET_REPO_ID = "miragebench/miragebench"
#: Suffix of the gated repository next to a public one.
SENSITIVE_SUFFIX = "-preferences"
#: The gated repository of the de-identified preference pairs (access on manual approval).
SENSITIVE_REPO_ID = DATASET_REPO_ID + SENSITIVE_SUFFIX


def sensitive_repo_id(repo_id: str) -> str:
    """The gated repository that goes with public repository ``repo_id``."""
    return repo_id + SENSITIVE_SUFFIX
