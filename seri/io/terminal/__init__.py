"""The terminal's streams, the pager, and the keys pressed while a task runs."""
