"""The tests of the tools room."""
