"""The model's tools: their records, arguments, outcomes, edits, shell commands."""
