"""``plainmcp app TARGET TOOL --arg k=v``: see a tool's MCP Apps view without Claude.

Connects to the server as a host that takes up the extension (``io.modelcontextprotocol/ui``), finds the
view the tool names (``_meta.ui.resourceUri``), reads it, and serves a local page on 127.0.0.1 that loads it
the way a host does: a sandboxed iframe behind a sandbox proxy on another origin, the extension's own
``AppBridge`` passing the tool's input and result, and the view's tool calls sent back to the server
through this command's MCP client. Prints the page's URL, then serves until Ctrl-C. Arguments are given as
for ``plainmcp call``.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..apps import APP_MIME, UI_EXTENSION
from ..errors import ErrorCode, MCPError
from .call import parse_arguments
from .run import EXIT_CODES, OK, run
from .targets import UsageError, add_target_options, target_from


def add_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "app",
        help="serve a local page that shows a tool's MCP Apps view, as a host would",
        description=__doc__.split("\n\n", 1)[1].strip(),
        usage="plainmcp app [options] (TARGET TOOL | TOOL -- COMMAND [ARG ...])",
        epilog="TARGET is a URL (http:// or https://) or a server command, quoted when it has spaces.\n\n" + EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("operands", nargs="+", metavar="TARGET TOOL", help="the server (omit it with --) and the tool")
    parser.add_argument("--arg", action="append", default=[], metavar="NAME=VALUE", help="an argument (repeatable)")
    parser.add_argument("--args", metavar="JSON", help="the arguments as one JSON object")
    parser.add_argument("--port", type=int, default=0, help="the page's port on 127.0.0.1 (default: a free one)")
    parser.add_argument("--theme", choices=("light", "dark"), default="light", help="the host's theme at start")
    add_target_options(parser)
    parser.set_defaults(run=main)


def main(args: argparse.Namespace) -> int:
    def target() -> Any:
        operands = args.operands
        if args.command_tail is not None:
            if len(operands) != 1:
                raise UsageError("with the command after --, give only the tool before it")
            written, args.tool = None, operands[0]
        elif len(operands) != 2:
            raise UsageError("expected TARGET and TOOL: quote a server command with spaces")
        else:
            written, args.tool = operands
        parse_arguments(args.arg, args.args, None)  # malformed arguments are refused before anything starts
        return target_from(args, written, args.command_tail)

    extensions = {UI_EXTENSION: {"mimeTypes": [APP_MIME]}}
    return run(target, lambda client: _serve(client, args), verbose=args.verbose, extensions=extensions)


async def _serve(client: Any, args: argparse.Namespace) -> int:
    from .app_host import HostSession, read_view, resource_uri, serve, visibility

    tools = await client.list_all_tools()
    tool = next((t for t in tools if t.get("name") == args.tool), None)
    if tool is None:
        raise MCPError(ErrorCode.INVALID_PARAMS, f"Unknown tool: {args.tool}")
    uri = resource_uri(tool)
    if uri is None:
        raise UsageError(f"the tool {args.tool} names no MCP Apps view (no _meta.ui.resourceUri): use plainmcp call")
    if "model" not in visibility(tool):
        raise UsageError(f"{args.tool} is app-only (visibility {visibility(tool)}): only its view calls it, not a host")
    listed_ui = next((r.get("_meta", {}).get("ui") for r in await _resources(client) if r.get("uri") == uri), None)
    view = await read_view(client, uri, listed_ui)
    arguments = parse_arguments(args.arg, args.args, tool.get("inputSchema"))
    session = HostSession(client, tool, arguments, view, tools, theme=args.theme)

    def ready(url: str) -> None:
        print(url, flush=True)
        print(f"plainmcp: serving {args.tool}'s view {uri}; Ctrl-C stops", file=sys.stderr)

    await serve(session, args.port, ready)
    return OK


async def _resources(client: Any) -> list[dict[str, Any]]:
    """The listed resources (for the view's ``_meta.ui`` when its contents carry none); none without the capability."""
    if "resources" not in (client.server_capabilities or {}):
        return []
    return list(await client.list_all_resources())
