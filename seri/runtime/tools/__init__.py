"""The tool host, the check command after a write, memory review and the prompt's !command."""
