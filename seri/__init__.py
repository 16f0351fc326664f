"""seri: a terminal coding agent whose sessions live in SQLite."""

__version__ = "0.1.0"
