"""Shared test configuration: every async test runs on asyncio through anyio's pytest plugin."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FEATURE_SERVER = ROOT / "tests" / "fixtures" / "feature_server.py"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def feature_server_command() -> list[str]:
    """The command that runs the feature server over stdio (same interpreter as the tests)."""
    return [sys.executable, str(FEATURE_SERVER)]


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory):
    """A real redis-server for the whole run (see tests/redis_server.py); tests share it, so each uses its own
    key prefix (the ``redis_url`` fixture flushes it before each test that asks)."""
    from tests.redis_server import RedisServer

    server = RedisServer(tmp_path_factory.mktemp("redis"))
    server.start()
    yield server
    server.stop()


@pytest.fixture
def redis_url(redis_server) -> str:
    """The URL of a real, empty Redis."""
    if redis_server.process is None:  # a fault test stopped it
        redis_server.start()
    redis_server.flush()
    return redis_server.url
