"""The tests of the session room."""
