"""The tests of the trajectories room."""
