"""Walks and glob patterns."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from plainmcp_filesystem.anchored import DIR_FLAGS
from plainmcp_filesystem.globs import Excluder, compile_glob
from plainmcp_filesystem.paths import PathDenied
from plainmcp_filesystem.walk import Entry, walk

from .conftest import SECRET, Tree


def walk_path(path: str, **options: object) -> Iterator[Entry]:
    """Walk below ``path``, opened the way the server opens a directory (no link followed)."""
    fd = os.open(path, DIR_FLAGS)
    try:
        yield from walk(fd, **options)  # type: ignore[arg-type]
    finally:
        os.close(fd)


def names(root: str, **options: object) -> list[str]:
    return [entry.relative for entry in walk_path(root, max_depth=options.pop("max_depth", 64), **options)]


def test_walk_lists_parents_before_children_sorted(tree: Tree) -> None:
    assert names(str(tree.root)) == [".hidden", "hello.txt", "sub", "sub/deep", "sub/deep/code.py", "sub/notes.md"]


def test_walk_honours_depth_hidden_and_excludes(tree: Tree) -> None:
    assert names(str(tree.root), max_depth=1) == [".hidden", "hello.txt", "sub"]
    assert ".hidden" not in names(str(tree.root), include_hidden=False)
    assert names(str(tree.root), exclude=Excluder(["deep"])) == [".hidden", "hello.txt", "sub", "sub/notes.md"]


def test_walk_reports_links_but_never_follows_them(tree: Tree) -> None:
    tree.link("out", tree.outside)
    found = {entry.relative: entry.kind for entry in walk_path(str(tree.root), max_depth=64)}
    assert found["out"] == "symlink"
    assert not any(path.startswith("out/") for path in found)


def test_walk_skips_a_directory_swapped_for_a_link_during_the_walk(tree: Tree) -> None:
    entries = walk_path(str(tree.root), max_depth=64)
    seen = []
    for entry in entries:
        seen.append(entry.relative)
        if entry.relative == "sub":
            # The walk has listed "sub" as a directory; now an attacker swaps it for a link out.
            os.rename(tree.root / "sub", tree.root / "sub_moved")
            os.symlink(tree.outside, tree.root / "sub")
    assert "sub/secret.txt" not in seen
    assert not any(path.startswith("sub/") for path in seen)


def test_walk_opened_files_refuse_a_link_swapped_in(tree: Tree) -> None:
    for entry in walk_path(str(tree.root), max_depth=1):
        if entry.relative == "hello.txt":
            os.unlink(tree.root / "hello.txt")
            os.symlink(tree.outside / "secret.txt", tree.root / "hello.txt")
            with pytest.raises(PathDenied):
                entry.open()


def test_walk_of_a_file_or_link_is_refused(tree: Tree) -> None:
    fd = os.open(tree.root / "hello.txt", os.O_RDONLY)
    try:
        with pytest.raises(PathDenied):
            list(walk(fd, max_depth=1))
    finally:
        os.close(fd)
    link = tree.link("out", tree.outside)
    with pytest.raises(OSError):
        list(walk_path(str(link), max_depth=1))


def test_walk_entries_never_carry_outside_content(tree: Tree) -> None:
    tree.link("out", tree.outside / "secret.txt")
    for entry in walk_path(str(tree.root), max_depth=64):
        if entry.kind == "file":
            fd = entry.open()
            with open(fd, "rb") as file:
                assert SECRET.encode() not in file.read()


@pytest.mark.parametrize(
    ("pattern", "relative", "expected"),
    [
        ("*.py", "sub/deep/code.py", True),
        ("*.py", "code.pyc", False),
        ("node_modules", "a/node_modules", True),
        ("src/**/test_*.py", "src/a/b/test_x.py", True),
        ("src/**/test_*.py", "src/test_x.py", True),
        ("src/*.py", "src/a/x.py", False),
        ("build/**", "build/x/y", True),
        ("?.txt", "a.txt", True),
        ("[ab].txt", "c.txt", False),
        ("[!ab].txt", "c.txt", True),
        ("*", ".env", True),
        ("build/**", "build", False),
        ("**/x.py", "x.py", True),
        ("**/x.py", "a/b/x.py", True),
        ("a/**/b/**/c", "a/b/c", True),
        ("a/**/b/**/c", "a/x/b/y/z/c", True),
        ("a/**/b/**/c", "a/x/y/c", False),
        ("a*b*c", "aXbYc", True),
        ("a*b*c", "abcb", False),
        ("*ab*ab", "xabab", True),
        ("*aab", "aaab", True),
        ("[]]x", "]x", True),
        ("[!]]x", "]x", False),
        ("[a-c]", "b", True),
        ("[a-c]", "-", False),
        ("[-a]", "-", True),
        ("[", "[", True),
        ("a?c", "a/c", False),
        ("(x).+", "(x).+", True),
    ],
)
def test_glob_matches_names_and_paths(pattern: str, relative: str, expected: bool) -> None:
    assert compile_glob(pattern).matches(relative, relative.rsplit("/", 1)[-1]) is expected


def test_glob_refuses_an_empty_pattern() -> None:
    with pytest.raises(ValueError):
        compile_glob(" ")


def test_glob_crafted_patterns_match_in_linear_time() -> None:
    # With one regex per pattern, each of these takes longer than the test suite.
    name = "a" * 250
    assert compile_glob("*a" * 120 + "b").matches(name, name) is False
    assert compile_glob("*a" * 120).matches(name, name) is True
    parts = "/".join(["a"] * 60)
    assert compile_glob("**/a/**/a/**/a/**/a/**/b").matches(parts, "a") is False


def test_glob_refuses_patterns_over_the_caps() -> None:
    with pytest.raises(ValueError, match="at most 1000 characters"):
        compile_glob("*" * 1001)
    with pytest.raises(ValueError, match="segments"):
        compile_glob("/".join(["a"] * 65))
