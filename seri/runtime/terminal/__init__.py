"""seri chat on a terminal: the view, the prompt, slash commands."""
