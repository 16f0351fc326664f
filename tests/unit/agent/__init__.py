"""The tests of the agent room."""
