"""plainmcp: a small, hand-written core for Model Context Protocol servers and clients.

Everything a server or script needs is importable from here; submodules are implementation.
Names are loaded on first use, so a server that never acts as a client never imports the client,
and ``import plainmcp.jsonrpc`` stays free of anyio (the wire layer is sans-I/O).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# public name -> submodule that defines it
_EXPORTS: dict[str, str] = {
    "ALL_VERSIONS": "versions",
    "APP_MIME": "apps",
    "Cached": "state.cache",
    "Client": "client",
    "Context": "context",
    "ErrorCode": "errors",
    "LATEST": "versions",
    "LATEST_LEGACY": "versions",
    "LEGACY_VERSIONS": "versions",
    "MCPError": "errors",
    "MODERN_VERSIONS": "versions",
    "Prompt": "prompts",
    "PromptArgument": "prompts",
    "Resource": "resources",
    "ResourceTemplate": "resources",
    "Server": "server",
    "ServerCache": "state.cache",
    "ServerExited": "spawned",
    "SharedStateUnavailable": "state",
    "SkillsClient": "skills_client",
    "StartupError": "command_line",
    "Tool": "tools",
    "ToolAnnotations": "tools",
    "ToolError": "tools",
    "ToolResult": "tools",
    "UI_EXTENSION": "apps",
    "add_app_view": "apps",
    "app_tool_meta": "apps",
    "app_view_document": "apps",
    "app_view_script": "apps",
    "connect_stdio": "stdio",
    "content": "content",
    "defer_collection": "startup",
    "demo": "demo",
    "inputs": "inputs",
    "json_codec": "json_codec",
    "open_client": "client",
    "pagination": "pagination",
    "run_stdio": "stdio",
    "env_list_option": "command_line",
    "env_option": "command_line",
    "env_switch": "command_line",
    "serve": "command_line",
    "server_arguments": "command_line",
    "server_cache": "state.cache",
    "skills": "skills",
    "run_server_command": "command_line",
    "setup_logging": "command_line",
    "watchfiles_polling": "watch_rules",
}

#: public names that are modules of their own
_MODULES = frozenset({"content", "demo", "inputs", "json_codec", "pagination", "skills"})

__all__ = [
    "ALL_VERSIONS",
    "APP_MIME",
    "Cached",
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
    "ServerCache",
    "ServerExited",
    "SharedStateUnavailable",
    "SkillsClient",
    "StartupError",
    "Tool",
    "ToolAnnotations",
    "ToolError",
    "ToolResult",
    "UI_EXTENSION",
    "add_app_view",
    "app_tool_meta",
    "app_view_document",
    "app_view_script",
    "connect_stdio",
    "content",
    "defer_collection",
    "demo",
    "env_list_option",
    "env_option",
    "env_switch",
    "inputs",
    "json_codec",
    "open_client",
    "pagination",
    "run_server_command",
    "run_stdio",
    "serve",
    "server_arguments",
    "server_cache",
    "setup_logging",
    "skills",
    "watchfiles_polling",
]


def __getattr__(name: str) -> Any:
    module_name = _EXPORTS.get(name)
    if module_name is None:
        raise AttributeError(f"module 'plainmcp' has no attribute {name!r}")
    module = importlib.import_module(f".{module_name}", __name__)
    value = module if name in _MODULES else getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])


if TYPE_CHECKING:
    from . import content, demo, inputs, json_codec, pagination, skills
    from .apps import APP_MIME, UI_EXTENSION, add_app_view, app_tool_meta, app_view_document, app_view_script
    from .client import Client, open_client
    from .command_line import (
        StartupError,
        env_list_option,
        env_option,
        env_switch,
        run_server_command,
        serve,
        server_arguments,
        setup_logging,
    )
    from .context import Context
    from .errors import ErrorCode, MCPError
    from .prompts import Prompt, PromptArgument
    from .resources import Resource, ResourceTemplate
    from .server import Server
    from .skills_client import SkillsClient
    from .spawned import ServerExited
    from .startup import defer_collection
    from .state import SharedStateUnavailable
    from .state.cache import Cached, ServerCache, server_cache
    from .stdio import connect_stdio, run_stdio
    from .tools import Tool, ToolAnnotations, ToolError, ToolResult
    from .versions import ALL_VERSIONS, LATEST, LATEST_LEGACY, LEGACY_VERSIONS, MODERN_VERSIONS
    from .watch_rules import watchfiles_polling
