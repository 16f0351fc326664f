"""The property tests of the terminal room."""
