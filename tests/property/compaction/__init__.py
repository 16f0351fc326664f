"""The property tests of the compaction room."""
