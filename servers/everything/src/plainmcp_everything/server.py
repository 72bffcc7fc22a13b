"""Wiring: one :class:`plainmcp.Server` with every fixture the conformance suite expects.

The capabilities follow from what is registered (tools, resources with subscriptions, prompts,
completions, logging), each with ``listChanged``. Each module registers one family; the README maps
every protocol feature to the code that shows it.
"""

from __future__ import annotations

from plainmcp import Server

from . import changes, input_required, prompts, resources, tools

NAME = "plainmcp-everything"
VERSION = "0.1.0"

INSTRUCTIONS = (
    "A conformance fixture: every tool, resource and prompt is named test_* or test://* after what it tests, "
    "and returns fixed content. Nothing here does real work."
)


def build_server(*, state_key: bytes | None = None) -> Server:
    """The fixture server. A pure factory: nothing runs, and no I/O happens, until a transport serves it.

    ``state_key`` seals the 2026-07-28 ``requestState`` (random per process when None; give every
    process behind one endpoint the same key).
    """
    server = Server(
        NAME,
        VERSION,
        title="Everything (MCP conformance fixture)",
        description="Every MCP feature, under the names the official conformance suite expects",
        instructions=INSTRUCTIONS,
        resource_subscriptions=True,
        state_key=state_key,
    )
    # Registration order is listing order: the suite's caching check reads the first resource listed.
    tools.register(server)
    resources.register(server)
    prompts.register(server)
    input_required.register(server)
    changes.register(server)
    return server
