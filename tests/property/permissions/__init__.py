"""The property tests of the permissions room."""
