"""plainmcp-prompts: a prompt library kept as Markdown files, served as MCP prompts.

Prompts with arguments, completion and live reload, in three formats (plainmcp, Claude Code command
files, VS Code prompt files); each prompt's source is a resource, and two tools (``list_prompts``,
``render_prompt``) serve clients that only use tools. ``build_server(Config(dirs=(...,)))`` returns
the :class:`plainmcp.Server`; ``python -m plainmcp_prompts`` serves it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

#: The one place the version is written: pyproject.toml reads it ([tool.hatch.version]). A literal,
#: because reading the installed metadata would cost ~14 ms of every start-up.
__version__ = "0.1.0"

if TYPE_CHECKING:
    from .config import Config
    from .server import build_server

__all__ = ["Config", "__version__", "build_server"]


def __getattr__(name: str) -> Any:
    # Loaded on first use: the command (``__main__``) must run before the server's modules import.
    value: Any
    if name == "Config":
        from .config import Config as value
    elif name == "build_server":
        from .server import build_server as value
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value
