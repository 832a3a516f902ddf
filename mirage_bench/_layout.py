"""Where the dataset builder and the Space live: one import path for a checkout and a wheel.

The repository keeps ``dataset_builder/`` and ``space/`` at its root; the wheel installs them as
``mirage_bench/dataset_builder/`` and ``mirage_bench/space/`` (no generic top-level packages in
site-packages). Code imports them as ``mirage_bench.dataset_builder`` and ``mirage_bench.space``.
In a checkout, where those folders are absent under ``mirage_bench/``, :func:`install` adds a
meta-path finder that makes ``mirage_bench.<area>[.<module>]`` the *same module object* as the
root package ``<area>[.<module>]`` (so ``dataset_builder.publish.PublishError`` and
``mirage_bench.dataset_builder.publish.PublishError`` are one class). Inside those folders,
siblings are imported relatively, which works under either name.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

__all__ = ["AREAS", "install"]

#: Folders at the repository root that the wheel installs under ``mirage_bench/``.
AREAS: tuple[str, ...] = ("dataset_builder", "space")

_PACKAGE_DIR = Path(__file__).resolve().parent


class _CheckoutAliases(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """``mirage_bench.<area>…`` → the already-importable root package ``<area>…`` (checkout only)."""

    def __init__(self, areas: dict[str, str], root: Path) -> None:
        self.areas = areas  # alias prefix -> real prefix
        self.root = root
        self._real_specs: dict[str, object] = {}

    def _real_name(self, fullname: str) -> str | None:
        for alias, real in self.areas.items():
            if fullname == alias or fullname.startswith(alias + "."):
                return real + fullname[len(alias) :]
        return None

    def find_spec(self, fullname, path=None, target=None):  # noqa: ANN001, ANN201 - importlib protocol
        real = self._real_name(fullname)
        if real is None:
            return None
        if str(self.root) not in sys.path:
            sys.path.append(str(self.root))  # a checkout used without its root on sys.path
        if importlib.util.find_spec(real) is None:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec) -> ModuleType:  # noqa: ANN001 - importlib protocol
        module = importlib.import_module(self._real_name(spec.name))
        self._real_specs[spec.name] = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        # the import system set __spec__ to the alias spec: give the module its own back
        for name, real_spec in list(self._real_specs.items()):
            if sys.modules.get(name) is module or getattr(real_spec, "name", None) == module.__name__:
                module.__spec__ = real_spec
                del self._real_specs[name]


def install() -> bool:
    """Add the checkout aliases when the areas sit at the repository root, not under the package.

    Returns whether the finder was installed (idempotent; a no-op in an installed wheel).
    """
    root = _PACKAGE_DIR.parent
    missing = {
        f"{__package__}.{area}": area
        for area in AREAS
        if not (_PACKAGE_DIR / area / "__init__.py").exists() and (root / area / "__init__.py").exists()
    }
    if not missing or any(isinstance(f, _CheckoutAliases) for f in sys.meta_path):
        return False
    sys.meta_path.insert(0, _CheckoutAliases(missing, root))  # before the path finder: no second copy
    return True
