"""MCP servers: their configuration, protocol eras, tools and results."""
