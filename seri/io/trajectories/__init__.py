"""Recording runs and reading them back, pruning them, sending OTLP."""
