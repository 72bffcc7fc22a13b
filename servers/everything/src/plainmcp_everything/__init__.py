"""plainmcp-everything: the conformance fixture, one of every MCP feature under the names the official
conformance suite (``@modelcontextprotocol/conformance``) expects.

``build_server()`` returns the :class:`plainmcp.Server`; ``python -m plainmcp_everything`` serves it.
"""

from __future__ import annotations

from .server import VERSION, build_server

__version__ = VERSION

__all__ = ["__version__", "build_server"]
