claude mcp add --transport stdio filesystem -- /home/you/.local/bin/plainmcp-filesystem '~/notes'
