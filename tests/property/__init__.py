"""Property tests (hypothesis); a package so their module names cannot clash with tests/."""
