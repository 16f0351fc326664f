"""The tests, grouped by the rooms of seri they test."""
