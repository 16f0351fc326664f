"""seri acp: the Agent Client Protocol's server over stdio."""
