"""A chat's MCP servers as tools, and seri mcp."""
