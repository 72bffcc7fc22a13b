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
"""

from __future__ import annotations

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
