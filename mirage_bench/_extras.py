"""Optional dependencies: a missing extra stops at once with the ``pip install`` line to run.

Checked where a feature starts (the ``space`` command, :func:`mirage_bench.backends.registry.make_backend`),
not when the first call fails deep inside a run. The check finds the module without importing it.

>>> require("json", "space")  # present: nothing happens
>>> try:
...     require("no_such_module_xyz", "api", feature="the test")
... except MissingExtraError as exc:
...     print(exc)
the test needs 'no_such_module_xyz', which is not installed: pip install 'mirage-bench[api]'
"""

from __future__ import annotations

import importlib.util

__all__ = ["BACKEND_EXTRAS", "MissingExtraError", "require", "require_backend"]

#: Model-spec kind → (module it needs, extra that installs it; ``None``: not in any extra).
BACKEND_EXTRAS: dict[str, tuple[str, str | None]] = {
    "openai": ("openai", "api"),
    "anthropic": ("anthropic", "api"),
    "transformers": ("transformers", "local"),
    "local": ("transformers", "local"),
    "vllm": ("vllm", "vllm"),
    "llamacpp": ("llama_cpp", None),
}
#: Distribution names of modules not in any extra.
_DISTRIBUTIONS = {"llama_cpp": "llama-cpp-python"}


class MissingExtraError(ImportError):
    """An optional dependency is not installed; the message is the one line to show the user."""


def require(module: str, extra: str | None, *, feature: str | None = None) -> None:
    """Raise :class:`MissingExtraError` unless top-level ``module`` is installed (it is not imported)."""
    try:
        found = importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        found = False
    if found:
        return
    install = f"'mirage-bench[{extra}]'" if extra else _DISTRIBUTIONS.get(module, module)
    raise MissingExtraError(
        f"{feature or module} needs {module!r}, which is not installed: pip install {install}", name=module
    )


def require_backend(kind: str) -> None:
    """The check for a model-spec kind (``openai``, ``anthropic``, ``local``, …); others pass."""
    if kind in BACKEND_EXTRAS:
        module, extra = BACKEND_EXTRAS[kind]
        require(module, extra, feature=f"the {kind!r} backend")
