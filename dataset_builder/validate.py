"""Offline validation of a built dataset folder (run by the build and again before publishing).

Checks the card's YAML (required metadata, ``configs`` whose ``data_files`` entries have only
``split`` and ``path``, ``dataset_info`` features for every config), that each path pattern matches
parquet files whose schema and row counts agree with the declared features and splits, that a
gated prompt accompanies ``preference_pairs``, and that ``eval.yaml`` names existing configs and
splits. Returns a list of problems (empty = valid); the Hub's own YAML check runs at publish time.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

__all__ = ["REQUIRED_METADATA", "validate_build"]

REQUIRED_METADATA: tuple[str, ...] = (
    "pretty_name",
    "license",
    "language",
    "task_categories",
    "size_categories",
    "configs",
    "dataset_info",
)
_SIZE_CATEGORIES = frozenset({"n<1K", "1K<n<10K", "10K<n<100K", "100K<n<1M", "1M<n<10M", "n>10M"})


def _card_yaml(readme: Path) -> tuple[dict[str, Any] | None, list[str]]:
    from huggingface_hub import DatasetCard

    try:
        card = DatasetCard.load(readme)
    except Exception as exc:  # noqa: BLE001 - any failure to parse the card is a validation problem
        return None, [f"README.md: cannot parse the card: {exc}"]
    data = card.data.to_dict()
    problems = [f"README.md: metadata {key!r} missing" for key in REQUIRED_METADATA if not data.get(key)]
    if not card.text.strip():
        problems.append("README.md: the card has no text")
    return data, problems


def _check_config(out: Path, config: dict[str, Any], info: dict[str, Any] | None) -> list[str]:
    import pyarrow.parquet as pq
    from datasets import Features

    name = config.get("config_name", "?")
    problems: list[str] = []
    if info is None:
        return [f"config {name}: no dataset_info entry"]
    declared = Features._from_yaml_list(info.get("features", []))
    split_rows = {s["name"]: s.get("num_examples") for s in info.get("splits", [])}
    for entry in config.get("data_files", []):
        extra = sorted(set(entry) - {"split", "path"})
        if extra:
            problems.append(
                f"config {name}: data_files entry has key(s) {extra} (only split and path are allowed)"
            )
        split, pattern = entry.get("split"), entry.get("path")
        if not split or not pattern:
            problems.append(f"config {name}: data_files entry without split or path")
            continue
        files = sorted(out.glob(pattern))
        if not files:
            problems.append(f"config {name}: {pattern} matches no file")
            continue
        rows = 0
        for path in files:
            metadata = pq.read_metadata(path)
            rows += metadata.num_rows
            actual = Features.from_arrow_schema(pq.read_schema(path))
            if actual != declared:
                problems.append(f"config {name}: {path.name} features differ from the card's dataset_info")
        if split_rows.get(split) != rows:
            problems.append(
                f"config {name}/{split}: card says {split_rows.get(split)} rows, files hold {rows}"
            )
    return problems


def validate_build(out: str | Path, *, gated: bool = False) -> list[str]:
    """All problems found in the built folder ``out`` (empty list = valid).

    ``gated``: ``out`` is the sensitive repository (``out/gated`` of a build), whose card must carry
    the access-request pledge; a public folder must list no sensitive config.
    """
    from .configs import SENSITIVE_CONFIGS

    out = Path(out)
    readme = out / "README.md"
    if not readme.exists():
        return ["README.md missing"]
    data, problems = _card_yaml(readme)
    if data is None:
        return problems
    if any(c not in _SIZE_CATEGORIES for c in data.get("size_categories") or []):
        problems.append(f"README.md: size_categories {data.get('size_categories')} not a Hub bucket")
    infos = data.get("dataset_info") or []
    infos = [infos] if isinstance(infos, dict) else infos
    by_name = {i.get("config_name", "default"): i for i in infos}
    configs = data.get("configs") or []
    names = {c.get("config_name") for c in configs}
    for config in configs:
        problems += _check_config(out, config, by_name.get(config.get("config_name")))
    for extra in sorted(set(by_name) - names):
        problems.append(f"dataset_info names config {extra!r} that configs does not list")
    if gated and not data.get("extra_gated_prompt"):
        problems.append("the gated card has no extra_gated_prompt (the no-re-identification pledge)")
    if not gated:
        for name in sorted(names & SENSITIVE_CONFIGS):
            problems.append(f"config {name} is sensitive: it belongs in the gated repository, not this one")
    defaults = [c.get("config_name") for c in configs if c.get("default")]
    if configs and len(defaults) != 1:
        problems.append(f"README.md: exactly one config must have default: true (found {defaults})")
    on_disk = {p.name for p in (out / "data").iterdir()} if (out / "data").is_dir() else set()
    for stray in sorted(on_disk - names):
        problems.append(f"data/{stray} exists but no config lists it")
    eval_path = out / "eval.yaml"
    if not eval_path.exists():
        problems.append("eval.yaml missing")
    else:
        try:
            evaluation = yaml.safe_load(eval_path.read_text(encoding="utf-8")) or {}
        except yaml.YAMLError as exc:
            return [*problems, f"eval.yaml: {exc}"]
        splits = {c.get("config_name"): {e.get("split") for e in c.get("data_files", [])} for c in configs}
        for task in evaluation.get("tasks", []):
            if task.get("split") not in splits.get(task.get("config"), set()):
                problems.append(
                    f"eval.yaml: task {task.get('id')} names {task.get('config')}/{task.get('split')}, "
                    "which is not in the build"
                )
    return problems
