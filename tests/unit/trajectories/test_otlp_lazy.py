"""Export off costs nothing at start-up (issue 18): no command but `trajectory export
--format otlp` imports the OTLP or GenAI modules, nor httpx for them, and a whole
`seri chat -p` run with no endpoint named imports none of them either."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from scripts.fake_model import FakeModel
from tests.conftest import seri_env
from tests.e2e.test_chat import KEY
from tests.otlp_receiver import OtlpReceiver

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


def _modules_after_chat(seri_home: Path, project: Path, **env: str) -> list[str]:
    """The telemetry modules a whole `seri chat -p` run imported (against the loopback
    model), as the process saw them at its end."""
    probe = (
        "import atexit, sys\n"
        "atexit.register(lambda: print('LOADED', ' '.join(m for m in sys.modules"
        f" if any(w in m for w in {TELEMETRY_MODULES!r}))))\n"
        "from seri.commands.main import main\n"
        "sys.argv = ['seri', 'chat', '-p', 'hi']\n"
        "sys.exit(main())\n"
    )
    with FakeModel([{"text": "hello"}]) as fake:
        done = subprocess.run(
            [sys.executable, "-c", probe],
            check=False,
            capture_output=True,
            text=True,
            cwd=project,
            env=seri_env(
                seri_home, {"SERI_BASE_URL": fake.base_url, "OPENROUTER_API_KEY": KEY, **env}
            ),
            timeout=60,
        )
    assert done.returncode == 0, done.stderr
    (line,) = (line for line in done.stdout.splitlines() if line.startswith("LOADED"))
    return line.split()[1:]


def test_a_chat_run_with_export_off_imports_none_of_it(seri_home: Path, project: Path) -> None:
    assert _modules_after_chat(seri_home, project) == []
    # The probe can fail: with an endpoint named, the same run loads the export.
    with OtlpReceiver() as receiver:
        loaded = _modules_after_chat(
            seri_home, project, OTEL_EXPORTER_OTLP_ENDPOINT=receiver.endpoint
        )
    assert "seri.runtime.trajectories.otlp_live" in loaded
