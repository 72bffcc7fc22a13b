"""Fixtures: a real temporary tree with an allowed directory and things outside it to attack."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from plainmcp import Server
from plainmcp_filesystem.config import Config
from plainmcp_filesystem.server import build_server

SECRET = "TOP-SECRET-CONTENT-4471"


class Tree:
    """``root`` is allowed; ``outside`` and ``evil`` (the prefix sibling ``root_evil``) are not."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.root = base / "allowed"
        self.evil = base / "allowed_evil"
        self.outside = base / "outside"
        for directory in (self.root / "sub" / "deep", self.evil, self.outside / "dir"):
            directory.mkdir(parents=True)
        (self.root / "hello.txt").write_text("line 1\nline 2\nline 3\n")
        (self.root / "sub" / "notes.md").write_text("# Notes\nfind me here\n")
        (self.root / "sub" / "deep" / "code.py").write_text("def f():\n    return 1\n")
        (self.root / ".hidden").write_text("hidden\n")
        (self.evil / "secret.txt").write_text(SECRET)
        (self.outside / "secret.txt").write_text(SECRET)
        (self.outside / "dir" / "secret.txt").write_text(SECRET)

    def link(self, name: str, target: Path | str) -> Path:
        path = self.root / name
        os.symlink(target, path)
        return path


@pytest.fixture
def tree(tmp_path: Path) -> Tree:
    return Tree(tmp_path)


@pytest.fixture
def make_server(tree: Tree) -> Callable[..., Server]:
    def make(**options: object) -> Server:
        options.setdefault("watch", False)
        return build_server(Config(roots=(str(tree.root),), **options))  # type: ignore[arg-type]

    return make


def text_of(result: dict) -> str:
    return "\n".join(block.get("text", "") for block in result.get("content", []))
