"""Shared fixtures: a private profile per test and a way to run the installed `seri`."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

REPO = Path(__file__).resolve().parent.parent
# The older release's example sessions, vendored from shared/fixtures.
FIXTURES = REPO / "tests" / "fixtures"
SERI = str(Path(sys.executable).with_name("seri"))

RunSeri = Callable[..., subprocess.CompletedProcess[str]]

# Hypothesis profiles. "dev", the default, is quick for the edit-and-test loop; "ci"
# (HYPOTHESIS_PROFILE=ci, which `make test` sets) runs hypothesis' own default of 100
# examples, and "deep" (`make deep`) 500, the long version CI's 10 minutes have no room for.
# Both drop the per-example deadline and the too-slow health check, which a loaded 2-core
# machine turns into noise (a strategy slow to generate under load says nothing about seri).
# A test that sets max_examples itself keeps its own count under every profile.
settings.register_profile("dev", max_examples=30)
for _name, _examples in (("ci", 100), ("deep", 500)):
    settings.register_profile(
        _name,
        max_examples=_examples,
        deadline=None,
        print_blob=True,
        suppress_health_check=[HealthCheck.too_slow],
    )
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))

# A pytest started in the background by a shell without job control (`make test &` in a
# script) inherits SIGINT and SIGQUIT ignored, as POSIX has it, and so would every seri the
# tests start: Ctrl-C, the interrupt tests' whole subject, would reach none of them. The
# tests run as from a terminal, whatever started them.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
if signal.getsignal(signal.SIGQUIT) == signal.SIG_IGN:
    signal.signal(signal.SIGQUIT, signal.SIG_DFL)

# The fault suite's ledger prints its summary from the xdist controller, which loads only
# this conftest (it never collects, so tests/faults/conftest.py is not loaded there). The
# users seri runs as in the security tests (root, a throwaway normal user) serve tests/mcp too.
pytest_plugins = ("tests.faults.ledger", "tests.faults.users")


@pytest.fixture
def seri_home(tmp_path: Path) -> Path:
    return tmp_path / "profile"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return Path(os.path.realpath(path))


def seri_env(home: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("SERI_") and key not in ("OPENROUTER_API_KEY",)
    }
    # The model the loopback fake serves. The default model (Anthropic's) would be sent
    # prompt-cache markers; the tests about caching ask for such a model themselves.
    env.update(
        {"SERI_HOME": str(home), "TZ": "UTC", "PYTHONUNBUFFERED": "1", "SERI_MODEL": "fake/model"}
    )
    # Long output on a terminal goes through a pager; the tests of the pager ask for one.
    env["SERI_PAGER"] = "cat"
    env.update(extra or {})
    return env


@pytest.fixture
def run_seri(seri_home: Path, project: Path) -> RunSeri:
    """Run the installed `seri` as a real subprocess in the test's project directory."""

    def run(
        *args: str,
        input: str | None = None,
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
        timeout: float = 60,
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [SERI, *args],
            input=input,
            capture_output=True,
            text=True,
            env=seri_env(seri_home, env),
            cwd=cwd or project,
            timeout=timeout,
            check=False,
        )

    return run
