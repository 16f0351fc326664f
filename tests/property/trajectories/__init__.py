"""The property tests of the trajectories room."""
