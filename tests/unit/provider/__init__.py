"""The tests of the provider room."""
