"""The Agent Client Protocol's wire and updates."""
