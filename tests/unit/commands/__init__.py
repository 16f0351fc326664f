"""The tests of the commands room."""
