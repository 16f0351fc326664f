"""The property tests of the tools room."""
