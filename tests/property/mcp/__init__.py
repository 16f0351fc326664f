"""The property tests of the mcp room."""
