#!/usr/bin/env python3
"""The Debian packages the tests drive: a real Redis, nginx and HAProxy (replicas), and Chromium (MCP Apps views).

    python3 tools/system_packages.py          # install what is missing (as root, with apt-get), then list paths
    python3 tools/system_packages.py --check  # only report; exit 1 if something is missing

``dev.py test`` calls :func:`ensure` with CI set or when one is missing and it can install (root with
apt-get); elsewhere the tests that need them say what to install and are skipped (with CI set they fail).
Standard library only.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

#: executable -> Debian package
PACKAGES = {"redis-server": "redis-server", "nginx": "nginx", "haproxy": "haproxy", "chromium": "chromium"}
SEARCH = ("/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin")


def locate(executable: str) -> str | None:
    found = shutil.which(executable)
    if found:
        return found
    for folder in SEARCH:
        path = os.path.join(folder, executable)
        if os.access(path, os.X_OK):
            return path
    return None


def missing() -> list[str]:
    return [package for executable, package in PACKAGES.items() if locate(executable) is None]


def can_install() -> bool:
    return shutil.which("apt-get") is not None and hasattr(os, "geteuid") and os.geteuid() == 0


def ensure() -> list[str]:
    """Install the missing packages when possible; returns the packages still missing."""
    wanted = missing()
    if not wanted or not can_install():
        return wanted
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = ["apt-get", "install", "-y", "--no-install-recommends", *wanted]
    print(f"system_packages: installing {' '.join(wanted)} ...", file=sys.stderr, flush=True)
    if subprocess.run(install, env=env, stdout=subprocess.DEVNULL).returncode != 0:
        subprocess.run(["apt-get", "update"], env=env, stdout=subprocess.DEVNULL, check=False)  # no package lists yet
        subprocess.run(install, env=env, stdout=subprocess.DEVNULL, check=False)
    # The packages' own services are not wanted: the tests start their own processes on free ports.
    for service in ("redis-server", "nginx", "haproxy"):
        subprocess.run(["service", service, "stop"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return missing()


def main(argv: list[str]) -> int:
    still = missing() if argv[:1] == ["--check"] else ensure()
    for executable in PACKAGES:
        print(f"{executable}: {locate(executable) or 'missing'}")
    return 1 if still else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
