"""The attack suite through every tool and resource: nothing outside is read, listed, written or revealed."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import pytest
from plainmcp import MCPError, Server
from plainmcp.testing import connect_in_memory

from .conftest import SECRET, Tree

pytestmark = pytest.mark.anyio


def attack_paths(tree: Tree) -> list[str]:
    tree.link("file_link", tree.outside / "secret.txt")
    tree.link("dir_link", tree.outside)
    os.symlink(tree.outside / "dir", tree.root / "sub" / "chain2")
    tree.link("chain1", tree.root / "sub" / "chain2")
    tree.link("dangling", tree.outside / "new.txt")
    return [
        str(tree.outside / "secret.txt"),
        str(tree.outside),
        str(tree.evil / "secret.txt"),
        str(tree.evil),
        f"{tree.root}/../outside/secret.txt",
        "../outside/secret.txt",
        "sub/../../outside",
        "file_link",
        "dir_link",
        "dir_link/secret.txt",
        "chain1",
        "chain1/secret.txt",
        "dangling",
        "dir_link/new.txt",
        "hello.txt\x00../../outside/secret.txt",
        "/etc",
        "/",
    ]


def calls_for(path: str) -> list[tuple[str, dict[str, Any]]]:
    return [
        ("read_text_file", {"path": path}),
        ("read_text_file", {"path": path, "tail": 1}),
        ("read_multiple_files", {"paths": [path]}),
        ("read_media_file", {"path": path}),
        ("list_directory", {"path": path}),
        ("directory_tree", {"path": path}),
        ("search_files", {"path": path, "pattern": "*"}),
        ("search_content", {"path": path, "query": SECRET[:6]}),
        ("get_file_info", {"path": path}),
        ("write_file", {"path": path, "content": "pwned"}),
        ("write_file", {"path": path + "/pwned.txt", "content": "pwned"}),
        ("write_file", {"path": path, "content_base64": "cHduZWQ="}),
        ("append_file", {"path": path, "content": "pwned"}),
        ("append_file", {"path": path + "/pwned.txt", "content": "pwned"}),
        ("edit_file", {"path": path, "edits": [{"oldText": SECRET, "newText": "pwned"}]}),
        ("create_directory", {"path": path + "/pwned"}),
        ("move_file", {"source": path, "destination": "stolen"}),
        ("move_file", {"source": "hello.txt", "destination": path + "/pwned.txt"}),
        ("copy_file", {"source": path, "destination": "stolen"}),
        ("copy_file", {"source": "hello.txt", "destination": path + "/pwned.txt"}),
        ("delete_file", {"path": path, "recursive": True}),
    ]


def outside_state(tree: Tree) -> dict[str, bytes | None]:
    found: dict[str, bytes | None] = {}
    for base in (tree.outside, tree.evil):
        for directory, dirs, files in os.walk(base):
            for name in dirs:
                found[os.path.join(directory, name)] = None
            for name in files:
                found[os.path.join(directory, name)] = open(os.path.join(directory, name), "rb").read()
    return found


async def test_attacks_through_every_tool_touch_nothing_outside(make_server: Callable[..., Server], tree: Tree) -> None:
    paths = attack_paths(tree)
    before = outside_state(tree)
    leaks = (SECRET, str(tree.outside), str(tree.evil))
    async with connect_in_memory(make_server(allow_write=True, allow_delete=True)) as client:
        for path in paths:
            for name, arguments in calls_for(path):
                try:
                    result = await client.call_tool(name, arguments)
                except MCPError as error:
                    text = error.message + str(error.data)
                else:
                    text = str(result)
                for leak in leaks:
                    assert leak not in text, (name, path, text)
    assert outside_state(tree) == before
    assert not os.path.lexists(tree.outside / "new.txt")
    # Links inside may be moved or deleted (that touches the link, not its target), but no secret
    # was ever copied in: no regular file inside holds it.
    for directory, _, files in os.walk(tree.root):
        for name in files:
            path = os.path.join(directory, name)
            if not os.path.islink(path):
                assert SECRET not in open(path).read(), path


async def test_attacks_walks_never_list_or_search_outside(make_server: Callable[..., Server], tree: Tree) -> None:
    attack_paths(tree)
    async with connect_in_memory(make_server()) as client:
        for name, arguments in [
            ("directory_tree", {"path": "."}),
            ("search_files", {"path": ".", "pattern": "*secret*"}),
            ("search_content", {"path": ".", "query": SECRET}),
            ("list_directory", {"path": "."}),
        ]:
            result = await client.call_tool(name, arguments)
            assert SECRET not in str(result) and "secret.txt" not in str(result), name
        resources = await client.list_all_resources()
        assert not [r for r in resources if "secret" in r["uri"]]


async def test_attacks_resources_refuse_outside_uris_as_not_found(
    make_server: Callable[..., Server], tree: Tree
) -> None:
    paths = attack_paths(tree)
    uris = [
        (tree.outside / "secret.txt").as_uri(),
        (tree.root / "file_link").as_uri(),
        (tree.root / "dir_link" / "secret.txt").as_uri(),
        "file://evil.example/etc/passwd",
        "file:///etc/passwd",
        "file:" + str(tree.outside / "secret.txt"),
        "file:relative/hello.txt",
        (tree.root / "hello.txt").as_uri() + "%00",
    ]
    assert paths
    async with connect_in_memory(make_server()) as client:
        for uri in uris:
            with pytest.raises(MCPError) as missing:
                await client.read_resource(uri)
            assert missing.value.code == -32002, uri
            assert SECRET not in str(missing.value.data) and SECRET not in missing.value.message
