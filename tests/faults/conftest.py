"""The fault and attack suite (issue 7): reliability-anchors §5, S1–S10, P1–P7, T1–T8, B1–B5.

Every test drives the installed ``seri`` (or its command line run through ``seri_child.py``
when a fault must be put inside the process) against real SQLite files and the loopback fake
model, and reports what it injected and survived to the ``fault_ledger`` (``ledger.py``),
whose totals close the test session's output.
"""
