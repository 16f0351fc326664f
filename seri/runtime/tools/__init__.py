"""The tool host, memory review and the prompt's !command."""
