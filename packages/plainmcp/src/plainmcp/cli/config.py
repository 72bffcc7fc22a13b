"""``plainmcp config SERVER --client claude|cursor|vscode``: the snippet to paste into a client.

The snippet names the installed command by its absolute path: desktop clients start servers with
a minimal PATH (Claude Desktop on macOS does not read the shell's profile), so ``plainmcp-sqlite``
alone is often "command not found" there, while ``/home/me/.local/bin/plainmcp-sqlite`` works.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

from .run import FAILED, OK, USAGE, fail
from .targets import UsageError, is_url

CLIENTS = ("claude", "cursor", "vscode")

#: Where each client keeps the file the snippet goes into (shown on stderr, after the snippet).
WHERE = {
    "claude": "Claude Desktop: Settings > Developer > Edit Config, i.e. claude_desktop_config.json in "
    "~/Library/Application Support/Claude/ (macOS) or %APPDATA%\\Claude\\ (Windows); restart Claude after.",
    "cursor": "Cursor: ~/.cursor/mcp.json (every project) or .cursor/mcp.json (one project).",
    "vscode": "VS Code: .vscode/mcp.json in the workspace, or 'MCP: Open User Configuration' for every workspace.",
}


def add_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "config",
        help="print the configuration snippet for Claude Desktop, Cursor or VS Code",
        description="Print the JSON to paste into a client's MCP configuration, with the absolute path of the "
        "installed server command. Arguments after -- are passed to the server.",
        usage="plainmcp config [options] SERVER --client {claude,cursor,vscode} [-- SERVER_ARG ...]",
        epilog="examples:\n"
        "  plainmcp config filesystem --client claude -- ~/Documents\n"
        "  plainmcp config sqlite --client vscode --env PLAINMCP_SQLITE_LOG_LEVEL=debug -- --db ~/data.db\n"
        "  plainmcp config weather --client cursor --http http://127.0.0.1:8000/mcp\n\n"
        "exit codes:\n  0  printed\n  1  the server command is not installed\n  2  usage error",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("server", metavar="SERVER",
                        help="a plainmcp server (filesystem, sqlite, weather, prompts, everything, or "
                        "plainmcp-<name>), or the path of any server executable")
    parser.add_argument("--client", choices=CLIENTS, required=True, help="the client the snippet is for")
    parser.add_argument("--name", help="the server's key in the configuration (default: the server's short name)")
    parser.add_argument("--env", action="append", default=[], metavar="NAME=VALUE",
                        help="environment variable for the server (repeatable)")
    parser.add_argument("--http", metavar="URL",
                        help="configure a server already running at this Streamable HTTP URL instead of a command")
    parser.add_argument("--header", action="append", default=[], metavar="'NAME: VALUE'",
                        help="HTTP header for --http (repeatable), e.g. 'Authorization: Bearer ...'")
    parser.set_defaults(run=main)


def main(args: argparse.Namespace) -> int:
    try:
        snippet = build(args)
    except UsageError as error:
        fail(str(error))
        return USAGE
    except LookupError as error:
        fail(str(error))
        return FAILED
    print(json.dumps(snippet, indent=2, ensure_ascii=False))
    print(f"Paste into the {WHERE[args.client]}", file=sys.stderr)
    return OK


def build(args: argparse.Namespace) -> dict[str, Any]:
    """The snippet for ``args``. Raises :class:`UsageError`, or LookupError when the command is
    not installed."""
    name = args.name or short_name(args.server)
    env = _env(args.env)
    if args.http is not None:
        if not is_url(args.http):
            raise UsageError(f"--http {args.http!r}: expected an http:// or https:// URL")
        if args.command_tail or env:
            raise UsageError("--http configures a running server: server arguments and --env do not apply")
        return remote_entry(args.client, name, args.http, _headers(args.header))
    if args.header:
        raise UsageError("--header applies to --http")
    command = find_command(args.server)
    return stdio_entry(args.client, name, command, list(args.command_tail or ()), env)


def short_name(server: str) -> str:
    """``plainmcp-sqlite`` and ``/x/bin/plainmcp-sqlite`` -> ``sqlite``; other names as they are."""
    base = Path(server).name
    base = base.removesuffix(".exe")
    return base.removeprefix("plainmcp-") or base


def find_command(server: str) -> str:
    """The absolute path of the server's command: a path as given (made absolute), else
    ``plainmcp-<server>`` (or ``server`` itself) on PATH, else next to this Python (a venv or pipx
    environment whose bin directory is not on PATH). Raises LookupError."""
    if os.sep in server or (os.altsep and os.altsep in server):
        path = Path(server).expanduser().resolve()
        if not path.is_file():
            raise LookupError(f"{server}: no such file")
        return str(path)
    names = [server] if server.startswith("plainmcp-") else [f"plainmcp-{server}", server]
    beside = Path(sys.executable).parent
    for candidate in names:
        found = shutil.which(candidate) or shutil.which(candidate, path=str(beside))
        if found:
            return str(Path(found).absolute())
    raise LookupError(
        f"{names[0]} is not installed (not on PATH, not in {beside}); "
        f"install it with: pipx install {names[0]}   (or, in the repository: pipx install ./servers/{short_name(server)})"
    )


def stdio_entry(client: str, name: str, command: str, args: list[str], env: dict[str, str]) -> dict[str, Any]:
    entry: dict[str, Any] = {"command": command, "args": args}
    if env:
        entry["env"] = env
    if client == "vscode":
        return {"servers": {name: {"type": "stdio", **entry}}}
    return {"mcpServers": {name: entry}}


def remote_entry(client: str, name: str, url: str, headers: dict[str, str]) -> dict[str, Any]:
    if client == "vscode":
        entry: dict[str, Any] = {"type": "http", "url": url}
        if headers:
            entry["headers"] = headers
        return {"servers": {name: entry}}
    if client == "cursor":
        entry = {"url": url}
        if headers:
            entry["headers"] = headers
        return {"mcpServers": {name: entry}}
    # Claude Desktop's file takes stdio servers only (remote ones are added under Settings >
    # Connectors); the usual bridge is the mcp-remote package, run by npx.
    print("note: Claude Desktop's config file starts stdio servers only; this entry bridges to the URL with "
          "the npm package mcp-remote (needs Node). Remote servers can also be added under Settings > Connectors.",
          file=sys.stderr)
    bridge = ["-y", "mcp-remote", url]
    for header, value in headers.items():
        bridge += ["--header", f"{header}:{value}"]
    return {"mcpServers": {name: {"command": "npx", "args": bridge}}}


def _env(items: list[str]) -> dict[str, str]:
    env: dict[str, str] = {}
    for item in items:
        key, found, value = item.partition("=")
        if not found or not key:
            raise UsageError(f"--env {item!r}: expected NAME=VALUE")
        env[key] = value
    return env


def _headers(items: list[str]) -> dict[str, str]:
    headers: dict[str, str] = {}
    for item in items:
        key, found, value = item.partition(":")
        if not found or not key.strip():
            raise UsageError(f"--header {item!r}: expected 'NAME: VALUE'")
        headers[key.strip()] = value.strip()
    return headers
