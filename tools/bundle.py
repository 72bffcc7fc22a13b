#!/usr/bin/env python3
"""Build a desktop bundle (.mcpb, for one-click install in Claude Desktop) of every server. Standard library only.

    python3 dev.py bundles                          # dist/ first (dev.py dist), then dist/mcpb/*.mcpb
    python tools/bundle.py --dist DIR --out DIR     # from release files elsewhere (the tests do, offline)

Each server's `manifest.json` (servers/<name>/manifest.json) becomes a bundle directory:

    manifest.json       the server's manifest, plus `compatibility` for the machine that built it
    server/main.py      the entry point: checks the Python version, puts server/lib first on sys.path, runs the server
    server/lib/         the server, the plainmcp core and every dependency, installed from the release wheels

which the official CLI (`@anthropic-ai/mcpb`, pinned in tools/node_tools.py) validates and packs.

Why vendored wheels (`server.type` "python") and not the manifest's `uv` type: the pinned CLI marks the uv
type experimental (its documentation and its schema disagree on whether `mcp_config` is needed), it would
install the servers from PyPI, where they are not published yet, and what the host runs is left to the host;
the python type runs exactly the `mcp_config` we write, with `user_config` substituted, and installs nothing.
The cost: some dependencies are compiled (watchfiles, rpds-py, PyYAML), so a bundle fits the operating
system, machine and Python minor version it was built on; the manifest's `compatibility` says which, and
main.py refuses another Python with a one-line message instead of an import error.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))  # its sibling modules, also when loaded by path
import node_tools  # noqa: E402

ENTRY = '''\
"""Entry point of the {dist} bundle: the server and its dependencies from server/lib."""

import sys
from pathlib import Path

BUILT_FOR = {built_for!r}  # the compiled dependencies in server/lib need this Python

if sys.version_info[:2] != BUILT_FOR:
    sys.exit("{dist}: this bundle needs Python %d.%d, but %s is %d.%d" % (*BUILT_FOR, sys.executable, *sys.version_info[:2]))
sys.path.insert(0, str(Path(__file__).resolve().parent / "lib"))

from {module}.__main__ import main  # noqa: E402

sys.exit(main())
'''


class BundleError(RuntimeError):
    """A bundle could not be staged, validated or packed."""


def servers() -> list[str]:
    return sorted(path.parent.name for path in (ROOT / "servers").glob("*/manifest.json"))


def platform_tag() -> str:
    """What the bundle fits: e.g. linux-x86_64-py311."""
    return f"{sys.platform}-{platform.machine().lower()}-py{sys.version_info[0]}{sys.version_info[1]}"


def compatibility() -> dict:
    major, minor = sys.version_info[:2]
    return {"platforms": [sys.platform], "runtimes": {"python": f">={major}.{minor}.0 <{major}.{minor + 1}.0"}}


def _run(command: list[str], env: dict[str, str] | None, what: str) -> str:
    result = subprocess.run(command, env=env, capture_output=True, text=True)
    if result.returncode != 0:
        raise BundleError(f"{what} failed ({result.returncode}):\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
    return result.stdout


def stage(name: str, out: Path, find_links: list[Path], env: dict[str, str] | None = None) -> Path:
    """The bundle directory of server ``name`` under ``out``, its dependencies installed from ``find_links``."""
    manifest = json.loads((ROOT / "servers" / name / "manifest.json").read_text())
    directory = out / name
    shutil.rmtree(directory, ignore_errors=True)
    (directory / "server").mkdir(parents=True)
    manifest["compatibility"] = compatibility()
    (directory / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    module = manifest["name"].replace("-", "_")
    (directory / "server" / "main.py").write_text(
        ENTRY.format(dist=manifest["name"], module=module, built_for=tuple(sys.version_info[:2]))
    )
    links = [arg for path in find_links for arg in ("--find-links", str(path))]
    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--no-compile",
            "--only-binary=:all:",
            "--target",
            str(directory / "server" / "lib"),
            *links,
            f"{manifest['name']}=={manifest['version']}",
        ],
        env,
        f"installing {manifest['name']} into its bundle",
    )
    # Console scripts with this machine's interpreter in their #! line: the bundle runs main.py instead.
    shutil.rmtree(directory / "server" / "lib" / "bin", ignore_errors=True)
    return directory


def pack(directory: Path, output: Path, mcpb: Path, env: dict[str, str] | None = None) -> Path:
    """Validate the staged manifest and pack ``directory`` into ``output`` with the official CLI."""
    tool_env = node_tools.tool_env(env)
    _run([str(mcpb), "validate", str(directory / "manifest.json")], tool_env, f"mcpb validate {directory.name}")
    _run([str(mcpb), "pack", str(directory), str(output)], tool_env, f"mcpb pack {directory.name}")
    if not output.is_file():
        raise BundleError(f"mcpb pack did not write {output}")
    return output


def build(
    dist: Path, out: Path, find_links: list[Path] = (), env: dict[str, str] | None = None, mcpb: Path | None = None
) -> list[Path]:
    """A .mcpb file for every server in ``out``, from the release wheels in ``dist`` (plus ``find_links``)."""
    mcpb = mcpb or Path(os.environ.get("PLAINMCP_MCPB") or node_tools.paths()["mcpb"])
    out.mkdir(parents=True, exist_ok=True)
    staging = out / "staging"
    bundles = []
    for name in servers():
        directory = stage(name, staging, [dist, *find_links], env)
        version = json.loads((directory / "manifest.json").read_text())["version"]
        bundles.append(pack(directory, out / f"plainmcp-{name}-{version}-{platform_tag()}.mcpb", mcpb, env))
    return bundles


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dist", type=Path, default=ROOT / "dist", help="the release wheels (default dist/)")
    parser.add_argument("--out", type=Path, default=ROOT / "dist" / "mcpb", help="where the bundles go")
    parser.add_argument("--find-links", type=Path, action="append", default=[], help="more wheels (repeatable)")
    args = parser.parse_args(argv)
    try:
        node_tools.install()
        for path in build(args.dist, args.out, args.find_links):
            print(path)
    except (BundleError, node_tools.NodeToolsError) as error:
        print(f"bundle: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
