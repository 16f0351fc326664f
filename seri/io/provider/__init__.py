"""The HTTP clients and the chat-completions provider."""
