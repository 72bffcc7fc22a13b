"""A small real server for the harness tests: ``show`` renders through ``ui://probe/view``, whose buttons
call an app-only tool, a model-only tool, and try the network (which the sandbox's CSP must refuse).

Run as ``python tests/apps/probe_server.py`` (stdio) or with ``--transport http --port N``.
"""

from __future__ import annotations

from typing import Any

from plainmcp import Server, ToolResult, add_app_view, app_tool_meta, content, serve, server_arguments

VIEW = "ui://probe/view"
HTML = """<!doctype html>
<html><head><meta charset="utf-8"><title>probe</title></head>
<body>
<p id="echo">waiting</p>
<p id="input"></p>
<button id="app-only" type="button">app-only</button>
<button id="model-only" type="button">model-only</button>
<button id="network" type="button">network</button>
<p id="answer"></p>
<script>
"use strict";
let id = 0; const pending = new Map();
const post = (m) => parent.postMessage({jsonrpc: "2.0", ...m}, "*");
const request = (method, params) => new Promise((resolve, reject) => {
  id += 1; pending.set(id, {resolve, reject}); post({id, method, params});
});
const $ = (name) => document.getElementById(name);
addEventListener("message", (event) => {
  const m = event.data;
  if (event.source !== parent || !m || m.jsonrpc !== "2.0") return;
  if (m.method === undefined && pending.has(m.id)) {
    const p = pending.get(m.id); pending.delete(m.id);
    m.error ? p.reject(new Error(m.error.message)) : p.resolve(m.result);
  } else if (m.id !== undefined) { post({id: m.id, result: {}}); }
  else if (m.method === "ui/notifications/tool-input") { $("input").textContent = JSON.stringify(m.params.arguments); }
  else if (m.method === "ui/notifications/tool-result") {
    $("echo").textContent = (m.params.structuredContent || {}).said; document.body.dataset.result = "yes";
  }
  else if (m.method === "ui/notifications/host-context-changed") { document.body.dataset.theme = m.params.theme || ""; }
});
const show = (text) => { $("answer").textContent = text; };
$("app-only").onclick = () => request("tools/call", {name: "next_page", arguments: {}})
  .then((r) => show("ok: " + r.content[0].text), (e) => show("refused: " + e.message));
$("model-only").onclick = () => request("tools/call", {name: "model_only", arguments: {}})
  .then((r) => show("ok: " + r.content[0].text), (e) => show("refused: " + e.message));
$("network").onclick = () => fetch(document.body.dataset.target || "http://127.0.0.1:9/")
  .then(() => show("fetched"), (e) => show("blocked: " + e.name));
request("ui/initialize", {protocolVersion: "2026-01-26", appInfo: {name: "probe", version: "1"}, appCapabilities: {}})
  .then((r) => { document.body.dataset.theme = (r.hostContext || {}).theme || ""; post({method: "ui/notifications/initialized", params: {}}); });
</script>
</body></html>
"""


def build_server() -> Server:
    server = Server("probe-apps", "1")

    @server.tool(
        input_schema={"type": "object", "properties": {"say": {"type": "string"}}},
        meta=app_tool_meta(VIEW),
    )
    async def show(ctx: Any, args: dict[str, Any]) -> ToolResult:
        """Say something, shown in the probe view."""
        said = str(args.get("say", ""))
        return ToolResult([content.text(f"said {said}")], {"said": said})

    @server.tool(meta=app_tool_meta(VIEW, visibility=["app"]))
    async def next_page(ctx: Any, args: dict[str, Any]) -> str:
        """For the view only."""
        return "page 2"

    @server.tool(meta=app_tool_meta(VIEW, visibility=["model"]))
    async def model_only(ctx: Any, args: dict[str, Any]) -> str:
        """For the model only: the host refuses the view's call."""
        return "the model's"

    add_app_view(server, VIEW, HTML, name="probe", prefers_border=False)
    return server


if __name__ == "__main__":
    serve(build_server(), server_arguments("probe-apps", env_prefix="PROBE", version="1").parse_args())
