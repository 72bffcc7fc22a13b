"""`hatch run test` builds and uses the development environment the root pyproject.toml defines (the README says so).

Run as a user runs it, from the repository, but offline: hatch's installer (uv) and the build backends it starts see
only the wheelhouse (tools/wheelhouse.py holds the environment's tools as well). hatch keeps its environments in
.ci-cache/hatch, so only the first run installs; every run still resolves the workspace members, which is where
hatch 1.18 crashed ("signal only works in main thread") until the members were resolved serially.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

from ..packaging.offline import offline_env, wheelhouse
from .support import ROOT, load

workspace = load(Path("tools/workspace.py"))

HATCH = Path(sys.executable).parent / "hatch"
DATA = ROOT / ".ci-cache" / "hatch"


def hatch(*args: str, scratch: Path) -> subprocess.CompletedProcess[str]:
    env = {**offline_env(scratch, wheelhouse()), "HATCH_DATA_DIR": str(DATA), "UV_CACHE_DIR": str(DATA / "uv-cache")}
    del env["UV_PYTHON"]  # it would make hatch's `uv pip install` fill that Python instead of hatch's environment
    return subprocess.run(
        [str(HATCH), *args], cwd=ROOT, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=600
    )


def test_hatch_run_test_runs_pytest_in_the_workspace_environment(tmp_path):
    # Inside hatch's environment: every workspace member importable, from this checkout (editable), and the
    # env-vars set.
    members = {
        tomllib.loads((member / "pyproject.toml").read_text())["project"]["name"].replace("-", "_"): member
        for member in workspace.load(ROOT).members
    }
    probe = tmp_path / "test_probe.py"
    probe.write_text(
        "import importlib, os, sys\n"
        "def test_probe():\n"
        f"    for module, source in { ({name: str(path) for name, path in members.items()})!r}.items():\n"
        "        assert importlib.import_module(module).__file__.startswith(source), module\n"
        f"    assert sys.prefix.startswith({str(DATA)!r})\n"
        "    assert os.environ['PLAINMCP_RELEASE'] == '1'\n"
    )
    result = hatch("run", "test", str(probe), "-q", scratch=tmp_path)
    assert result.returncode == 0, (
        f"hatch run test exited {result.returncode}:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    )
    assert "1 passed" in result.stdout
