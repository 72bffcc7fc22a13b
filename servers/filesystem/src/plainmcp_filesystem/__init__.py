"""plainmcp-filesystem: safe file access over MCP, with live resource subscriptions.

``build_server(Config(roots=("~/notes",)))`` returns the :class:`plainmcp.Server`;
``plainmcp-filesystem DIR [DIR...]`` (``python -m plainmcp_filesystem``) serves it.

The two names below are loaded on first use: the regular-expression search worker
(``python -m plainmcp_filesystem.grep_worker``) imports this package too, and must start in a few
tens of milliseconds, without the server or ``plainmcp``.
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
    value: Any
    if name == "Config":
        from .config import Config as value
    elif name == "build_server":
        from .server import build_server as value
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value
