"""`make bench`: seri's performance against its peers and the physical floor (see run.py)."""
