"""plainmcp-prompts: a prompt library kept as Markdown files, served as MCP prompts.

Prompts with arguments, completion and live reload, in three formats (plainmcp, Claude Code command
files, VS Code prompt files); each prompt's source is a resource, and two tools (``list_prompts``,
``render_prompt``) serve clients that only use tools. ``build_server(Config(dirs=(...,)))`` returns
the :class:`plainmcp.Server`; ``python -m plainmcp_prompts`` serves it.
"""

from __future__ import annotations

#: The one place the version is written: pyproject.toml reads it ([tool.hatch.version]). A literal,
#: because reading the installed metadata would cost ~14 ms of every start-up. Before the imports: server.py reads it.
__version__ = "0.1.0"

from .config import Config
from .server import build_server

__all__ = ["Config", "__version__", "build_server"]
