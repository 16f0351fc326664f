"""The tests of the compaction room."""
