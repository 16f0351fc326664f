"""MCP servers, connected: stdio and HTTP transports, sessions, the hub."""
