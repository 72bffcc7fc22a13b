"""plainmcp-prompts: a prompt library kept as Markdown files, served as MCP prompts.

Prompts with arguments, completion and live reload, in three formats (plainmcp, Claude Code command
files, VS Code prompt files); each prompt's source is a resource, and two tools (``list_prompts``,
``render_prompt``) serve clients that only use tools. ``build_server(Config(dirs=(...,)))`` returns
the :class:`plainmcp.Server`; ``python -m plainmcp_prompts`` serves it.
"""

from __future__ import annotations

import importlib.metadata

from .config import Config
from .server import build_server

__version__ = importlib.metadata.version("plainmcp-prompts")

__all__ = ["Config", "__version__", "build_server"]
