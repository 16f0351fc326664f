"""The model server: the wire format, streams, failures, retries, windows."""
