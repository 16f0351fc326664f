"""The property tests of the acp room."""
