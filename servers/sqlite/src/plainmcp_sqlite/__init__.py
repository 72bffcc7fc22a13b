"""plainmcp-sqlite: explore and query a SQLite database over MCP, read-only unless the operator says otherwise.

Tools (``query``, ``list_tables``, ``describe_table``, ``explain_query``, and ``execute`` with
``--allow-write``), the schema and each table as resources with subscriptions, and two prompts; every
statement bounded in time and memory. ``build_server(Config(db=path))`` returns the
:class:`plainmcp.Server`; ``python -m plainmcp_sqlite`` serves it.
"""

from __future__ import annotations

import importlib.metadata

from .config import Config
from .server import build_server

__version__ = importlib.metadata.version("plainmcp-sqlite")

__all__ = ["Config", "__version__", "build_server"]
