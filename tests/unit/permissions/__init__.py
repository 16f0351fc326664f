"""The tests of the permissions room."""
