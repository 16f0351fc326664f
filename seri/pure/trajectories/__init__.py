"""Trajectories: the events recorded, redaction, retention, ATIF and OTLP."""
