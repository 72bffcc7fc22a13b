"""plainmcp-everything: the conformance fixture, one of every MCP feature under the names the official
conformance suite (``@modelcontextprotocol/conformance``) expects.

``build_server(Config())`` returns the :class:`plainmcp.Server`; ``python -m plainmcp_everything`` serves it.
"""

from __future__ import annotations

import importlib.metadata

from .config import Config
from .server import build_server

__version__ = importlib.metadata.version("plainmcp-everything")

__all__ = ["Config", "__version__", "build_server"]
