"""The model port of a real run and the window asked of the provider."""
