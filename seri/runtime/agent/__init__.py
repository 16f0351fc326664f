"""The agent put together and run: interpreter, ports, subagents, goals, -p."""
