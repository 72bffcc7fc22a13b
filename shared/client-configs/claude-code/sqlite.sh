claude mcp add --transport stdio sqlite -- /home/you/.local/bin/plainmcp-sqlite --db '~/data/shop.db'
