"""Whether a call may run: rules, approvals, trust, protected paths, sandbox."""
