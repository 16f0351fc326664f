"""Recording toggles, ageing, and ATIF and OTLP export, live or stored."""
