"""The OS sandbox around bash, stand-ins, the reaper, and session rules."""
