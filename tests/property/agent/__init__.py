"""The property tests of the agent room."""
