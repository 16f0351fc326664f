"""The property tests of the provider room."""
