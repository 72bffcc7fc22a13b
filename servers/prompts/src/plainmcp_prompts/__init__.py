"""plainmcp-prompts: a prompt library kept as Markdown files, served as MCP prompts."""
