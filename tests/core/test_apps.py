"""MCP Apps in the core: views as ``ui://`` resources, tools' ``_meta.ui``, and clients without the extension
seeing exactly what they saw before (both eras, through the in-memory pair); the view-side helper a view
inlines (``app_view_script``, ``app_view_document``: its policy, its refusals, and the wheel that ships it)."""

from __future__ import annotations

import base64
import hashlib
import re
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest
from plainmcp import (
    APP_MIME,
    UI_EXTENSION,
    ErrorCode,
    MCPError,
    Server,
    add_app_view,
    app_tool_meta,
    app_view_document,
    app_view_script,
)
from plainmcp.testing import connect_in_memory

pytestmark = pytest.mark.anyio

ERAS = ["2025-11-25", "2026-07-28"]
VIEW = "ui://demo/chart"
HTML = "<!doctype html><html><head><title>chart</title></head><body>chart</body></html>"
APPS = {UI_EXTENSION: {"mimeTypes": [APP_MIME]}}


def _server(*, with_views: bool) -> Server:
    """The same tools and resources, with or without their views (the "before" and "after" of a server)."""
    server = Server("apps-demo", "1")

    @server.tool(meta=app_tool_meta(VIEW) if with_views else None)
    async def chart(ctx: Any, args: dict[str, Any]) -> dict[str, Any]:
        """Numbers to chart."""
        return {"values": [1, 2, 3]}

    @server.tool(meta={"io.example/other": 1, **(app_tool_meta(VIEW) if with_views else {})})
    async def tagged(ctx: Any, args: dict[str, Any]) -> str:
        """A tool with metadata of its own."""
        return "tagged"

    @server.resource("file:///notes.txt", mime_type="text/plain")
    async def notes(ctx: Any, uri: str) -> str:
        """Notes."""
        return "notes"

    if with_views:

        @server.tool(meta=app_tool_meta(VIEW, visibility=["app"]))
        async def next_page(ctx: Any, args: dict[str, Any]) -> str:
            """Only the view calls this."""
            return "page 2"

        add_app_view(
            server,
            VIEW,
            HTML,
            name="chart",
            title="Chart",
            description="A chart of the numbers",
            csp={"connectDomains": []},
            permissions=["clipboardWrite"],
            prefers_border=True,
        )
    return server


async def _error(awaitable: Any) -> MCPError:
    with pytest.raises(MCPError) as raised:
        await awaitable
    return raised.value


@pytest.mark.parametrize("version", ERAS)
async def test_apps_view_is_listed_and_read_with_its_ui_meta(version: str) -> None:
    ui = {"csp": {"connectDomains": []}, "permissions": {"clipboardWrite": {}}, "prefersBorder": True}
    async with connect_in_memory(_server(with_views=True), protocol_version=version, extensions=APPS) as client:
        assert client.server_capabilities["extensions"] == {UI_EXTENSION: {}}
        listed = {resource["uri"]: resource for resource in await client.list_all_resources()}
        assert listed[VIEW] == {
            "uri": VIEW,
            "name": "chart",
            "title": "Chart",
            "description": "A chart of the numbers",
            "mimeType": APP_MIME,
            "size": len(HTML),
            "_meta": {"ui": ui},
        }
        read = await client.read_resource(VIEW)
        assert read["contents"] == [{"uri": VIEW, "mimeType": APP_MIME, "text": HTML, "_meta": {"ui": ui}}]


@pytest.mark.parametrize("version", ERAS)
async def test_apps_tools_carry_ui_meta_for_a_client_that_took_it_up(version: str) -> None:
    async with connect_in_memory(_server(with_views=True), protocol_version=version, extensions=APPS) as client:
        tools = {tool["name"]: tool for tool in await client.list_all_tools()}
        assert tools["chart"]["_meta"] == {
            "ui": {"resourceUri": VIEW, "visibility": ["model", "app"]},
            "ui/resourceUri": VIEW,
        }
        assert tools["tagged"]["_meta"]["io.example/other"] == 1
        # The app-only tool is listed to the host (which keeps it out of the agent's list) and callable.
        assert tools["next_page"]["_meta"]["ui"]["visibility"] == ["app"]
        assert (await client.call_tool("next_page", {}))["content"][0]["text"] == "page 2"


@pytest.mark.parametrize("version", ERAS)
async def test_apps_client_without_the_extension_sees_exactly_todays_server(version: str) -> None:
    async with connect_in_memory(_server(with_views=False), protocol_version=version) as before:
        tools_before = await before.list_all_tools()
        resources_before = await before.list_all_resources()
        result_before = await before.call_tool("chart", {})
        capabilities_before = before.server_capabilities
    async with connect_in_memory(_server(with_views=True), protocol_version=version) as after:
        assert await after.list_all_tools() == tools_before
        assert await after.list_all_resources() == resources_before
        assert await after.call_tool("chart", {}) == result_before
        # Only the offer is new: a client that ignores extensions sees the same capabilities otherwise.
        extensions = after.server_capabilities.pop("extensions")
        assert UI_EXTENSION in extensions
        assert {key: value for key, value in capabilities_before.items() if key != "extensions"} == {
            key: value for key, value in after.server_capabilities.items() if key != "extensions"
        }


@pytest.mark.parametrize("version", ERAS)
async def test_apps_view_is_not_found_for_a_client_without_the_extension(version: str) -> None:
    async with connect_in_memory(_server(with_views=True), protocol_version=version) as client:
        error = await _error(client.read_resource(VIEW))
        unknown = await _error(client.read_resource("ui://demo/never-registered"))
    expected = ErrorCode.INVALID_PARAMS if version == "2026-07-28" else ErrorCode.RESOURCE_NOT_FOUND
    assert error.code == unknown.code == expected
    assert error.message == f"Resource not found: {VIEW}"


@pytest.mark.parametrize("version", ERAS)
async def test_apps_app_only_tool_does_not_exist_without_the_extension(version: str) -> None:
    async with connect_in_memory(_server(with_views=True), protocol_version=version) as client:
        assert "next_page" not in {tool["name"] for tool in await client.list_all_tools()}
        error = await _error(client.call_tool("next_page", {}))
    assert error.code == ErrorCode.INVALID_PARAMS
    assert error.message == "Unknown tool: next_page"


async def test_apps_other_meta_keys_stay_for_a_client_without_the_extension() -> None:
    async with connect_in_memory(_server(with_views=True)) as client:
        tools = {tool["name"]: tool for tool in await client.list_all_tools()}
    assert tools["tagged"]["_meta"] == {"io.example/other": 1}
    assert "_meta" not in tools["chart"]


async def test_apps_extension_declared_with_other_settings_still_counts() -> None:
    # The client's settings are its own business (mimeTypes is required by the spec, but a host that
    # declared the identifier took the extension up); what it declared reaches the handler as is.
    server = _server(with_views=True)
    seen: list[Any] = []

    @server.tool()
    async def probe(ctx: Any, args: dict[str, Any]) -> str:
        seen.append(ctx.client_extension(UI_EXTENSION))
        return "ok"

    async with connect_in_memory(server, extensions={UI_EXTENSION: {"mimeTypes": [APP_MIME], "x": 1}}) as client:
        await client.call_tool("probe", {})
        assert VIEW in {resource["uri"] for resource in await client.list_all_resources()}
    assert seen == [{"mimeTypes": [APP_MIME], "x": 1}]


def test_apps_tool_meta_names_the_view_both_ways() -> None:
    assert app_tool_meta("ui://w/f") == {
        "ui": {"resourceUri": "ui://w/f", "visibility": ["model", "app"]},
        "ui/resourceUri": "ui://w/f",
    }
    assert app_tool_meta("ui://w/f", visibility=("app", "app"))["ui"]["visibility"] == ["app"]


@pytest.mark.parametrize("visibility", [(), ("agent",), ("model", "user")])
def test_apps_tool_meta_refuses_unknown_visibility(visibility: tuple[str, ...]) -> None:
    with pytest.raises(ValueError):
        app_tool_meta("ui://w/f", visibility=visibility)


@pytest.mark.parametrize(
    "options",
    [
        {"uri": "https://example.invalid/view"},
        {"uri": "ui://"},
        {"csp": {"scriptDomains": ["https://cdn.example"]}},
        {"permissions": ["usb"]},
    ],
)
def test_apps_view_refuses_what_the_spec_does_not_name(options: dict[str, Any]) -> None:
    arguments: dict[str, Any] = {"uri": VIEW, "name": "v", **options}
    uri = arguments.pop("uri")
    with pytest.raises(ValueError):
        add_app_view(Server("s", "1"), uri, HTML, **arguments)


def test_apps_view_without_options_has_no_ui_meta() -> None:
    server = Server("s", "1")
    add_app_view(server, VIEW, HTML, name="v")
    resource = server.resources[VIEW]
    assert resource.to_dict() == {"uri": VIEW, "name": "v", "mimeType": APP_MIME, "size": len(HTML)}
    assert server.capabilities()["extensions"] == {UI_EXTENSION: {}}


async def test_apps_gateway_serves_todays_tools() -> None:
    # The plain JSON-RPC gateway's callers negotiate no extension: they see and call what they did before.
    import httpx
    from plainmcp.http.gateway import Gateway

    def app(with_views: bool) -> httpx.ASGITransport:
        return httpx.ASGITransport(app=Gateway(_server(with_views=with_views)))

    async with (
        httpx.AsyncClient(transport=app(False), base_url="http://127.0.0.1") as before,
        httpx.AsyncClient(transport=app(True), base_url="http://127.0.0.1") as after,
    ):
        info_before = (await before.get("/mcp/server-info")).json()
        info_after = (await after.get("/mcp/server-info")).json()
        assert info_after["tools"] == info_before["tools"]
        call = {"jsonrpc": "2.0", "id": 1, "method": "next_page", "params": {}}
        refused = (await after.post("/mcp/call", json=call)).json()
        assert refused["error"]["code"] == ErrorCode.METHOD_NOT_FOUND
        chart = {"jsonrpc": "2.0", "id": 2, "method": "chart", "params": {}}
        assert (await after.post("/mcp/call", json=chart)).json() == (await before.post("/mcp/call", json=chart)).json()


CORE = Path(__file__).resolve().parents[2] / "packages" / "plainmcp"
TEMPLATE = """<!doctype html>
<html><head>
<meta http-equiv="Content-Security-Policy" content="{{csp}}">
<style>
p { margin: 0; }
</style>
</head><body><p id="roll"></p>
<script>
//@app-view
host.on("ui/notifications/tool-result", (result) => { document.getElementById("roll").textContent = "4"; });
host.start("dice", "1");
</script>
</body></html>
"""


def _sha256(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


def _policy(html: str) -> dict[str, str]:
    found = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html)
    assert found is not None
    return dict(part.strip().split(" ", 1) for part in found[1].split(";"))


def test_apps_view_document_inlines_the_helper_and_allows_exactly_its_blocks() -> None:
    html = app_view_document(TEMPLATE)
    (script,) = re.findall(r"<script>(.*?)</script>", html, re.DOTALL)
    (style,) = re.findall(r"<style>(.*?)</style>", html, re.DOTALL)
    assert script.startswith("\n" + app_view_script().rstrip("\n") + "\nhost.on(")
    assert "//@app-view" not in html and "{{csp}}" not in html
    policy = _policy(html)
    # The hashes are those of the final text, the helper included.
    assert policy["script-src"] == _sha256(script) and policy["style-src"] == _sha256(style)
    assert policy["default-src"] == policy["connect-src"] == policy["frame-src"] == policy["object-src"] == "'none'"
    assert policy["base-uri"] == policy["form-action"] == policy["font-src"] == "'none'"
    assert policy["img-src"] == "data:" and "unsafe" not in html


def test_apps_view_document_without_a_style_allows_no_style() -> None:
    html = app_view_document(re.sub(r"<style>.*?</style>\n", "", TEMPLATE, flags=re.DOTALL))
    assert _policy(html)["style-src"] == "'none'"


def test_apps_view_document_hashes_what_the_browser_sees_for_crlf() -> None:
    # The HTML parser turns CRLF into LF before the script's hash is checked: so must the document.
    html = app_view_document(TEMPLATE.replace("\n", "\r\n"))
    assert "\r" not in html and html == app_view_document(TEMPLATE)


@pytest.mark.parametrize(
    ("change", "why"),
    [
        (("//@app-view\n", ""), "no marker"),
        (("//@app-view\n", "//@app-view\n//@app-view\n"), "two markers"),
        (("<script>\n//@app-view\n", "<script>\n"), "no marker in the script"),
        (('content="{{csp}}"', 'content="default-src *"'), "no policy placeholder"),
        (("</script>\n", "</script>\n<script>alert(1)</script>\n"), "a second script"),
        (("<script>\n", '<script src="data:,x"></script>\n<script>\n'), "a script with a source"),
        (("<script>\n", '<script type="module">\n'), "a script with attributes"),
        (("</style>\n", "</style>\n<style>b {}</style>\n"), "two styles"),
        (('<p id="roll">', '<p id="roll" style="color:red">'), "an inline style attribute"),
        (('<p id="roll">', '<p id="roll" onclick="go()">'), "an inline event handler"),
        (("<head>\n", "<head>\n//@app-view\n"), "the marker outside the script"),
    ],
    ids=lambda value: value if isinstance(value, str) else "",
)
def test_apps_view_document_refuses_what_its_policy_would_break(change: tuple[str, str], why: str) -> None:
    old, new = change
    assert old in TEMPLATE
    with pytest.raises(ValueError):
        app_view_document(TEMPLATE.replace(old, new, 1))


def test_apps_view_script_is_plain_self_contained_javascript() -> None:
    script = app_view_script()
    assert script.startswith("// ") and "const host = (() => {" in script
    # Nothing that would end the inline block or reach the network; no markup built from text.
    for forbidden in ("<script", "</script", "<style", "http://", "https://", "innerHTML", "eval(", "{{csp}}"):
        assert forbidden not in script, forbidden
    for method in ("ui/initialize", "ui/notifications/initialized", "ui/notifications/size-changed", "tools/call"):
        assert f'"{method}"' in script
    assert 'PROTOCOL = "2026-01-26"' in script


def test_apps_view_script_ships_in_the_core_wheel(tmp_path: Path) -> None:
    """A server outside this repository gets the helper from the installed core: the wheel holds it and,
    unpacked on its own, serves it through the public API."""
    subprocess.run(
        [sys.executable, "-m", "hatchling", "build", "--target", "wheel", "--directory", str(tmp_path)],
        cwd=CORE,
        check=True,
        capture_output=True,
        timeout=120,
    )
    (wheel,) = tmp_path.glob("plainmcp-*.whl")
    unpacked = tmp_path / "site"
    with zipfile.ZipFile(wheel) as archive:
        assert "plainmcp/apps_view.js" in archive.namelist()
        archive.extractall(unpacked)
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); import plainmcp; "
        "assert plainmcp.__file__.startswith(sys.argv[1]), plainmcp.__file__; "
        "print(plainmcp.app_view_script(), end='')"
    )
    shown = subprocess.run(
        [sys.executable, "-c", code, str(unpacked)], check=True, capture_output=True, text=True, timeout=60
    )
    assert shown.stdout == app_view_script()
