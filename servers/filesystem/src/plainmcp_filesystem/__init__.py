"""plainmcp-filesystem: safe file access over MCP, with live resource subscriptions."""
