"""The tests of the acp room."""
