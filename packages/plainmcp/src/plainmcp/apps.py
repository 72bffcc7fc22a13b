"""MCP Apps (``io.modelcontextprotocol/ui``, SEP-1865, stable 2026-01-26): tools that come with a view.

A view is one HTML document served as a ``ui://`` resource (``text/html;profile=mcp-app``); a tool names
it in ``_meta.ui.resourceUri``; a host that took up the extension renders the tool's result in it, inside a
sandboxed iframe. A server author needs two calls::

    add_app_view(server, "ui://weather/forecast", FORECAST_HTML, name="forecast")

    @server.tool(meta=app_tool_meta("ui://weather/forecast"))
    async def get_forecast(ctx, args): ...

Clients that did not take up the extension see exactly what they saw before: the tool without its
``ui`` metadata, no ``ui://`` resource in ``resources/list`` (and "not found" when they read one), and no
app-only tool (``visibility: ["app"]``) at all. The list handlers ask :func:`listed_tool` and
:func:`hidden_tool`; resources carry the generic ``Resource.extension`` marker.

The view's own side of the protocol (``ui/initialize``, the tool's input and result, ``tools/call``
through the host) is :func:`app_view_script`, plain JavaScript shipped with this package;
:func:`app_view_document` inlines it into a view's HTML and writes the view's Content-Security-Policy.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from .resources import Resource

if TYPE_CHECKING:
    from .context import Context
    from .server import Server
    from .tools import Tool

#: The extension's identifier in ``capabilities.extensions`` (both sides).
UI_EXTENSION = "io.modelcontextprotocol/ui"
#: The MIME type of an HTML view; a host lists it in its extension settings' ``mimeTypes``.
APP_MIME = "text/html;profile=mcp-app"
#: The deprecated flat key the specification still lists beside ``_meta.ui.resourceUri`` (hosts built
#: before the nested form read only this one).
FLAT_RESOURCE_URI = "ui/resourceUri"
#: ``_meta.ui.visibility`` members: the model (the agent's tool list) and the view (``tools/call`` from it).
VISIBILITIES = ("model", "app")
#: ``_meta.ui.csp`` keys (each a list of origins) and ``_meta.ui.permissions`` keys.
CSP_KEYS = ("connectDomains", "resourceDomains", "frameDomains", "baseUriDomains")
PERMISSION_KEYS = ("camera", "microphone", "geolocation", "clipboardWrite")
#: The line of a view's ``<script>`` that :func:`app_view_document` replaces with :func:`app_view_script`,
#: and the Content-Security-Policy placeholder it fills in.
VIEW_SCRIPT_MARKER = "//@app-view"
VIEW_CSP_PLACEHOLDER = "{{csp}}"
#: The policy of a view: its one inline script and its style by hash, images only as data: URLs, and
#: nothing else (no network, no other script, no frames, plugins, base URL or form targets).
VIEW_POLICY = (
    "default-src 'none'; script-src {script}; style-src {style}; img-src data:; font-src 'none'; "
    "connect-src 'none'; frame-src 'none'; object-src 'none'; base-uri 'none'; form-action 'none'"
)
# Patterns, not compiled at import (half a millisecond of every server's start-up): re caches them at first use.
_VIEW_BLOCK = r"<(script|style)>(.*?)</\1>"
_OPENING = r"(?i)<(script|style)\b"
# An attribute the policy refuses in markup: an inline style or event handler (e.g. style="margin:0").
_INLINE_ATTRIBUTE = r"(?i)<[a-z][^>]*?\s(style|on[a-z]+)\s*="


def add_app_view(
    server: Server,
    uri: str,
    html: str,
    *,
    name: str,
    title: str | None = None,
    description: str | None = None,
    csp: Mapping[str, Iterable[str]] | None = None,
    permissions: Iterable[str] | Mapping[str, Any] | None = None,
    prefers_border: bool | None = None,
) -> None:
    """Serve ``html`` as the view ``uri`` (``ui://...``) and offer the extension.

    ``csp`` maps the specification's keys (``connectDomains``, ``resourceDomains``, ``frameDomains``,
    ``baseUriDomains``) to origins; omitted, the host applies its restrictive default (no network).
    ``permissions`` names browser features (``camera``, ``microphone``, ``geolocation``,
    ``clipboardWrite``). Both go to ``_meta.ui`` of the listed resource and of its contents, with
    ``prefersBorder``. Raises ValueError for a URI outside ``ui://`` or an unknown key.
    """
    if not uri.startswith("ui://") or len(uri) <= len("ui://"):
        raise ValueError(f"a view's URI starts with ui:// (got {uri!r})")
    ui = view_meta(csp=csp, permissions=permissions, prefers_border=prefers_border)
    meta = {"ui": ui} if ui else None

    async def read(ctx: Any, requested: str) -> dict[str, Any]:
        contents: dict[str, Any] = {"uri": requested, "mimeType": APP_MIME, "text": html}
        if meta is not None:
            contents["_meta"] = meta
        return contents

    server.add_resource(
        Resource(
            uri,
            name,
            read,
            title=title,
            description=description,
            mime_type=APP_MIME,
            size=len(html.encode("utf-8")),
            meta=meta,
            extension=UI_EXTENSION,
        )
    )
    if UI_EXTENSION not in server.extensions:
        server.declare_extension(UI_EXTENSION, {})


@functools.cache
def app_view_script() -> str:
    """The view side of MCP Apps, as JavaScript for a view's inline ``<script>`` (plainmcp's own code).

    It defines one constant, ``host``:

    - ``host.on(method, listener)``: a listener for a host notification, e.g.
      ``ui/notifications/tool-input`` (params ``{arguments}``), ``ui/notifications/tool-result`` (params:
      the tool's result), ``ui/notifications/tool-cancelled``, ``ui/notifications/host-context-changed``;
    - ``host.start(name, version, capabilities)``: the ``ui/initialize`` handshake (``capabilities`` is
      the view's ``appCapabilities``, ``{}`` if omitted), then ``ui/notifications/initialized``; a
      promise of the host's answer. Register the listeners first;
    - ``host.callTool(name, args)``: ``tools/call`` through the host (a promise of the result; the tool's
      visibility must include ``"app"``); ``host.request(method, params)`` and
      ``host.notify(method, params)`` for the other messages (``notifications/message`` to log);
    - ``host.context()``: the host context so far.

    It answers the host's ``ping`` and ``ui/resource-teardown`` (other requests: -32601), puts the host's
    theme on the root element's ``data-theme`` (``light``/``dark``) and its style variables (the
    specification's ``--*`` names) on the root's style, and reports the document's size
    (``ui/notifications/size-changed``) as it changes. Read once, from beside this module.
    """
    # pathlib, not importlib.resources (which would add zipfile, tempfile and shutil to a server's start-up):
    # the package is always installed as files. Imported here: pathlib brings urllib.parse, which a server
    # without views or resource templates never needs (apps is imported by every server's list handlers).
    from pathlib import Path

    return Path(__file__).with_name("apps_view.js").read_text(encoding="utf-8")


def app_view_document(template: str) -> str:
    """``template`` (a view's HTML) as served: :func:`app_view_script` inlined, the policy written.

    The template holds one ``<script>`` (no attributes) with a line ``//@app-view`` before the view's own
    code (replaced by the script, which defines ``host``), at most one ``<style>``, and a
    ``<meta http-equiv="Content-Security-Policy" content="{{csp}}">``: ``{{csp}}`` becomes
    :data:`VIEW_POLICY` with the SHA-256 of the final script and style (``style-src 'none'`` without a
    style). So served, a view stays one self-contained document that runs nothing else. Line breaks
    become LF, as the browser has them when it hashes.

    Raises:
        ValueError: another number of ``<script>``/``<style>`` blocks, a block with attributes, the
            marker not once in the script, no ``content="{{csp}}"``, or an inline ``style=``/``on*=``
            attribute in the markup (the policy would refuse it, silently, in the browser).
    """
    html = template.replace("\r\n", "\n").replace("\r", "\n")
    blocks: dict[str, list[str]] = {"script": [], "style": []}
    for kind, body in re.findall(_VIEW_BLOCK, html, re.DOTALL):
        blocks[kind].append(body)
    scripts, styles = blocks["script"], blocks["style"]
    openings = [kind.lower() for kind in re.findall(_OPENING, html)]
    if len(scripts) != 1 or len(styles) > 1 or openings.count("script") != 1 or openings.count("style") != len(styles):
        raise ValueError("a view holds one <script> and at most one <style>, without attributes")
    if html.count(VIEW_SCRIPT_MARKER) != 1 or VIEW_SCRIPT_MARKER not in scripts[0]:
        raise ValueError(f"a view's <script> holds the line {VIEW_SCRIPT_MARKER} (once) where the helper goes")
    if html.count(VIEW_CSP_PLACEHOLDER) != 1 or f'content="{VIEW_CSP_PLACEHOLDER}"' not in html:
        raise ValueError(f'a view has one Content-Security-Policy meta element with content="{VIEW_CSP_PLACEHOLDER}"')
    inline = re.search(_INLINE_ATTRIBUTE, re.sub(_VIEW_BLOCK, "", html, flags=re.DOTALL))
    if inline is not None:
        raise ValueError(f"the view's policy refuses inline {inline[1]}= attributes; use its <style> and <script>")
    helper = app_view_script().rstrip("\n")
    script = scripts[0].replace(VIEW_SCRIPT_MARKER, helper, 1)
    style = _hash_source(styles[0]) if styles else "'none'"
    policy = VIEW_POLICY.format(script=_hash_source(script), style=style)
    # The marker is only in the script, so the document's script is exactly the text hashed.
    return html.replace(VIEW_SCRIPT_MARKER, helper, 1).replace(VIEW_CSP_PLACEHOLDER, policy, 1)


def _hash_source(text: str) -> str:
    """A CSP hash source (``'sha256-<base64>'``) for an inline block's text."""
    # Imported here: only a server with a view pays for them, once, when it builds the view.
    import base64
    import hashlib

    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


def view_meta(
    *,
    csp: Mapping[str, Iterable[str]] | None = None,
    permissions: Iterable[str] | Mapping[str, Any] | None = None,
    prefers_border: bool | None = None,
) -> dict[str, Any]:
    """A view's ``_meta.ui`` (``csp``, ``permissions``, ``prefersBorder``), checked against the spec's keys."""
    ui: dict[str, Any] = {}
    if csp is not None:
        unknown = sorted(set(csp) - set(CSP_KEYS))
        if unknown:
            raise ValueError(f"unknown csp keys {unknown}; the specification names {list(CSP_KEYS)}")
        ui["csp"] = {key: [str(origin) for origin in origins] for key, origins in csp.items()}
    if permissions is not None:
        names = list(permissions)
        unknown = sorted(set(names) - set(PERMISSION_KEYS))
        if unknown:
            raise ValueError(f"unknown permissions {unknown}; the specification names {list(PERMISSION_KEYS)}")
        ui["permissions"] = {permission: {} for permission in names}
    if prefers_border is not None:
        ui["prefersBorder"] = bool(prefers_border)
    return ui


def app_tool_meta(uri: str, visibility: Iterable[str] = VISIBILITIES) -> dict[str, Any]:
    """The ``_meta`` of a tool whose results the view ``uri`` renders (pass it as ``meta=``).

    ``visibility`` is who may use the tool: ``"model"`` (listed for the agent) and/or ``"app"`` (callable
    from the view). ``("app",)`` makes a tool only the view calls (a "next page" button); clients without
    the extension never see such a tool. Raises ValueError for another value or an empty visibility.
    """
    if not uri.startswith("ui://"):
        raise ValueError(f"a view's URI starts with ui:// (got {uri!r})")
    seen = list(dict.fromkeys(visibility))
    if not seen or any(who not in VISIBILITIES for who in seen):
        raise ValueError(f"visibility is a non-empty subset of {list(VISIBILITIES)}, not {seen}")
    return {"ui": {"resourceUri": uri, "visibility": seen}, FLAT_RESOURCE_URI: uri}


def takes_apps(ctx: Context) -> bool:
    """Whether this request's client took up MCP Apps (declared ``io.modelcontextprotocol/ui``)."""
    return ctx.client_extension(UI_EXTENSION) is not None


def _ui(tool: Tool) -> dict[str, Any] | None:
    ui = (tool.meta or {}).get("ui")
    return ui if isinstance(ui, dict) else None


def app_only(tool: Tool) -> bool:
    """Whether ``tool`` is for the view alone (its ``visibility`` does not include ``"model"``)."""
    ui = _ui(tool)
    visibility = ui.get("visibility") if ui is not None else None
    return isinstance(visibility, list) and "model" not in visibility


def hidden_tool(ctx: Context, tool: Tool) -> bool:
    """Whether ``tool`` does not exist for this client: an app-only tool, for a client without Apps."""
    return app_only(tool) and not takes_apps(ctx)


def listed_tool(ctx: Context, entry: dict[str, Any]) -> dict[str, Any]:
    """A ``tools/list`` entry as this client sees it: without the Apps keys of ``_meta`` unless it took
    up the extension (then unchanged; the host leaves app-only tools out of the agent's list)."""
    return entry if takes_apps(ctx) else without_apps(entry)


def without_apps(entry: dict[str, Any]) -> dict[str, Any]:
    """A tool's listing entry without the Apps keys of its ``_meta`` (what a client without Apps sees)."""
    meta = entry.get("_meta")
    if not isinstance(meta, dict) or ("ui" not in meta and FLAT_RESOURCE_URI not in meta):
        return entry
    rest = {key: value for key, value in meta.items() if key not in ("ui", FLAT_RESOURCE_URI)}
    trimmed = {key: value for key, value in entry.items() if key != "_meta"}
    if rest:
        trimmed["_meta"] = rest
    return trimmed
