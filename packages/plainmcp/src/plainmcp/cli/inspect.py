"""``plainmcp inspect TARGET``: what a server is and offers, for a person or (``--json``) a program."""

from __future__ import annotations

import argparse
from typing import Any

from . import render
from .run import EXIT_CODES, FAILED, OK, run
from .targets import add_target_options, target_from

#: capability -> (report key, client method); a list is fetched only when the capability is declared.
#: How ``inspect`` names each :attr:`plainmcp.Client.transport`.
TRANSPORT_NAMES = {"stdio": "stdio", "streamable-http": "Streamable HTTP", "sse": "HTTP+SSE", "memory": "in-memory"}

LISTS = (
    ("tools", "tools", "list_all_tools"),
    ("resources", "resources", "list_all_resources"),
    ("resources", "resourceTemplates", "list_all_resource_templates"),
    ("prompts", "prompts", "list_all_prompts"),
)


def add_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "inspect",
        help="show a server's info, capabilities, tools, resources and prompts",
        description="Connect to a server and show its info, capabilities, tools (with their arguments), "
        "resources, resource templates and prompts.",
        usage="plainmcp inspect [options] (TARGET | -- COMMAND [ARG ...])",
        epilog="TARGET is a URL (http:// or https://) or a server command, quoted when it has spaces.\n\n" + EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("target", nargs="?", metavar="TARGET", help="a server command or an MCP endpoint URL")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the text report")
    add_target_options(parser)
    parser.set_defaults(run=main)


def main(args: argparse.Namespace) -> int:
    return run(
        lambda: target_from(args, args.target, args.command_tail),
        lambda client: _inspect(client, args),
        verbose=args.verbose,
    )


async def _inspect(client: Any, args: argparse.Namespace) -> int:
    info = await gather(client)
    print(render.dumps(info) if args.json else render.report(info))
    return FAILED if info.get("errors") else OK


async def gather(client: Any) -> dict[str, Any]:
    """Everything ``inspect`` shows, as one JSON-ready dict. A list that fails is left out and its
    error recorded under ``errors``."""
    from ..errors import ErrorCode, MCPError

    transport = TRANSPORT_NAMES.get(client.transport, client.transport)
    info: dict[str, Any] = {
        "serverInfo": client.server_info,
        "protocolVersion": client.protocol_version,
        "era": "modern" if client.modern else "legacy",
        "transport": transport,
        "capabilities": client.server_capabilities,
    }
    if client.supported_versions:
        info["supportedVersions"] = client.supported_versions
    if client.instructions:
        info["instructions"] = client.instructions
    errors: dict[str, str] = {}
    for capability, key, method in LISTS:
        if capability not in client.server_capabilities:
            continue
        try:
            info[key] = await getattr(client, method)()
        except MCPError as error:
            if key == "resourceTemplates" and error.code == ErrorCode.METHOD_NOT_FOUND:
                continue  # some servers with resources have no templates method at all
            errors[key] = f"{error.code}: {error.message}"
    if errors:
        info["errors"] = errors
    return info
