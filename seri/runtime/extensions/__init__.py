"""A session's hooks and skills, and the person's approvals of them."""
