claude mcp add --transport stdio everything -- /home/you/.local/bin/plainmcp-everything
