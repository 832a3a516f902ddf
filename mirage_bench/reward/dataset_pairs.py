"""Read the built dataset's ``preference_pairs`` config as reward-model pairs (one explicit mapping).

``mirage-bench build-dataset`` publishes preference pairs with its own field names
(``dataset_builder.pairs``: ``participant``, ``response_with_memory``, ``preference_5pt`` with
``about_the_same`` …), while the reward area's :class:`~mirage_bench.reward.data.PreferencePair`
uses ``participant_id``, ``response_memory``, ``preference`` with ``about_same``. This module is
the single place where one becomes the other: :data:`DATASET_FIELD_MAP` renames the columns,
:data:`PREFERENCE_VALUE_MAP` renames the five-point values, and the dataset's derived columns
(:data:`DERIVED_COLUMNS`: collapsed preference, strength, clear flag) are checked against
``preference_5pt`` and then dropped (the pair derives them itself). ``split`` is kept as an extra
field; ``source`` becomes ``dataset:<name of the dataset folder or file>``.

Accepted inputs: a built dataset folder (``<root>/data/preference_pairs/*.parquet``, or
``<root>/gated/data/preference_pairs/`` of a full build), that config
folder itself, one of its parquet shards, or a JSONL file of its rows (category values as names,
or as the integer ids that ``Dataset.to_json`` writes). Integer category ids are decoded with the
ClassLabel names stored in the parquet file's own ``huggingface`` metadata, falling back to the
builder's declared features (:func:`dataset_builder.configs.config_features`).

>>> row = {"pair_id": "pair_1", "participant": "participant_ab", "query": "q", "memories": ["m"],
...        "response_with_memory": "y_m", "response_without_memory": "y_0", "generator": "g",
...        "regime": "ordinary", "preference_5pt": "about_the_same", "preference": "tie",
...        "strength": None, "split": "test", "clear_preference": False}
>>> p = pair_from_dataset_row(row, source="dataset:demo", where="demo:1")
>>> p.participant_id, p.response_memory, p.preference, p.strength, p.split
('participant_ab', 'y_m', 'about_same', 'tie', 'test')
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from mirage_bench.reward.data import DataError, PreferencePair

__all__ = [
    "CONFIG_NAME",
    "DATASET_FIELD_MAP",
    "DERIVED_COLUMNS",
    "PREFERENCE_VALUE_MAP",
    "is_dataset_input",
    "pair_from_dataset_row",
    "read_dataset_pairs",
]

CONFIG_NAME = "preference_pairs"
#: Dataset columns that keep their name as :class:`~mirage_bench.reward.data.PreferencePair` fields.
_SAME_NAME_COLUMNS = ("pair_id", "query", "memories", "generator", "regime", "split")
#: Dataset column → PreferencePair field. Every column of the config is either here or derived.
DATASET_FIELD_MAP: dict[str, str] = {
    **{column: column for column in _SAME_NAME_COLUMNS},
    "participant": "participant_id",
    "response_with_memory": "response_memory",
    "response_without_memory": "response_no_memory",
    "preference_5pt": "preference",
}
#: Five-point values spelled differently in the dataset (all others are identical).
PREFERENCE_VALUE_MAP: dict[str, str] = {"about_the_same": "about_same"}
#: Dataset columns derived from ``preference_5pt``: verified, then dropped.
DERIVED_COLUMNS: tuple[str, ...] = ("preference", "strength", "clear_preference")
_CATEGORY_COLUMNS = ("regime", "preference_5pt", "preference", "strength", "split")


def _expected_derived(five: str | None) -> dict[str, Any]:
    if five is None:
        return {}
    if five == "about_the_same":
        return {"preference": "tie", "strength": None, "clear_preference": False}
    side = "memory" if five.startswith("memory_") else "no_memory"
    strength = "much" if "_much_" in five else "slightly"
    return {"preference": side, "strength": strength, "clear_preference": strength == "much"}


def pair_from_dataset_row(row: Mapping[str, Any], *, source: str, where: str) -> PreferencePair:
    """One ``preference_pairs`` row (category names decoded) → :class:`PreferencePair`.

    Raises :class:`DataError` naming ``where`` for a missing column, an unknown column, derived
    columns that contradict ``preference_5pt``, or a row the pair model rejects.
    """
    unknown = sorted(set(row) - set(DATASET_FIELD_MAP) - set(DERIVED_COLUMNS))
    if unknown:
        raise DataError(f"{where}: unknown preference_pairs column(s) {unknown}")
    missing = sorted(c for c in DATASET_FIELD_MAP if c not in row and c != "split")
    if missing:
        raise DataError(f"{where}: missing preference_pairs column(s) {missing}")
    five = row.get("preference_5pt")
    for column, expected in _expected_derived(five).items():
        if column in row and row[column] != expected:
            raise DataError(
                f"{where}: {column}={row[column]!r} contradicts preference_5pt={five!r} "
                f"(expected {expected!r})"
            )
    record: dict[str, Any] = {DATASET_FIELD_MAP[c]: v for c, v in row.items() if c in DATASET_FIELD_MAP}
    if five is not None:
        record["preference"] = PREFERENCE_VALUE_MAP.get(five, five)
    record["memories"] = list(record.get("memories") or [])
    record["source"] = source
    try:
        return PreferencePair.model_validate(record)
    except ValidationError as exc:
        raise DataError(f"{where}: invalid preference_pairs row: {exc}") from exc


def _class_names(features: Any) -> dict[str, list[str]]:
    from datasets import ClassLabel

    return {
        n: list(f.names) for n, f in features.items() if isinstance(f, ClassLabel) and n in _CATEGORY_COLUMNS
    }


def _declared_class_names() -> dict[str, list[str]]:
    """Category names in the order older (ClassLabel) releases encoded them; columns are strings now."""
    from mirage_bench.dataset_builder.configs import config_categories

    return {c: list(v) for c, v in config_categories(CONFIG_NAME).items() if c in _CATEGORY_COLUMNS}


def _decode(row: dict[str, Any], names: Mapping[str, Sequence[str]], where: str) -> dict[str, Any]:
    out = dict(row)
    for column, labels in names.items():
        value = out.get(column)
        if isinstance(value, bool) or not isinstance(value, int):
            continue
        if not 0 <= value < len(labels):
            raise DataError(f"{where}: {column} id {value} is outside its {len(labels)} class names")
        out[column] = labels[value]
    return out


def _parquet_rows(path: Path) -> list[dict[str, Any]]:
    import pyarrow.parquet as pq
    from datasets import Features

    try:
        table = pq.read_table(path)
    except Exception as exc:  # noqa: BLE001 - pyarrow raises several types for a bad file
        raise DataError(f"{path}: not a readable parquet file ({exc})") from exc
    names = (
        _class_names(Features.from_arrow_schema(table.schema))
        if table.schema.metadata and b"huggingface" in table.schema.metadata
        else _declared_class_names()
    )
    return [_decode(r, names, f"{path.name}:{i}") for i, r in enumerate(table.to_pylist(), 1)]


def _jsonl_rows(path: Path) -> list[dict[str, Any]]:
    names: dict[str, list[str]] | None = None
    rows: list[dict[str, Any]] = []
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DataError(f"{path}:{lineno}: not JSON ({exc.msg})") from exc
            if not isinstance(row, dict):
                raise DataError(f"{path}:{lineno}: not a JSON object")
            ids = [row.get(c) for c in _CATEGORY_COLUMNS]
            if any(isinstance(v, int) and not isinstance(v, bool) for v in ids):
                names = names if names is not None else _declared_class_names()
                row = _decode(row, names, f"{path.name}:{lineno}")
            rows.append(row)
    return rows


def _shards(path: Path) -> tuple[list[Path], str]:
    """Parquet files of the config and the dataset's name."""
    if path.is_file():
        return [path], path.stem
    candidates = (
        (path / "data" / CONFIG_NAME, path.name),
        (path / "gated" / "data" / CONFIG_NAME, path.name),  # a full build: pairs are in its gated repo
        (path, path.name),
    )
    for folder, name in candidates:
        files = sorted(folder.glob("*.parquet"))
        if files:
            if folder == path and path.name == CONFIG_NAME and path.parent.name == "data":
                name = path.parent.parent.name
                if name == "gated":  # <build>/gated/data/preference_pairs: name the build
                    name = path.parent.parent.parent.name
            return files, name
    raise DataError(f"{path}: no data/{CONFIG_NAME}/*.parquet (is it a dataset built with preference pairs?)")


def is_dataset_input(path: str | Path) -> bool:
    """Whether ``path`` is dataset-shaped (a folder, a parquet file, or JSONL of dataset rows)."""
    path = Path(path)
    if path.is_dir() or path.suffix == ".parquet":
        return True
    if not path.is_file():
        return False
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                try:
                    first = json.loads(line)
                except json.JSONDecodeError:
                    return False
                return isinstance(first, dict) and "response_with_memory" in first
    return False


def read_dataset_pairs(path: str | Path, *, splits: Sequence[str] | None = None) -> list[PreferencePair]:
    """Every pair of a built ``preference_pairs`` config (optionally only ``splits``), in file order."""
    path = Path(path)
    if not path.exists():
        raise DataError(f"{path}: no such file or folder")
    if path.is_file() and path.suffix != ".parquet":
        files, name, reader = [path], path.stem, _jsonl_rows
    else:
        files, name = _shards(path)
        reader = _parquet_rows
    pairs: list[PreferencePair] = []
    seen: set[str] = set()
    for file in files:
        for i, row in enumerate(reader(file), 1):
            pair = pair_from_dataset_row(row, source=f"dataset:{name}", where=f"{file}:{i}")
            if splits is not None and getattr(pair, "split", None) not in splits:
                continue
            if pair.pair_id in seen:
                raise DataError(f"{file}:{i}: duplicate pair_id {pair.pair_id!r}")
            seen.add(pair.pair_id)
            pairs.append(pair)
    return pairs
