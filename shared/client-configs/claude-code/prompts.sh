claude mcp add --transport stdio prompts -- /home/you/.local/bin/plainmcp-prompts --dir '~/prompts'
