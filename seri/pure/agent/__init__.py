"""The agent loop's decisions: a task's turns, its effects, goals, the prompt."""
