"""Sessions as records: messages, leases, titles, imports, how they are shown."""
