"""Each client's configuration format: the text ``plainmcp config`` prints for one server.

A server to start is a :class:`Launch` (absolute command, arguments, environment; for VS Code the
prompted ``inputs``); a running one is a :class:`Remote` (URL, headers). :func:`render` writes either
in a client's own format, as the client's documentation gives it:

- ``claude`` (Claude Desktop), ``cursor``, ``windsurf``, ``gemini`` (Gemini CLI), ``cline``: JSON under
  ``mcpServers`` (Windsurf names a URL ``serverUrl``, Gemini CLI ``httpUrl``);
- ``claude-code``: the ``claude mcp add`` command line, or with ``--as file`` its ``.mcp.json``;
- ``vscode``: ``servers`` (and ``inputs``) for ``mcp.json``; ``cursor`` and ``vscode`` also give a
  one-click install link (``--as link``);
- ``codex`` (Codex CLI): TOML, a ``[mcp_servers.<name>]`` table for ``~/.codex/config.toml``;
- ``zed``: JSON under ``context_servers``;
- ``continue``: a YAML block file for ``.continue/mcpServers/``;
- ``goose``: YAML under ``extensions`` for ``~/.config/goose/config.yaml``.

YAML and TOML are written by hand (no dependency): every string is JSON-quoted, which is a valid
double-quoted scalar in YAML and a valid basic string in TOML.
"""

from __future__ import annotations

import base64
import json
import re
import shlex
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from .targets import UsageError

CLIENTS = (
    "claude",
    "claude-code",
    "cursor",
    "vscode",
    "codex",
    "gemini",
    "windsurf",
    "zed",
    "continue",
    "cline",
    "goose",
)
#: The forms a client's snippet comes in; the first is the default.
FORMS: dict[str, tuple[str, ...]] = {
    "claude-code": ("command", "file"),
    "cursor": ("file", "link"),
    "vscode": ("file", "link"),
}

#: Where the snippet goes, one sentence per client (shown on stderr, after the snippet).
WHERE = {
    "claude": "Paste it into claude_desktop_config.json (Claude Desktop: Settings > Developer > Edit Config; "
    "~/Library/Application Support/Claude/ on macOS, %APPDATA%\\Claude\\ on Windows), then restart Claude.",
    "claude-code": "Run the command in a shell (add --scope user for every project, --scope project to write "
    ".mcp.json); with --as file, paste the JSON into .mcp.json at the project's root.",
    "cursor": "Paste it into ~/.cursor/mcp.json (every project) or .cursor/mcp.json (one project).",
    "vscode": "Paste it into .vscode/mcp.json in the workspace, or run 'MCP: Open User Configuration' for every "
    "workspace.",
    "codex": "Append it to ~/.codex/config.toml (or .codex/config.toml of a trusted project).",
    "gemini": "Merge it into ~/.gemini/settings.json (or .gemini/settings.json of a project).",
    "windsurf": "Paste it into ~/.codeium/windsurf/mcp_config.json (Cascade: MCP servers > Configure).",
    "zed": "Merge it into Zed's settings.json (zed: open settings file).",
    "continue": "Save it as .continue/mcpServers/<name>.yaml in the workspace (or in ~/.continue/mcpServers/).",
    "cline": "Paste it into cline_mcp_settings.json (Cline: MCP Servers > Configure > Configure MCP Servers).",
    "goose": "Merge it into ~/.config/goose/config.yaml (or add it with 'goose configure').",
    "link": "Open the link (or put it behind a button in a README): the editor asks before it installs the server.",
}

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


@dataclass(frozen=True)
class Launch:
    """A server the client starts: ``command`` (absolute) and ``args``, ``env``, VS Code ``inputs``."""

    command: str
    args: list[str]
    env: dict[str, str] = field(default_factory=dict)
    inputs: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class Remote:
    """A server already running at a Streamable HTTP ``url``."""

    url: str
    headers: dict[str, str] = field(default_factory=dict)


def form_of(client: str, wanted: str | None) -> str:
    """The form to print for ``client`` (``--as``, else the client's default). Raises :class:`UsageError`."""
    forms = FORMS.get(client, ("file",))
    if wanted is None:
        return forms[0]
    if wanted not in forms:
        raise UsageError(f"--as {wanted}: {client} takes {' or '.join(forms)}")
    return wanted


def render(client: str, form: str, name: str, server: Launch | Remote) -> str:
    """The snippet for ``server`` in ``client``'s format. Raises :class:`UsageError` for what the format cannot say."""
    if form == "link":
        return _link(client, name, server)
    if form == "command":
        return _claude_mcp_add(name, server)
    if client == "codex":
        return _codex(name, server)
    if client in ("continue", "goose"):
        return (_continue if client == "continue" else _goose)(name, server)
    return json.dumps(_json_document(client, name, server), indent=2, ensure_ascii=False)


def _stdio(server: Launch, **extra: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {**extra, "command": server.command, "args": server.args}
    if server.env:
        entry["env"] = server.env
    return entry


def _with_headers(entry: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
    return {**entry, "headers": headers} if headers else entry


def _json_document(client: str, name: str, server: Launch | Remote) -> dict[str, Any]:
    if isinstance(server, Launch):
        if client == "vscode":
            document: dict[str, Any] = {"servers": {name: _stdio(server, type="stdio")}}
            return {"inputs": server.inputs, **document} if server.inputs else document
        entry = _stdio(server, type="stdio") if client == "claude-code" else _stdio(server)
        return {"context_servers" if client == "zed" else "mcpServers": {name: entry}}
    return _remote_document(client, name, server)


def _remote_document(client: str, name: str, server: Remote) -> dict[str, Any]:
    url_key = {"windsurf": "serverUrl", "gemini": "httpUrl"}.get(client, "url")
    if client == "claude":
        # Claude Desktop's file starts stdio servers only (remote ones are added under Settings >
        # Connectors); the usual bridge is the npm package mcp-remote, run by npx.
        bridge = ["-y", "mcp-remote", server.url]
        for header, value in server.headers.items():
            bridge += ["--header", f"{header}:{value}"]
        return {"mcpServers": {name: {"command": "npx", "args": bridge}}}
    if client == "cline":
        entry: dict[str, Any] = {"type": "streamableHttp", "url": server.url}
    elif client in ("vscode", "claude-code"):
        entry = {"type": "http", "url": server.url}
    else:
        entry = {url_key: server.url}
    entry = _with_headers(entry, server.headers)
    if client == "vscode":
        return {"servers": {name: entry}}
    return {"context_servers" if client == "zed" else "mcpServers": {name: entry}}


def _claude_mcp_add(name: str, server: Launch | Remote) -> str:
    """``claude mcp add`` (options before the name; the server's own command after ``--``)."""
    words = ["claude", "mcp", "add"]
    if isinstance(server, Remote):
        words += ["--transport", "http"]
        for header, value in server.headers.items():
            words += ["--header", f"{header}: {value}"]
        return shlex.join([*words, name, server.url])
    words += ["--transport", "stdio"]
    for key, value in server.env.items():
        words += ["--env", f"{key}={value}"]
    return shlex.join([*words, name, "--", server.command, *server.args])


def _link(client: str, name: str, server: Launch | Remote) -> str:
    """The one-click install links: Cursor's deeplink (the entry as base64 JSON), VS Code's
    ``vscode:mcp/install`` (the entry with its name, as URL-encoded JSON) and the https redirect to it
    that a README on GitHub can link to (GitHub does not link ``vscode:`` URLs)."""
    secret = isinstance(server, Launch) and server.inputs
    if secret or (isinstance(server, Launch) and client == "cursor" and server.env):
        raise UsageError("a link would carry the environment (secrets included) to whoever opens it; use the file form")
    entry = _json_document(client, name, server)["servers" if client == "vscode" else "mcpServers"][name]
    compact = json.dumps(entry, separators=(",", ":"), ensure_ascii=False)
    if client == "cursor":
        config = base64.b64encode(compact.encode()).decode()
        return f"cursor://anysphere.cursor-deeplink/mcp/install?name={quote(name, safe='')}&config={quote(config, safe='')}"
    named = json.dumps({"name": name, **entry}, separators=(",", ":"), ensure_ascii=False)
    return (
        f"vscode:mcp/install?{quote(named, safe='')}\n"
        f"https://insiders.vscode.dev/redirect/mcp/install?name={quote(name, safe='')}&config={quote(compact, safe='')}"
    )


def _string(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


def _inline(mapping: dict[str, str], separator: str) -> str:
    return "{ " + ", ".join(f"{_string(k)}{separator}{_string(v)}" for k, v in mapping.items()) + " }"


def _strings(values: list[str]) -> str:
    return "[" + ", ".join(_string(v) for v in values) + "]"


def _codex(name: str, server: Launch | Remote) -> str:
    key = name if _BARE_KEY.fullmatch(name) else _string(name)
    lines = [f"[mcp_servers.{key}]"]
    if isinstance(server, Remote):
        lines.append(f"url = {_string(server.url)}")
        if server.headers:
            lines.append(f"http_headers = {_inline(server.headers, ' = ')}")
    else:
        lines += [f"command = {_string(server.command)}", f"args = {_strings(server.args)}"]
        if server.env:
            lines.append(f"env = {_inline(server.env, ' = ')}")
    return "\n".join(lines)


def _yaml_lines(indent: str, launch: Launch, command_key: str, env_key: str) -> list[str]:
    lines = [f"{indent}{command_key}: {_string(launch.command)}", f"{indent}args: {_strings(launch.args)}"]
    if launch.env:
        lines.append(f"{indent}{env_key}: {_inline(launch.env, ': ')}")
    return lines


def _continue(name: str, server: Launch | Remote) -> str:
    lines = [f"name: {_string(name)}", "version: 0.0.1", "schema: v1", "mcpServers:", f"  - name: {_string(name)}"]
    if isinstance(server, Remote):
        if server.headers:
            raise UsageError("--header: set Continue's headers in its requestOptions yourself")
        return "\n".join([*lines, "    type: streamable-http", f"    url: {_string(server.url)}"])
    return "\n".join([*lines, *_yaml_lines("    ", server, "command", "env")])


def _goose(name: str, server: Launch | Remote) -> str:
    if isinstance(server, Remote):
        raise UsageError("--http: add a remote extension with 'goose configure' (Add Extension > Remote)")
    lines = ["extensions:", f"  {_string(name)}:", f"    name: {_string(name)}", "    type: stdio", "    enabled: true"]
    return "\n".join([*lines, *_yaml_lines("    ", server, "cmd", "envs"), "    timeout: 300"])
