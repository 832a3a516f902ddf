"""Pytest fixture around :class:`tests.openai_server.FakeOpenAIServer`.

Use it from a test module with ``from tests.openai_fixtures import openai_server  # noqa: F401``,
or make it global by adding ``pytest_plugins = ["tests.openai_fixtures"]`` to ``tests/conftest.py``.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.openai_server import FakeOpenAIServer


@pytest.fixture
def openai_server() -> Iterator[FakeOpenAIServer]:
    """A running local OpenAI-compatible server (fresh per test); ``.base_url`` ends in ``/v1``."""
    with FakeOpenAIServer() as server:
        yield server
