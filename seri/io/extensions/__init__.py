"""Running hook commands and finding Agent Skills on disk."""
