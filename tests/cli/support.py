"""Running the ``plainmcp`` command as a real process, against real server processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
FEATURE_SERVER = [sys.executable, str(ROOT / "tests" / "fixtures" / "feature_server.py")]
#: The feature server as one TARGET argument (split like a shell by the command).
FEATURE_TARGET = " ".join(FEATURE_SERVER)
EVERYTHING = [sys.executable, "-m", "plainmcp_everything", "--log-level", "warning"]
#: Upper bound for one command run in a test.
TIMEOUT = 60


@dataclass
class Ran:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


def plainmcp(*args: str, timeout: float = TIMEOUT, env: dict[str, str] | None = None) -> Ran:
    """``python -m plainmcp.cli ARGS`` as a subprocess; its exit code, stdout and stderr."""
    result = subprocess.run(
        [sys.executable, "-m", "plainmcp.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        env={**os.environ, **(env or {})},
    )
    return Ran(result.returncode, result.stdout, result.stderr)
