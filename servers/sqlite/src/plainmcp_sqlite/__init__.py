"""plainmcp-sqlite: explore and query a SQLite database over MCP, read-only unless the operator says otherwise.

Tools (``query``, ``list_tables``, ``describe_table``, ``explain_query``, and ``execute`` with
``--allow-write``), the schema and each table as resources with subscriptions, and two prompts; every
statement bounded in time and memory. ``build_server(Config(db=path))`` returns the
:class:`plainmcp.Server`; ``python -m plainmcp_sqlite`` serves it.
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
