"""The tests of the extensions room."""
