"""Small helpers for the package's record types: dataclass fields as a dict, pydantic errors in one line."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from pydantic import ValidationError

__all__ = ["all_errors", "field_values", "first_error"]


def field_values(obj: Any, *, exclude: tuple[str, ...] = (), only: tuple[str, ...] = ()) -> dict[str, Any]:
    """The dataclass ``obj``'s fields (declaration order) as a shallow dict, for ``as_dict`` methods.

    ``only`` keeps just those fields (in declaration order); ``exclude`` drops some. Unlike
    :func:`dataclasses.asdict` the values are the objects themselves, not deep copies.

    >>> from dataclasses import dataclass
    >>> @dataclass
    ... class P:
    ...     a: int
    ...     b: list[int]
    ...     c: str = "x"
    >>> field_values(P(1, [2]), exclude=("c",))
    {'a': 1, 'b': [2]}
    >>> field_values(P(1, [2]), only=("c", "a"))
    {'a': 1, 'c': 'x'}
    """
    return {
        f.name: getattr(obj, f.name)
        for f in fields(obj)
        if f.name not in exclude and (not only or f.name in only)
    }


def first_error(exc: ValidationError, top: str = "record") -> str:
    """``"<dotted location>: <message>"`` of the first error of a pydantic ``ValidationError``.

    ``top`` names the location when the error is about the whole object (an empty ``loc``).
    """
    return _one(exc.errors()[0], top)


def all_errors(exc: ValidationError, top: str = "<record>") -> str:
    """Every error of a pydantic ``ValidationError`` as ``"<location>: <message>"``, joined by ``"; "``."""
    return "; ".join(_one(err, top) for err in exc.errors())


def _one(err: Any, top: str) -> str:
    """One pydantic error as ``"<dotted location>: <message>"`` (``top`` for an empty location)."""
    return f"{'.'.join(str(part) for part in err['loc']) or top}: {err['msg']}"
