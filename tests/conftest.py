"""Shared pytest configuration: offline environment and markers.

Every test runs offline: hubs are unreachable on the machines this project runs on, and a test
that needs the network is a bug.
"""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")


def pytest_configure(config: pytest.Config) -> None:
    """Register the project's markers."""
    config.addinivalue_line("markers", "slow: loads a real local model or drives a browser (runs by default)")
    config.addinivalue_line("markers", "browser: drives headless Chromium through Playwright")
