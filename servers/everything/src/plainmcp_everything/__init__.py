"""plainmcp-everything: the conformance fixture, one of every MCP feature under the names the official
conformance suite (``@modelcontextprotocol/conformance``) expects.

``build_server(Config())`` returns the :class:`plainmcp.Server`; ``python -m plainmcp_everything`` serves it.
"""

from __future__ import annotations

#: The one place the version is written: pyproject.toml reads it ([tool.hatch.version]). A literal,
#: because reading the installed metadata would cost ~14 ms of every start-up. Before the imports: server.py reads it.
__version__ = "0.1.0"

from .config import Config
from .server import build_server

__all__ = ["Config", "__version__", "build_server"]
