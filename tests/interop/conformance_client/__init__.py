"""The conformance client: what the official suite's ``conformance client --command`` runs.

The suite starts one scenario server per scenario and runs the command with the server's URL as
its last argument, the scenario's name in ``MCP_CONFORMANCE_SCENARIO``, the revision it speaks in
``MCP_CONFORMANCE_PROTOCOL_VERSION`` and, for scenarios that hand the client credentials, a JSON
object in ``MCP_CONFORMANCE_CONTEXT``. From the checkout's root::

    python -m tests.interop.conformance_client http://localhost:PORT/mcp

Every scenario module exposes ``async def run(scenario: str, url: str, context: dict) -> None``
and is built only on the public client API (``plainmcp.http_client.connect_http`` and
:class:`plainmcp.Client`'s methods), so the suite judges the real client, not a test double:
``auth/*`` is ``auth.py``, ``sep-2640-client-*`` is ``skills.py``, everything else ``core.py``.
A scenario that fails raises; the process then exits non-zero with the reason on stderr.
"""

from __future__ import annotations

import os

#: The revision a scenario server speaks when the suite does not say (the suite's own default).
DEFAULT_PROTOCOL_VERSION = "2025-11-25"


def protocol_version() -> str:
    """The revision the suite runs this scenario at (``MCP_CONFORMANCE_PROTOCOL_VERSION``)."""
    return os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION") or DEFAULT_PROTOCOL_VERSION
