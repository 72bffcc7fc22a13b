"""The core names no server: no file of the core's sources mentions a server of the repository by its
distribution or import name (``plainmcp-sqlite``, ``plainmcp_sqlite``; environment variables such as
``PLAINMCP_SQLITE_DB`` too, as the check ignores case). A server's demo scene and stand-ins are its own,
found through the ``plainmcp.scenes`` entry point (tests/cli/test_demo_discovery.py)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORE_SOURCES = ROOT / "packages" / "plainmcp" / "src"


def server_names() -> set[str]:
    """Every server's distribution name, from servers/*/pyproject.toml."""
    return {
        tomllib.loads(path.read_text(encoding="utf-8"))["project"]["name"]
        for path in (ROOT / "servers").glob("*/pyproject.toml")
    }


def test_core_sources_name_no_server() -> None:
    names = server_names()
    assert {
        "plainmcp-filesystem",
        "plainmcp-sqlite",
        "plainmcp-weather",
        "plainmcp-prompts",
        "plainmcp-everything",
    } <= names
    # plainmcp-sqlite, plainmcp_sqlite, PLAINMCP_SQLITE_...: the name with either separator, any case.
    pattern = re.compile("|".join(re.escape(name).replace("\\-", "[-_]") for name in sorted(names)), re.IGNORECASE)
    files = [path for path in CORE_SOURCES.rglob("*") if path.is_file() and "__pycache__" not in path.parts]
    assert any(path.name == "demo.py" for path in files)
    naming = [
        f"{path.relative_to(ROOT)}:{number}: {match.group(0)}"
        for path in files
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
        for match in [pattern.search(line)]
        if match
    ]
    assert naming == []


def test_every_server_registers_a_scene_of_its_own() -> None:
    # The demo plays what the servers register: each has a scene module in its own package.
    for pyproject in sorted((ROOT / "servers").glob("*/pyproject.toml")):
        project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
        scenes = project.get("entry-points", {}).get("plainmcp.scenes", {})
        assert list(scenes) == [pyproject.parent.name], pyproject
        module, _, function = scenes[pyproject.parent.name].partition(":")
        source = pyproject.parent / "src" / (module.replace(".", "/") + ".py")
        assert source.is_file(), source
        assert f"async def {function}(stage: demo.Stage)" in source.read_text(encoding="utf-8")
