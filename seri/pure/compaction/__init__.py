"""Compaction: the cut, the fold, the recap, the shrink ladder, the window."""
