"""The SQLite store: its schema, sessions, messages, leases, search and tags."""
