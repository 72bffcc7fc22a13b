"""The ``user`` fixture: a scratch home, the installed commands, and the services the READMEs' examples talk to.

Two things stand in for the outside world, the same for every block: `plainmcp-everything --transport http` serves on
a free port where the READMEs say 8000 (``UserEnv.as_in_test`` swaps the port), and the weather server's three
upstream URLs point at the local weather stand-in (environment variables), since tests have no internet.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from plainmcp_weather.standin import StandIn

from .http_servers import serving_http
from .readme import ROOT
from .user_env import UserEnv, user_env

PACKAGES = [
    ROOT / "packages" / "plainmcp",
    ROOT / "packages" / "plainmcp-bridge",
    *sorted(path.parent for path in ROOT.glob("servers/*/pyproject.toml")),
]


def installed_commands(root: Path) -> Path:
    """A fresh venv with every package of the checkout installed the way a user installs it (built, not editable),
    its third-party dependencies taken offline from the wheelhouse ``python3 dev.py test`` downloads; returns its
    ``bin`` directory."""
    wheelhouse = os.environ.get("PLAINMCP_WHEELHOUSE")
    assert wheelhouse, "PLAINMCP_WHEELHOUSE is unset: run the tests with `python3 dev.py test`, which downloads it"
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    env = {**os.environ, "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": wheelhouse, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    env.pop("PLAINMCP_RELEASE", None)
    result = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", *map(str, PACKAGES)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, f"installing the checkout's packages failed:\n{result.stderr[-4000:]}"
    return venv / "bin"


@pytest.fixture(scope="session")
def user(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UserEnv]:
    root = tmp_path_factory.mktemp("user")
    base = user_env(root, installed_commands(root))
    with StandIn() as standin:
        apis = ("GEOCODING", "FORECAST", "NWS", "AIR_QUALITY", "MARINE", "ARCHIVE")
        weather = {f"PLAINMCP_WEATHER_{api}_URL": standin.url for api in apis}
        base = dataclasses.replace(base, env={**base.env, **weather})
        with serving_http("plainmcp-everything --transport http --port 8000", base) as port:
            yield dataclasses.replace(base, http_port=port)
