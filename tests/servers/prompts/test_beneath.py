"""Opening files below a library directory through directory descriptors: links inside are followed,
links and ``..`` leading out are refused, folders are never entered through a link."""

from __future__ import annotations

import os

import pytest
from plainmcp_prompts import beneath

from .support import write


@pytest.fixture
def root(tmp_path):
    library = tmp_path / "lib"
    write(library, "a/b/file.txt", "inside")
    write(tmp_path, "outside/file.txt", "OUTSIDE")
    return library


def read(root, relative: str) -> tuple[str, str]:
    fd, resolved = beneath.open_below(str(root), relative)
    try:
        data = beneath.read_regular(fd, 1000)
    finally:
        os.close(fd)
    assert data is not None
    return resolved, data.decode()


def test_open_below_reads_a_file_and_names_its_path(root):
    assert read(root, "a/b/file.txt") == ("a/b/file.txt", "inside")
    assert read(root, "a/./b/../b/file.txt") == ("a/b/file.txt", "inside")


def test_links_inside_the_library_are_followed_and_resolved(root):
    os.symlink("b/file.txt", root / "a/rel-link.txt")
    os.symlink("a/b", root / "folder-link")
    os.symlink(root / "a/b/file.txt", root / "abs-link.txt")  # absolute, but inside
    assert read(root, "a/rel-link.txt") == ("a/b/file.txt", "inside")
    assert read(root, "folder-link/file.txt") == ("a/b/file.txt", "inside")
    assert read(root, "abs-link.txt") == ("a/b/file.txt", "inside")
    # ".." after a link goes back from where the link led (a/b -> a), as the kernel would.
    write(root, "a/sibling.txt", "sibling")
    assert read(root, "folder-link/../sibling.txt") == ("a/sibling.txt", "sibling")


@pytest.mark.parametrize(
    ("link", "target"),
    [
        ("out.txt", "../outside/file.txt"),
        ("a/deep-out.txt", "../../outside/file.txt"),
        ("abs-out.txt", "{outside}/file.txt"),
        ("folder-out", "{outside}"),
    ],
)
def test_links_leading_out_are_refused(root, link, target):
    os.symlink(target.format(outside=root.parent / "outside"), root / link)
    relative = link + "/file.txt" if link == "folder-out" else link
    with pytest.raises(beneath.OutsideError):
        beneath.open_below(str(root), relative)


def test_dotdot_above_the_root_is_refused(root):
    with pytest.raises(beneath.OutsideError):
        beneath.open_below(str(root), "a/../../outside/file.txt")


def test_a_loop_of_links_ends(root):
    os.symlink("two", root / "one")
    os.symlink("one", root / "two")
    with pytest.raises(beneath.OutsideError):
        beneath.open_below(str(root), "one")


def test_missing_files_and_folders_are_os_errors(root):
    with pytest.raises(FileNotFoundError):
        beneath.open_below(str(root), "a/nothing.txt")
    with pytest.raises(OSError):
        beneath.open_below(str(root), "a/b/file.txt/under-a-file")


def test_walk_lists_files_and_links_and_never_enters_a_folder_link(root):
    write(root, "a/b/p.md", "P")
    write(root, ".hidden/h.md", "H")
    write(root.parent, "outside/o.md", "O")
    os.symlink(root.parent / "outside", root / "folder-out")
    os.symlink("a/b/p.md", root / "link.md")
    errors: list[str] = []
    entries = list(beneath.walk(str(root), 8, lambda path, error: errors.append(path)))
    assert [(e.path, e.link) for e in entries] == [
        ("a/b/file.txt", False),
        ("a/b/p.md", False),
        ("folder-out", True),
        ("link.md", True),
    ]
    assert errors == []


def test_walk_stops_at_the_depth_limit(root):
    assert [e.path for e in beneath.walk(str(root), 1, lambda *_: None)] == []
    assert [e.path for e in beneath.walk(str(root), 2, lambda *_: None)] == ["a/b/file.txt"]


def test_an_absolute_link_through_the_roots_own_link_counts_as_inside(root, tmp_path):
    os.symlink(root, tmp_path / "lib-link")
    os.symlink(tmp_path / "lib-link" / "a/b/file.txt", root / "via-root-link.txt")
    assert read(tmp_path / "lib-link", "via-root-link.txt") == ("a/b/file.txt", "inside")
