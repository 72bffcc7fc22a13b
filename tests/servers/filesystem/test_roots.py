"""Roots (issue 19): started with no directory, the server serves each client its own roots (both eras);
with the operator's directories, roots only ever narrow them. Real processes, real directories."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest
from plainmcp import connect_stdio

pytestmark = pytest.mark.anyio

MODERN = "2026-07-28"
VERSIONS = pytest.mark.parametrize("version", [None, MODERN], ids=["legacy", "modern"])


def argv(*directories: Path, extra: tuple[str, ...] = ()) -> list[str]:
    return [sys.executable, "-m", "plainmcp_filesystem", *map(str, directories), "--no-watch", *extra]


@pytest.fixture
def places(tmp_path: Path) -> dict[str, Path]:
    found = {name: tmp_path / name for name in ("project", "other", "secret")}
    for name, path in found.items():
        path.mkdir()
        (path / f"{name}.txt").write_text(f"in {name}\n")
    return found


def text(result: dict) -> str:
    return result["content"][0]["text"]


@VERSIONS
async def test_without_directories_the_client_roots_are_the_allowed_directories(
    places: dict[str, Path], version: str | None
) -> None:
    options = {"protocol_version": version} if version else {}
    roots = [
        {"uri": places["project"].as_uri()},
        {"uri": places["other"].as_uri()},
        {"uri": (places["project"] / "missing").as_uri()},
        {"uri": "https://example.com/not-a-file"},
    ]
    with anyio.fail_after(30):
        async with connect_stdio(argv(), stderr="discard", roots=roots, **options) as client:
            allowed = await client.call_tool("list_allowed_directories", {})
            assert allowed["structuredContent"]["directories"] == [str(places["project"]), str(places["other"])]
            assert text(await client.call_tool("read_text_file", {"path": "project.txt"})) == "in project\n"
            inside_other = await client.call_tool("read_text_file", {"path": str(places["other"] / "other.txt")})
            assert text(inside_other) == "in other\n"
            outside = await client.call_tool("read_text_file", {"path": str(places["secret"] / "secret.txt")})
            assert outside["isError"] and "in secret" not in text(outside)


@VERSIONS
async def test_without_directories_a_client_without_roots_is_told_why(
    places: dict[str, Path], version: str | None
) -> None:
    options = {"protocol_version": version} if version else {}
    with anyio.fail_after(30):
        async with connect_stdio(argv(), stderr="discard", **options) as client:
            refused = await client.call_tool("read_text_file", {"path": str(places["project"] / "project.txt")})
    assert refused["isError"] and "started without directories and the client offers no roots" in text(refused)


async def test_without_directories_changed_roots_apply_to_the_next_call(places: dict[str, Path]) -> None:
    with anyio.fail_after(30):
        async with connect_stdio(argv(), stderr="discard", roots=[{"uri": places["project"].as_uri()}]) as client:
            assert not (await client.call_tool("read_text_file", {"path": "project.txt"})).get("isError")
            await client.set_roots([{"uri": places["other"].as_uri()}])
            with anyio.fail_after(10):
                while True:  # the notification is handled asynchronously: the next calls see it
                    allowed = await client.call_tool("list_allowed_directories", {})
                    if allowed["structuredContent"]["directories"] == [str(places["other"])]:
                        break
                    await anyio.sleep(0.05)
            assert (await client.call_tool("read_text_file", {"path": str(places["project"] / "project.txt")}))[
                "isError"
            ]


@VERSIONS
async def test_with_directories_roots_only_narrow_them(places: dict[str, Path], version: str | None) -> None:
    """A client's root outside the operator's directories never widens them, in either era."""
    options = {"protocol_version": version} if version else {}
    roots = [{"uri": (places["project"]).as_uri()}, {"uri": places["secret"].as_uri()}]
    with anyio.fail_after(30):
        async with connect_stdio(
            argv(places["project"], places["other"], extra=("--use-roots",)), stderr="discard", roots=roots, **options
        ) as client:
            secret = await client.call_tool("read_text_file", {"path": str(places["secret"] / "secret.txt")})
            assert secret["isError"] and "in secret" not in text(secret)
            allowed = (await client.call_tool("list_allowed_directories", {}))["structuredContent"]["directories"]
    assert str(places["secret"]) not in allowed
    # Legacy sessions are narrowed to the roots; 2026-07-28 requests keep the operator's set.
    assert allowed == ([str(places["project"])] if version is None else [str(places["project"]), str(places["other"])])


async def test_without_directories_the_official_sdk_roots_are_served(places: dict[str, Path]) -> None:
    """Interoperability: the official Python SDK as the client, answering roots/list with its callback."""
    import mcp_types as types

    from tests.interop.sdk_client import connect

    async def list_roots(context: object) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri=places["project"].as_uri())])

    async with connect(argv(), list_roots_callback=list_roots) as conn:
        with anyio.fail_after(20):
            read = await conn.session.call_tool("read_text_file", {"path": "project.txt"})
            outside = await conn.session.call_tool("read_text_file", {"path": str(places["secret"] / "secret.txt")})
    assert not read.is_error and read.structured_content["content"] == "in project\n"
    assert outside.is_error
