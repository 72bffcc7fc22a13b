"""The ``plainmcp-weather-standin`` command as a user runs it: ``--version``, and alerts that are active
now (dated relative to the clock, never in the past)."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import httpx
from plainmcp_weather import __version__

STANDIN = str(Path(sys.executable).parent / "plainmcp-weather-standin")


def test_standin_version_prints_its_name_and_version() -> None:
    ran = subprocess.run([STANDIN, "--version"], capture_output=True, text=True, timeout=60)
    assert (ran.returncode, ran.stdout) == (0, f"plainmcp-weather-standin {__version__}\n")


def test_standin_alerts_are_active_now() -> None:
    process = subprocess.Popen([STANDIN, "--port", "0"], stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        url = process.stdout.readline().split()[-1]
        body = httpx.get(f"{url}/alerts/active", params={"area": "FL"}, timeout=10).json()
    finally:
        process.terminate()
        process.wait(timeout=10)
    now = datetime.now(UTC)
    (alert,) = body["features"]
    properties = alert["properties"]
    assert datetime.fromisoformat(properties["onset"]) <= now < datetime.fromisoformat(properties["expires"])
    assert datetime.fromisoformat(properties["sent"]) <= now
    assert f" {datetime.fromisoformat(properties['onset']).day} at " in properties["headline"]
    assert abs((datetime.fromisoformat(body["updated"]) - now).total_seconds()) < 3600
