"""How long the fuzzers of external input hunt: ``FUZZ_EXAMPLES`` examples per surface (15
unless set; ``make fuzz`` sets 300). The settings are those of fuzzers that run seri or a
server as a subprocess per example: no per-example deadline, the same examples every run,
and fixtures shared across examples on purpose.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "15"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
