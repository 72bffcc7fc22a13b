#!/usr/bin/env python3
"""Generate shared/client-configs: what `plainmcp config` prints for every server and client. Run with the dev venv.

    python3 dev.py client-configs           # write shared/client-configs/<client>/<server>.<json|toml|yaml|sh>
    python3 dev.py client-configs --check   # only compare; exit 1 when a file is missing, stale or extra

Each file is the real output of `plainmcp config plainmcp-<server> --client <client> --allow-missing -- <example
arguments>` (the example paths do not exist here), run
from this environment, with one rewrite: the directory the command was found in (this checkout's .venv/bin) becomes
INSTALL_DIR, where `pipx install` puts the commands, so no file names this machine. Path arguments are written
with a leading `~`, which `plainmcp config` keeps and the servers expand, for the same reason.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # its sibling modules, also when loaded by path
import workspace
from plainmcp.cli.clients import CLIENTS  # the one list of clients (this runs with the dev venv)

ROOT = workspace.ROOT
OUT = ROOT / "shared" / "client-configs"
#: The file name extension of each client's format (JSON where not named).
EXTENSIONS = {"claude-code": "sh", "codex": "toml", "continue": "yaml", "goose": "yaml"}
#: Where the examples say the server is installed: pipx's default PIPX_BIN_DIR for a user called "you".
INSTALL_DIR = "/home/you/.local/bin"
#: The example arguments of each server (as in its README); a server not named here takes none.
EXAMPLE_ARGS = {
    "filesystem": ["~/notes"],
    "sqlite": ["--db", "~/data/shop.db"],
    "prompts": ["--dir", "~/prompts"],
}


class ConfigsError(RuntimeError):
    """`plainmcp config` failed, or printed a command that is not in the directory it should be."""


def servers(space: workspace.Workspace | None = None) -> list[str]:
    """The short names of the workspace's servers: the members in servers/ (the core and the bridge in packages/
    are not servers), each named ``plainmcp-<name>`` with a console script of that name."""
    names = []
    for member in (space or workspace.load(ROOT)).members:
        project = tomllib.loads((member / "pyproject.toml").read_text())["project"]
        if member.parent.name == "servers" and project["name"] in project.get("scripts", {}):
            names.append(project["name"].removeprefix("plainmcp-"))
    return sorted(names)


def snippet(plainmcp: Path, server: str, client: str) -> str:
    """The file for ``server`` and ``client``: `plainmcp config`'s output with INSTALL_DIR for the command's directory.

    Runs in an empty scratch directory and HOME, so nothing of the caller's leaks in. Raises ConfigsError.
    """
    with tempfile.TemporaryDirectory(prefix="plainmcp-client-configs-") as scratch:
        env = {**os.environ, "HOME": scratch}
        command = [
            str(plainmcp),
            "config",
            f"plainmcp-{server}",
            "--client",
            client,
            "--allow-missing",
            "--",
            *EXAMPLE_ARGS.get(server, []),
        ]
        result = subprocess.run(command, cwd=scratch, env=env, capture_output=True, text=True)
        if result.returncode != 0:
            raise ConfigsError(f"{' '.join(command[1:])} failed ({result.returncode}):\n{result.stderr}")
        found = plainmcp.parent / f"plainmcp-{server}"
        if str(found) not in result.stdout:
            raise ConfigsError(f"plainmcp config did not name {found}:\n{result.stdout}")
        text = result.stdout.replace(f"{plainmcp.parent}/", f"{INSTALL_DIR}/")
        for host_path in (scratch, str(ROOT), str(found.parent)):
            if host_path in text:
                raise ConfigsError(f"the {client} snippet of {server} names {host_path}:\n{text}")
        return text


def generate(plainmcp: Path) -> dict[Path, str]:
    """Every file of shared/client-configs, relative to it, with its text."""
    return {
        Path(client) / f"{server}.{EXTENSIONS.get(client, 'json')}": snippet(plainmcp, server, client)
        for client in CLIENTS
        for server in servers()
    }


def differences(expected: dict[Path, str], out: Path = OUT) -> list[str]:
    """The files of ``out`` that are missing, stale or not generated (relative paths with the reason)."""
    present = {path.relative_to(out) for path in out.glob("*/*.*")}
    found = [f"{path}: extra" for path in sorted(present - expected.keys())]
    for path, text in sorted(expected.items()):
        if path not in present:
            found.append(f"{path}: missing")
        elif (out / path).read_text() != text:
            found.append(f"{path}: stale")
    return found


def main(argv: list[str]) -> int:
    if argv not in ([], ["--check"]):
        print(__doc__, file=sys.stderr)
        return 2
    plainmcp = Path(sys.executable).parent / "plainmcp"
    try:
        expected = generate(plainmcp)
    except ConfigsError as error:
        print(f"client-configs: {error}", file=sys.stderr)
        return 1
    if argv == ["--check"]:
        found = differences(expected)
        for line in found:
            print(f"client-configs: {line} (python3 dev.py client-configs writes them)", file=sys.stderr)
        return 1 if found else 0
    for stale in set(OUT.glob("*/*.*")) - {OUT / path for path in expected}:
        stale.unlink()
    for path, text in expected.items():
        (OUT / path).parent.mkdir(parents=True, exist_ok=True)
        (OUT / path).write_text(text)
    print(f"client-configs: {len(expected)} files in {OUT.relative_to(ROOT)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
