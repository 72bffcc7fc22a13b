"""plainmcp-sqlite: explore and query a SQLite database over MCP, read-only unless the operator says otherwise."""

__version__ = "0.1.0"
