"""seri compact: the plan and the work."""
