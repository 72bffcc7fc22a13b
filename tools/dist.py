#!/usr/bin/env python3
"""Build the release files: a wheel and an sdist of every package, checked. Run with the dev venv's Python.

    python3 dev.py dist                 # into dist/ (emptied first)
    python3 dev.py dist --version 0.1.0 # refuse to build unless every package has that version (a release tag)
    python tools/dist.py --out DIR      # elsewhere (the packaging tests build into a temporary directory)

Each package is built by `python -m build --installer uv`: the sdist first, then the wheel from that sdist,
which proves that every sdist builds on its own (hatch_build.py ships in it). uv makes the isolated build
environments in a fraction of pip's time. PLAINMCP_RELEASE=1 keeps the servers' dependency on the core a
versioned one (no file:// reference to this checkout). Then `twine check --strict` runs over the files, and
each file's metadata is read back to refuse any direct reference (PyPI rejects them, and they would point at
this machine).
"""

from __future__ import annotations

import argparse
import email.parser
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # its sibling modules, also when loaded by path
import workspace

ROOT = workspace.ROOT
DIST = ROOT / "dist"


class DistError(RuntimeError):
    """A package did not build, or its files are not fit for a release."""


def projects() -> list[Path]:
    """Every package directory (the workspace members), the core first."""
    return list(workspace.load(ROOT).members)


def mismatched_versions(expected: str) -> list[str]:
    """The packages whose declared version is not ``expected`` (the release tag without its ``v``)."""
    found = [(workspace.project_name(p), workspace.declared_version(p)) for p in projects()]
    return [f"{name} is {version}" for name, version in found if version != expected]


def metadata(path: Path) -> email.message.Message:
    """The core metadata of a wheel (METADATA) or an sdist (PKG-INFO)."""
    if path.name.endswith(".whl"):
        with zipfile.ZipFile(path) as archive:
            name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
            text = archive.read(name).decode()
    else:
        with tarfile.open(path) as archive:
            member = next(m for m in archive.getmembers() if m.name.count("/") == 1 and m.name.endswith("/PKG-INFO"))
            extracted = archive.extractfile(member)
            assert extracted is not None
            text = extracted.read().decode()
    return email.parser.Parser().parsestr(text)


def direct_references(path: Path) -> list[str]:
    """The Requires-Dist entries of a release file that name a URL instead of a version."""
    return [spec for spec in metadata(path).get_all("Requires-Dist") or [] if "@" in spec.split(";")[0]]


def build(out: Path, env: dict[str, str] | None = None, python: str = sys.executable) -> list[Path]:
    """Build every package into ``out`` (emptied first) and check the files; returns them."""
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    import app_bridge  # the core's sdist and wheel ship the MCP Apps host bridge, bundled from npm first

    app_bridge.build()
    build_env = {**(os.environ if env is None else env), "PLAINMCP_RELEASE": "1"}
    for project in projects():
        command = [python, "-m", "build", "--installer", "uv", "--outdir", str(out), str(project)]
        result = subprocess.run(command, env=build_env, capture_output=True, text=True)
        if result.returncode != 0:
            raise DistError(
                f"{project.relative_to(ROOT)} did not build:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
            )
    files = sorted(out.glob("*.whl")) + sorted(out.glob("*.tar.gz"))
    if len(files) != 2 * len(projects()):
        raise DistError(f"expected a wheel and an sdist per package, found {[f.name for f in files]}")
    check = subprocess.run(
        [python, "-m", "twine", "check", "--strict", *map(str, files)], env=build_env, capture_output=True, text=True
    )
    if check.returncode != 0:
        raise DistError(f"twine check failed:\n{check.stdout}\n{check.stderr}")
    for path in files:
        if found := direct_references(path):
            raise DistError(f"{path.name} has direct references: {found}")
    return files


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DIST, help="the output directory (emptied first; default dist/)")
    parser.add_argument("--version", help="the version every package must have (the release tag)")
    args = parser.parse_args(argv)
    if args.version and (wrong := mismatched_versions(args.version)):
        print(f"dist: the tag says {args.version}, but {', '.join(wrong)}", file=sys.stderr)
        return 1
    try:
        files = build(args.out)
    except DistError as error:
        print(f"dist: {error}", file=sys.stderr)
        return 1
    for path in files:
        print(path)
    print(f"dist: {len(files)} files in {args.out}, twine check passed, no direct references", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
