claude mcp add --transport stdio weather -- /home/you/.local/bin/plainmcp-weather
