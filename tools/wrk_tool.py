#!/usr/bin/env python3
"""Find wrk, the HTTP load generator `bench-http` drives the servers with, or install it. Standard library only.

    python3 tools/wrk_tool.py          # find or install wrk, then print its path
    python3 tools/wrk_tool.py --check  # only report; exit 1 if it is missing

wrk is a compiled client (C, epoll, LuaJIT scripts), so the load generator's own CPU stops capping what
the benchmark can measure, as a Python client's did. It comes from the machine's package manager: the
Debian/Ubuntu package `wrk` (installed with apt-get when running as root), Homebrew's `wrk` on macOS (not
installed from here). `WRK=/path/to/wrk` points at one built elsewhere. Never used by the tests.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

#: wrk's Lua API (setup/init/request/response/done, wrk.format) is that of 4.x.
MIN_MAJOR = 4


class WrkError(RuntimeError):
    """wrk is missing and cannot be installed from here; the message says how to get it."""


def version(path: str) -> str | None:
    """The version line of the wrk at ``path`` (``wrk -v`` prints it and exits 1), or None if it is not wrk 4+."""
    try:
        done = subprocess.run([path, "-v"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    first = (done.stdout + done.stderr).strip().splitlines()[:1]
    if not first or not first[0].startswith("wrk "):
        return None
    number = first[0].split()[1].split("/")[-1]  # "4.2.0" or "debian/4.1.0-3+b2"
    try:
        return first[0] if int(number.split(".")[0]) >= MIN_MAJOR else None
    except ValueError:
        return None


def locate() -> str | None:
    """The path of a usable wrk: ``$WRK`` if set, else the one on PATH; None if there is none."""
    candidate = os.environ.get("WRK") or shutil.which("wrk")
    return candidate if candidate and version(candidate) else None


def _apt_install() -> None:
    apt = shutil.which("apt-get")
    if apt is None or not hasattr(os, "geteuid") or os.geteuid() != 0:
        raise WrkError(
            "wrk (4.x) is not installed: `apt-get install wrk` (Debian/Ubuntu, as root), `brew install wrk` (macOS), "
            "or set WRK to its path"
        )
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = [apt, "install", "-y", "--no-install-recommends", "wrk"]
    print("wrk_tool: installing the Debian package wrk ...", file=sys.stderr, flush=True)
    if subprocess.run(install, env=env, stdout=subprocess.DEVNULL).returncode != 0:
        # A fresh machine may have no package lists yet.
        subprocess.run([apt, "update"], env=env, stdout=subprocess.DEVNULL, check=False)
        if subprocess.run(install, env=env, stdout=subprocess.DEVNULL).returncode != 0:
            raise WrkError("apt-get could not install wrk; install it by hand or set WRK to its path")


def ensure() -> str:
    """A usable wrk's path, installing the package first if there is none (see the module docstring)."""
    found = locate()
    if found is None:
        if os.environ.get("WRK"):
            raise WrkError(f"WRK={os.environ['WRK']} is not a wrk 4.x executable")
        _apt_install()
        found = locate()
        if found is None:
            raise WrkError("wrk was installed but is not on PATH")
    return found


def main(argv: list[str]) -> int:
    if argv and argv != ["--check"]:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        path = locate() if argv else ensure()
    except WrkError as problem:
        print(f"wrk_tool: {problem}", file=sys.stderr)
        return 1
    if path is None:
        print("wrk_tool: wrk (4.x) is missing", file=sys.stderr)
        return 1
    print(f"{Path(path)}  ({version(path)})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
