"""How long the fuzzers of external input hunt: ``FUZZ_EXAMPLES`` examples per surface (8
unless set, so in ``make test``: each runs seri in a process, ~0.4 s an example on CI's 2
cores; ``make fuzz`` is the long hunt, 300). The settings are those of fuzzers that run seri
or a server as a subprocess per example: no per-example deadline, the same examples every
run, and fixtures shared across examples on purpose.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "8"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
