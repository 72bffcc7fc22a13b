"""The ``user`` fixture: a scratch home, the installed commands, and the services the READMEs' examples talk to.

Two things stand in for the outside world, the same for every block: `plainmcp-everything --transport http` serves on
a free port where the READMEs say 8000 (``UserEnv.as_in_test`` swaps the port), and the weather server's three
upstream URLs point at the local weather stand-in (environment variables), since tests have no internet.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from plainmcp_weather.standin import StandIn

from .http_servers import serving_http
from .user_env import UserEnv, user_env


@pytest.fixture(scope="session")
def user(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UserEnv]:
    base = user_env(tmp_path_factory.mktemp("user"), Path(sys.executable).parent)
    with StandIn() as standin:
        weather = {f"PLAINMCP_WEATHER_{api}_URL": standin.url for api in ("GEOCODING", "FORECAST", "NWS")}
        base = dataclasses.replace(base, env={**base.env, **weather})
        with serving_http("plainmcp-everything --transport http --port 8000", base) as port:
            yield dataclasses.replace(base, http_port=port)
