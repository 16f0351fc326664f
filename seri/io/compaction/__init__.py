"""Compaction's side effects: evicted rows purged, costs read, spill files."""
