"""Export off costs nothing at start-up (issue 18): no command but `trajectory export
--format otlp` imports the OTLP or GenAI modules, nor httpx for them."""

from __future__ import annotations

import subprocess
import sys

import pytest

TELEMETRY_MODULES = ("otlp", "genai", "trajectory_reader")


@pytest.mark.parametrize(
    "module",
    [
        "seri.commands.main",
        "seri.commands.chat",
        "seri.commands.sessions",
        "seri.commands.trajectory",
    ],
)
def test_commands_do_not_import_the_export(module: str) -> None:
    probe = (
        f"import sys, {module}\n"
        f"print(' '.join(m for m in sys.modules if any(w in m for w in {TELEMETRY_MODULES!r})))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout.split()
    assert loaded == []
