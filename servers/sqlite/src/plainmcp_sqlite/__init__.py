"""plainmcp-sqlite: explore and query a SQLite database over MCP, read-only unless the operator says otherwise.

Tools (``query``, ``list_tables``, ``describe_table``, ``explain_query``, and ``execute`` with
``--allow-write``), the schema and each table as resources with subscriptions, and two prompts; every
statement bounded in time and memory. ``build_server(Config(db=path))`` returns the
:class:`plainmcp.Server`; ``python -m plainmcp_sqlite`` serves it.
"""

from __future__ import annotations

#: The one place the version is written: pyproject.toml reads it ([tool.hatch.version]). A literal,
#: because reading the installed metadata would cost ~14 ms of every start-up. Before the imports: server.py reads it.
__version__ = "0.1.0"

from .config import Config
from .server import build_server

__all__ = ["Config", "__version__", "build_server"]
