"""An offline user for the packaging tests: pip, pipx and uv that see only the local wheelhouse.

``python3 dev.py test`` downloads every third-party wheel the installs need into .ci-cache/wheelhouse
(tools/wheelhouse.py). Here pip and uv are pointed at it and nothing else: no index, no configuration
file of the machine or the user, private pipx and uv homes, and a scratch HOME. A missing or stale wheelhouse
fails the tests (never skips them): they would otherwise need the network.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
SERVERS = ("everything", "filesystem", "prompts", "sqlite", "weather")
PROTOCOL = "2025-06-18"
HOW_TO_GET = "Download it with `python3 tools/wheelhouse.py` (python3 dev.py test does it), or set PLAINMCP_WHEELHOUSE."

# Variables of the developer's or CI's shell that would let an install look somewhere else.
_FOREIGN = re.compile(r"^(PIP_|UV_|PIPX_|VIRTUAL_ENV$|CONDA_|PYTHONPATH$|PYTHONHOME$|XDG_)")


def _load_script(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(f"_plainmcp_{name}", ROOT / "tools" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def wheelhouse() -> Path:
    """The local wheelhouse; fails the test when it is missing or was made for other requirements."""
    given = os.environ.get("PLAINMCP_WHEELHOUSE")
    if given:
        path = Path(given)
    else:
        module = _load_script("wheelhouse")
        if not module.up_to_date():
            pytest.fail(f"the wheelhouse {module.WHEELHOUSE} is missing or stale. {HOW_TO_GET}", pytrace=False)
        path = module.WHEELHOUSE
    if not any(path.glob("hatchling-*.whl")):
        pytest.fail(f"no hatchling wheel in {path}. {HOW_TO_GET}", pytrace=False)
    return path


def offline_env(scratch: Path, wheels: Path) -> dict[str, str]:
    """The environment of a user whose pip, pipx and uv install only from ``wheels``, with homes below ``scratch``."""
    env = {name: value for name, value in os.environ.items() if not _FOREIGN.match(name)}
    home = scratch / "home"
    home.mkdir(parents=True, exist_ok=True)
    tools = Path(sys.executable).parent  # pipx, uv and uvx of the dev environment
    env.update(
        {
            "HOME": str(home),
            "PATH": os.pathsep.join([str(scratch / "bin"), str(tools), env.get("PATH", os.defpath)]),
            "PIP_CONFIG_FILE": os.devnull,  # no pip.conf of the machine (its index, find-links, constraints)
            "PIP_NO_INDEX": "1",
            "PIP_FIND_LINKS": str(wheels),
            "PIP_DISABLE_PIP_VERSION_CHECK": "1",
            "PIP_NO_INPUT": "1",
            "UV_NO_CONFIG": "1",
            "UV_OFFLINE": "1",
            "UV_NO_INDEX": "1",
            "UV_FIND_LINKS": str(wheels),
            "UV_CACHE_DIR": str(scratch / "uv-cache"),
            "UV_TOOL_DIR": str(scratch / "uv-tools"),
            "UV_TOOL_BIN_DIR": str(scratch / "bin"),
            "UV_PYTHON_DOWNLOADS": "never",
            "UV_PYTHON": sys.executable,
            "PIPX_HOME": str(scratch / "pipx"),
            "PIPX_BIN_DIR": str(scratch / "bin"),
            "PIPX_MAN_DIR": str(scratch / "man"),
        }
    )
    return env


def run(
    command: list[str], *, env: dict[str, str], cwd: Path, timeout: float = 180
) -> subprocess.CompletedProcess[str]:
    """Run ``command``; a non-zero exit fails the test with the end of its output."""
    result = subprocess.run(
        command, env=env, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout
    )
    assert result.returncode == 0, (
        f"{command} exited {result.returncode}:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    )
    return result


def initialize(command: list[str], *, env: dict[str, str] | None, cwd: Path, timeout: float = 120) -> dict[str, Any]:
    """Start ``command`` as a stdio server, send ``initialize``, close stdin; the ``result`` it answered.

    Raw JSON lines, as a client writes them: the server must answer, then end at the end of its input.
    """
    request = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": PROTOCOL,
            "capabilities": {},
            "clientInfo": {"name": "packaging-test", "version": "1"},
        },
    }
    result = subprocess.run(
        command, env=env, cwd=cwd, input=json.dumps(request) + "\n", capture_output=True, text=True, timeout=timeout
    )
    for line in result.stdout.splitlines():
        message = json.loads(line)
        if message.get("id") == 1:
            assert "result" in message, f"{command} answered initialize with {message}"
            return message["result"]
    raise AssertionError(f"{command} did not answer initialize (exit {result.returncode}):\n{result.stderr[-3000:]}")


def project_version(directory: Path) -> str:
    """The version the package in ``directory`` declares (pyproject.toml's, or its ``__version__``)."""
    return str(_load_script("workspace").declared_version(directory))


def server_args(name: str, home: Path) -> list[str]:
    """What a server needs on its command line to start at all (the filesystem server needs a directory)."""
    if name == "filesystem":
        (home / "notes").mkdir(parents=True, exist_ok=True)
        return [str(home / "notes")]
    return []
