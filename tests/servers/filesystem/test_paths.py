"""The access policy on its own: the path attack suite."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from plainmcp_filesystem.anchored import open_file
from plainmcp_filesystem.paths import MAX_PATH_CHARS, AccessPolicy, PathChanged, PathDenied, PathNotFound

from .conftest import Tree


@pytest.fixture
def policy(tree: Tree) -> AccessPolicy:
    return AccessPolicy([str(tree.root)])


def assert_denied_quietly(policy: AccessPolicy, tree: Tree, path: str, **options: bool) -> None:
    with pytest.raises(PathDenied) as denied:
        policy.resolve(path, **options)
    assert str(tree.outside) not in str(denied.value)
    assert str(tree.evil) not in str(denied.value)


def test_policy_allows_paths_inside(policy: AccessPolicy, tree: Tree) -> None:
    assert policy.resolve(str(tree.root / "hello.txt")).real == os.path.realpath(tree.root / "hello.txt")
    assert policy.resolve(str(tree.root)).real == os.path.realpath(tree.root)


def test_policy_resolves_relative_paths_against_the_allowed_directory_not_cwd(
    policy: AccessPolicy, tree: Tree, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tree.outside)
    assert policy.resolve("hello.txt").real == os.path.realpath(tree.root / "hello.txt")
    with pytest.raises(PathNotFound):
        policy.resolve("secret.txt")  # exists in the cwd, but relative paths never mean the cwd


@pytest.mark.parametrize(
    "template",
    [
        "{root}/../outside/secret.txt",
        "{root}/sub/../../outside/secret.txt",
        "{root}/sub/deep/../../../outside/secret.txt",
        "{root}/./../outside/secret.txt",
        "../outside/secret.txt",
        "sub/../../outside/secret.txt",
        "{root}/..",
        "..",
        "{root}/sub/..//..//outside",
    ],
)
def test_policy_refuses_dot_dot_in_every_position(policy: AccessPolicy, tree: Tree, template: str) -> None:
    assert_denied_quietly(policy, tree, template.format(root=tree.root))
    assert_denied_quietly(policy, tree, template.format(root=tree.root), for_write=True, must_exist=False)


def test_policy_allows_dot_dot_that_stays_inside(policy: AccessPolicy, tree: Tree) -> None:
    assert policy.resolve(f"{tree.root}/sub/../hello.txt").real == os.path.realpath(tree.root / "hello.txt")


@pytest.mark.parametrize("path", ["/etc/passwd", "/", "/tmp", "/proc/self/environ"])
def test_policy_refuses_absolute_paths_outside(policy: AccessPolicy, tree: Tree, path: str) -> None:
    assert_denied_quietly(policy, tree, path)


def test_policy_refuses_the_prefix_sibling(policy: AccessPolicy, tree: Tree) -> None:
    assert_denied_quietly(policy, tree, str(tree.evil / "secret.txt"))
    assert_denied_quietly(policy, tree, str(tree.evil))
    assert_denied_quietly(policy, tree, str(tree.root) + "_evil/secret.txt", for_write=True, must_exist=False)


def test_policy_refuses_symlinks_pointing_out(policy: AccessPolicy, tree: Tree) -> None:
    tree.link("file_link", tree.outside / "secret.txt")
    tree.link("dir_link", tree.outside)
    assert_denied_quietly(policy, tree, str(tree.root / "file_link"))
    assert_denied_quietly(policy, tree, str(tree.root / "dir_link"))
    assert_denied_quietly(policy, tree, str(tree.root / "dir_link" / "secret.txt"))
    assert_denied_quietly(policy, tree, "dir_link/dir/secret.txt")


def test_policy_refuses_symlink_chains_pointing_out(policy: AccessPolicy, tree: Tree) -> None:
    os.symlink(tree.outside / "secret.txt", tree.root / "sub" / "hop2")
    tree.link("hop1", tree.root / "sub" / "hop2")
    assert_denied_quietly(policy, tree, str(tree.root / "hop1"))


def test_policy_refuses_new_files_under_a_link_pointing_out(policy: AccessPolicy, tree: Tree) -> None:
    tree.link("dir_link", tree.outside)
    assert_denied_quietly(policy, tree, str(tree.root / "dir_link" / "new.txt"), for_write=True, must_exist=False)
    assert_denied_quietly(policy, tree, str(tree.root / "dir_link" / "a" / "b"), must_exist=False)


def test_policy_refuses_a_dangling_link_pointing_out(policy: AccessPolicy, tree: Tree) -> None:
    tree.link("dangling", tree.outside / "not-yet.txt")
    assert_denied_quietly(policy, tree, str(tree.root / "dangling"), for_write=True, must_exist=False)


def test_policy_allows_links_that_stay_inside(policy: AccessPolicy, tree: Tree) -> None:
    tree.link("inside_link", tree.root / "sub" / "notes.md")
    assert policy.resolve(str(tree.root / "inside_link")).real == os.path.realpath(tree.root / "sub" / "notes.md")


def test_policy_refuses_a_symlink_loop(policy: AccessPolicy, tree: Tree) -> None:
    tree.link("loop_a", tree.root / "loop_b")
    tree.link("loop_b", tree.root / "loop_a")
    with pytest.raises(PathDenied):
        policy.resolve(str(tree.root / "loop_a"))


@pytest.mark.parametrize("path", ["hello.txt\x00/../../outside/secret.txt", "\x00", "sub/\x00"])
def test_policy_refuses_nul_bytes(policy: AccessPolicy, tree: Tree, path: str) -> None:
    assert_denied_quietly(policy, tree, path)


@pytest.mark.parametrize("path", ["", None, 7, ["hello.txt"]])
def test_policy_refuses_what_is_not_a_path(policy: AccessPolicy, tree: Tree, path: object) -> None:
    with pytest.raises(PathDenied):
        policy.resolve(path)


@pytest.mark.parametrize(
    "name",
    [
        "\uff0e\uff0e/\uff0e\uff0e/outside/secret.txt",  # fullwidth full stops
        "\u2024\u2024/outside/secret.txt",  # one dot leader
        "..\u2215outside\u2215secret.txt",  # division slash
        "..\u2044outside",  # fraction slash
        "\u0430llowed",  # Cyrillic a
    ],
)
def test_policy_treats_unicode_lookalikes_as_plain_names(policy: AccessPolicy, tree: Tree, name: str) -> None:
    # Never normalized: these are names inside the allowed directory, which do not exist.
    with pytest.raises(PathNotFound) as missing:
        policy.resolve(name)
    assert str(tree.outside) not in str(missing.value)
    assert policy.resolve(name, must_exist=False).real.startswith(os.path.realpath(tree.root) + os.sep)


def test_policy_refuses_very_long_paths(policy: AccessPolicy, tree: Tree) -> None:
    assert_denied_quietly(policy, tree, str(tree.root / ("a/" * (MAX_PATH_CHARS // 2 + 1))))
    with pytest.raises((PathDenied, PathNotFound)):
        policy.resolve(str(tree.root / ("x" * 300)))  # one name over NAME_MAX


def test_policy_never_opens_a_fifo(policy: AccessPolicy, tree: Tree) -> None:
    fifo = tree.root / "pipe"
    os.mkfifo(fifo)
    real = policy.resolve(str(fifo))  # it may be named (listed, described) ...
    with pytest.raises(PathDenied, match="FIFO"):
        open_file(real)  # ... but never opened: that would block until a writer came
    with pytest.raises(PathDenied):
        policy.resolve(str(fifo), for_write=True)


def test_policy_never_opens_a_device(tree: Tree) -> None:
    policy = AccessPolicy(["/dev"])
    with pytest.raises(PathDenied, match="device"):
        open_file(policy.resolve("/dev/null"))


def test_policy_open_file_refuses_a_link_swapped_in_after_resolve(policy: AccessPolicy, tree: Tree) -> None:
    place = policy.resolve(str(tree.root / "hello.txt"))
    os.unlink(place.real)
    os.symlink(tree.outside / "secret.txt", place.real)
    with pytest.raises(PathDenied):
        open_file(place)


def test_policy_open_file_refuses_a_parent_swapped_for_a_link(policy: AccessPolicy, tree: Tree) -> None:
    place = policy.resolve(str(tree.root / "sub" / "notes.md"))
    os.rename(tree.root / "sub", tree.root / "moved")
    (tree.outside / "notes.md").write_text("outside")
    os.symlink(tree.outside, tree.root / "sub")
    with pytest.raises(PathChanged):
        open_file(place)


def test_policy_refuses_to_replace_an_allowed_directory(policy: AccessPolicy, tree: Tree) -> None:
    with pytest.raises(PathDenied):
        policy.resolve(str(tree.root), for_write=True)
    with pytest.raises(PathDenied):
        policy.resolve_entry(str(tree.root))


def test_policy_resolve_entry_keeps_a_link_itself(policy: AccessPolicy, tree: Tree) -> None:
    link = tree.link("file_link", tree.outside / "secret.txt")
    assert policy.resolve_entry(str(link)).real == os.path.join(os.path.realpath(tree.root), "file_link")
    tree.link("dir_link", tree.outside)
    with pytest.raises(PathDenied):
        policy.resolve_entry(str(tree.root / "dir_link" / "secret.txt"))


def test_policy_matches_a_symlinked_allowed_directory_in_both_forms(tree: Tree) -> None:
    alias = tree.base / "alias"
    os.symlink(tree.root, alias)
    policy = AccessPolicy([str(alias)])
    assert policy.resolve(str(alias / "hello.txt")).real == os.path.realpath(tree.root / "hello.txt")
    assert policy.resolve(str(tree.root / "hello.txt")).real == os.path.realpath(tree.root / "hello.txt")
    assert policy.display(os.path.realpath(tree.root / "hello.txt")) == str(alias / "hello.txt")


def test_policy_narrowed_by_client_roots_never_widens(policy: AccessPolicy, tree: Tree) -> None:
    narrowed = policy.narrowed([str(tree.root / "sub"), str(tree.outside), "relative/x"])
    assert [root.real for root in narrowed.roots] == [os.path.realpath(tree.root / "sub")]
    with pytest.raises(PathDenied):
        narrowed.resolve(str(tree.root / "hello.txt"))
    with pytest.raises(PathDenied):
        narrowed.resolve(str(tree.outside / "secret.txt"))
    wider = policy.narrowed([str(tree.base)])
    assert [root.real for root in wider.roots] == [os.path.realpath(tree.root)]
    with pytest.raises(PathDenied):
        policy.narrowed([]).resolve(str(tree.root / "hello.txt"))


def test_policy_refuses_a_missing_allowed_directory(tree: Tree) -> None:
    with pytest.raises(ValueError):
        AccessPolicy([str(tree.base / "missing")])
    with pytest.raises(ValueError):
        AccessPolicy([str(tree.root / "hello.txt")])


def test_policy_with_root_slash_contains_everything(tmp_path: Path) -> None:
    policy = AccessPolicy(["/"])
    assert policy.contains("/etc")
    assert policy.resolve(str(tmp_path)).real == os.path.realpath(tmp_path)


def test_policy_follows_relative_links_inside_component_wise(policy: AccessPolicy, tree: Tree) -> None:
    os.symlink("../hello.txt", tree.root / "sub" / "up")
    os.symlink("deep", tree.root / "sub" / "alias")
    assert policy.resolve(str(tree.root / "sub" / "up")).parts == ("hello.txt",)
    assert policy.resolve("sub/alias/code.py").parts == ("sub", "deep", "code.py")
    os.symlink("../../outside/secret.txt", tree.root / "sub" / "escape")
    assert_denied_quietly(policy, tree, "sub/escape")


def test_policy_follows_a_link_from_one_allowed_directory_into_another(tree: Tree) -> None:
    policy = AccessPolicy([str(tree.root), str(tree.outside / "dir")])
    os.symlink(tree.outside / "dir", tree.root / "other")
    place = policy.resolve("other/secret.txt")
    assert place.real == os.path.realpath(tree.outside / "dir" / "secret.txt")
    assert_denied_quietly(AccessPolicy([str(tree.root)]), tree, "other/secret.txt")


def test_policy_refuses_a_link_that_changes_into_a_directory_during_the_walk(policy: AccessPolicy, tree: Tree) -> None:
    # The walk opens each directory with O_NOFOLLOW relative to its parent's descriptor: a
    # directory that is a link by the time it is opened is refused, never followed.
    place = policy.resolve("sub/deep/code.py")
    os.rename(tree.root / "sub", tree.root / "sub_moved")
    os.symlink(tree.outside, tree.root / "sub")
    os.mkdir(tree.outside / "deep")
    (tree.outside / "deep" / "code.py").write_text("outside")
    with pytest.raises(PathChanged):
        open_file(place)
