"""The root README's "Repository layout" matches the tree: every tracked top-level entry is listed, every listed
path exists, every package (workspace member) is listed, and the tests line names exactly the folders of tests/."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from .support import ROOT, load

workspace = load(Path("tools/workspace.py"))

MARKER = "<!-- docs: tested by: tests/devenv/test_layout.py::test_readme_layout_lists_the_tree_exactly -->"


def layout() -> dict[str, str]:
    """The layout block's lines: path -> description."""
    section = (ROOT / "README.md").read_text().split("\n## Repository layout\n", 1)[1].split("\n## ", 1)[0]
    assert MARKER in section, "the layout block is marked as tested by this file"
    block = section.split("```\n", 1)[1].split("```", 1)[0]
    return dict(re.match(r"(\S+)\s*(.*)", line).groups() for line in block.splitlines() if line.strip())


def tracked() -> list[str]:
    return subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()


def test_readme_layout_lists_the_tree_exactly():
    listed = layout()
    top_level = {path.split("/")[0] for path in tracked()}
    assert {path.rstrip("/").split("/")[0] for path in listed} == top_level
    for path in listed:
        matches = list(ROOT.glob(re.sub(r"<\w+>", "*", path.rstrip("/"))))
        assert matches, f"the README lists {path}, which does not exist"
        assert all(match.is_dir() == path.endswith("/") for match in matches), f"{path}: a folder ends with /"


def test_readme_layout_names_every_folder_of_tests():
    named = set(re.findall(r"(\w+)/", layout()["tests/"]))
    folders = {path.split("/")[1] for path in tracked() if path.startswith("tests/") and path.count("/") >= 2}
    assert named == folders


def test_readme_layout_lists_every_package():
    patterns = [re.sub(r"<\w+>", "*", path.rstrip("/")) for path in layout()]
    for member in workspace.load(ROOT).members:
        relative = member.relative_to(ROOT)
        assert any(
            relative.match(pattern) and len(relative.parts) == len(Path(pattern).parts) for pattern in patterns
        ), f"{relative}/ is a package the layout does not list"
