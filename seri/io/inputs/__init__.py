"""Reading config.json and the prompt files."""
