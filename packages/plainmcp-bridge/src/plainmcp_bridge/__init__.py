"""plainmcp-bridge: local models use MCP servers through a validating interceptor.

The interceptor (:mod:`plainmcp_bridge.interceptor`) has no I/O and can be used on its own.
"""

from __future__ import annotations

__version__ = "0.1.0"
