"""The property tests of the inputs room."""
