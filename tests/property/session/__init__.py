"""The property tests of the session room."""
