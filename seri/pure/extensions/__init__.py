"""What a person or project adds to a session: hooks and Agent Skills."""
