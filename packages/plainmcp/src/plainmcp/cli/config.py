"""``plainmcp config SERVER --client claude|cursor|vscode``: the snippet to paste into a client.

The snippet names the installed command by its absolute path: desktop clients start servers with
a minimal PATH (Claude Desktop on macOS does not read the shell's profile), so ``plainmcp-<name>``
alone is often "command not found" there, while ``/home/me/.local/bin/plainmcp-<name>`` works. The
server is looked for where users install it (:mod:`.locate`: this environment, PATH, pipx, uv), and
one line on stderr says which one the snippet uses. For the same reason (the client picks the
working directory) path arguments are made absolute (:mod:`.server_args`).

Secrets (:mod:`.secrets`): for VS Code a ``--secret`` variable, an ``--env`` whose name says
key/token/secret/password, a secret server option and an ``Authorization`` (or other credential)
``--header`` become prompted ``inputs``, so its snippet never carries one. Claude Desktop and Cursor
have no prompt: there the value is written into the snippet (in ``env``, off the command line).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

from .locate import Found, Missing, locate
from .run import FAILED, OK, USAGE, fail
from .secrets import Prompts, looks_secret, secret_values
from .server_args import Usage, absolute_paths, read_usage, secrets_to_env
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
        "  plainmcp config shop --client claude -- ~/Documents/shop.db\n"
        "  plainmcp config shop --client vscode --env SHOP_LOG_LEVEL=debug -- --db shop.db\n"
        "  plainmcp config shop --client vscode --secret SHOP_API_KEY\n"
        "  plainmcp config shop --client cursor --http http://127.0.0.1:8000/mcp\n"
        "  (shop: an installed plainmcp-shop; any other server: its command's path)\n\n"
        "The server is looked for in this environment, on PATH, in pipx's venvs and in uv's tools;\n"
        "path arguments (the server's --help says which) are made absolute, a leading ~ is kept.\n\n"
        "exit codes:\n  0  printed\n  1  the server command is not installed\n  2  usage error",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "server",
        metavar="SERVER",
        help="an installed plainmcp server, by its name with or without the plainmcp- prefix "
        "(NAME or plainmcp-NAME), or the path of any server executable",
    )
    parser.add_argument("--client", choices=CLIENTS, required=True, help="the client the snippet is for")
    parser.add_argument("--name", help="the server's key in the configuration (default: the server's short name)")
    parser.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="environment variable for the server (repeatable)",
    )
    parser.add_argument(
        "--http",
        metavar="URL",
        help="configure a server already running at this Streamable HTTP URL instead of a command",
    )
    parser.add_argument(
        "--secret",
        action="append",
        default=[],
        metavar="NAME",
        help="environment variable holding a secret (repeatable): VS Code prompts for it; for "
        "Claude and Cursor its value is taken from this shell's environment",
    )
    parser.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="'NAME: VALUE'",
        help="HTTP header for --http (repeatable), e.g. 'Authorization: Bearer ...'",
    )
    parser.add_argument(
        "--explain",
        action="store_true",
        help="say on stderr where the server was looked for and which arguments were made absolute",
    )
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
        if args.command_tail or env or args.secret:
            raise UsageError("--http configures a running server: server arguments, --env and --secret do not apply")
        return remote_entry(args.client, name, args.http, _headers(args.header))
    if args.header:
        raise UsageError("--header applies to --http")
    command = find_command(args.server, explain=args.explain)
    named = [*env, *args.secret]  # the variables the user named, to check against the server's --help
    if command[1:2] == ["-m"] and os.environ.get("PYTHONPATH") and "PYTHONPATH" not in env:
        # Importable only through PYTHONPATH (a checkout's src directory): the client needs it too.
        env["PYTHONPATH"] = os.pathsep.join(os.path.abspath(p) for p in os.environ["PYTHONPATH"].split(os.pathsep) if p)
        print("plainmcp config: the server is importable through PYTHONPATH, so the snippet sets it", file=sys.stderr)
    server_args = list(args.command_tail or ())
    secrets = secret_values(args.secret, args.client)
    if server_args or named:
        usage = read_usage(command)
        server_args = _absolute_args(command, server_args, usage, args.explain)
        _check_env_names(command, named, usage)
        if usage is not None:
            server_args, moved = secrets_to_env(server_args, usage, looks_secret)
            for variable, value in moved.items():
                print(
                    f"plainmcp config: a secret option moved to the environment as {variable} (a command line "
                    "is visible to every user of the machine)",
                    file=sys.stderr,
                )
                (secrets if args.client == "vscode" else env)[variable] = value
    return stdio_entry(args.client, name, command, server_args, env, secrets)


def short_name(server: str) -> str:
    """``plainmcp-shop`` and ``/x/bin/plainmcp-shop`` -> ``shop``; other names as they are."""
    base = Path(server).name
    base = base.removesuffix(".exe")
    return base.removeprefix("plainmcp-") or base


def find_command(server: str, explain: bool = False) -> list[str]:
    """The command line that starts the server, absolute: a path as given (made absolute), else the
    installed ``plainmcp-<server>`` (:func:`.locate.locate`; one line on stderr says which), else
    ``server`` itself on PATH. Raises LookupError with the install lines."""
    if "/" in server or "\\" in server:
        path = Path(server).expanduser().resolve()
        if not path.is_file():
            raise LookupError(f"{server}: no such file")
        return [str(path)]
    found = locate(server)
    if isinstance(found, Missing) and not server.startswith("plainmcp-"):
        other = _on_path(server)  # any other server command the user named
        if other is not None:
            found = other
    if isinstance(found, Missing):
        raise LookupError(found.message())
    if explain:
        print(f"plainmcp config: looked in: {'; '.join(found.looked)}", file=sys.stderr)
    print(f"plainmcp config: using {found.describe()}", file=sys.stderr)
    return list(found.command)


def _on_path(command: str) -> Found | None:
    path = shutil.which(command)
    if path is None:
        return None
    return Found(command, (os.path.abspath(path),), None, "PATH", ("PATH",))


def _absolute_args(command: list[str], server_args: list[str], usage: Usage | None, explain: bool) -> list[str]:
    if not server_args:
        return server_args
    if usage is None:
        print(
            "plainmcp config: the server's --help shows no usage line, so its arguments are copied as written "
            "(make relative paths absolute yourself)",
            file=sys.stderr,
        )
        return server_args
    rewritten = absolute_paths(server_args, usage)
    if explain:
        changed = [
            f"{before} -> {after}" for before, after in zip(server_args, rewritten, strict=True) if before != after
        ]
        print("plainmcp config: made absolute: " + (", ".join(changed) or "nothing"), file=sys.stderr)
    return rewritten


def _check_env_names(command: list[str], names: list[str], usage: Usage | None) -> None:
    """Warn about an environment variable the server's --help does not name (a typo, most often)."""
    if usage is None or not usage.env_names:
        return
    for unknown in [n for n in names if n not in usage.env_names]:
        print(
            f"plainmcp config: warning: {Path(command[-1]).name} does not name {unknown} in its --help", file=sys.stderr
        )


def stdio_entry(
    client: str,
    name: str,
    command: list[str],
    args: list[str],
    env: dict[str, str],
    secrets: dict[str, str] | None = None,
) -> dict[str, Any]:
    """The entry that starts ``command`` over stdio. ``secrets`` (name -> value) are env too: for VS
    Code, they and every secret-looking ``env`` become prompted ``inputs`` (the values are dropped)."""
    env = {**env, **(secrets or {})}
    prompts = Prompts(name)
    if client == "vscode":
        env = {
            key: prompts.env(key) if key in (secrets or {}) or looks_secret(key) else value
            for key, value in env.items()
        }
    entry: dict[str, Any] = {"command": command[0], "args": [*command[1:], *args]}
    if env:
        entry["env"] = env
    if client == "vscode":
        return _vscode({name: {"type": "stdio", **entry}}, prompts)
    return {"mcpServers": {name: entry}}


def remote_entry(client: str, name: str, url: str, headers: dict[str, str]) -> dict[str, Any]:
    if client == "vscode":
        prompts = Prompts(name)
        headers = {key: prompts.header(key, value) for key, value in headers.items()}
        entry: dict[str, Any] = {"type": "http", "url": url}
        if headers:
            entry["headers"] = headers
        return _vscode({name: entry}, prompts)
    if client == "cursor":
        entry = {"url": url}
        if headers:
            entry["headers"] = headers
        return {"mcpServers": {name: entry}}
    # Claude Desktop's file takes stdio servers only (remote ones are added under Settings >
    # Connectors); the usual bridge is the mcp-remote package, run by npx.
    print(
        "note: Claude Desktop's config file starts stdio servers only; this entry bridges to the URL with "
        "the npm package mcp-remote (needs Node). Remote servers can also be added under Settings > Connectors.",
        file=sys.stderr,
    )
    bridge = ["-y", "mcp-remote", url]
    for header, value in headers.items():
        bridge += ["--header", f"{header}:{value}"]
    return {"mcpServers": {name: {"command": "npx", "args": bridge}}}


def _vscode(servers: dict[str, Any], prompts: Prompts) -> dict[str, Any]:
    if prompts.inputs:
        print(
            "note: VS Code asks for " + ", ".join(i["id"] for i in prompts.inputs) + " when it first starts the "
            "server and keeps the answer in its secret storage; the snippet holds no secret",
            file=sys.stderr,
        )
        return {"inputs": prompts.inputs, "servers": servers}
    return {"servers": servers}


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
