"""plainmcp: a small, hand-written core for Model Context Protocol servers and clients.

Everything a server or script needs is importable from here; submodules are implementation.
"""

from . import content
from .client import Client, connect_stdio, open_client
from .context import Context
from .errors import ErrorCode, MCPError
from .prompts import Prompt, PromptArgument
from .resources import Resource, ResourceTemplate
from .server import Server
from .tools import Tool, ToolAnnotations, ToolError, ToolResult
from .versions import ALL_VERSIONS, LATEST, LATEST_LEGACY, LEGACY_VERSIONS, MODERN_VERSIONS

__version__ = "0.1.0"

__all__ = [
    "ALL_VERSIONS",
    "Client",
    "Context",
    "ErrorCode",
    "LATEST",
    "LATEST_LEGACY",
    "LEGACY_VERSIONS",
    "MCPError",
    "MODERN_VERSIONS",
    "Prompt",
    "PromptArgument",
    "Resource",
    "ResourceTemplate",
    "Server",
    "Tool",
    "ToolAnnotations",
    "ToolError",
    "ToolResult",
    "connect_stdio",
    "content",
    "open_client",
]
