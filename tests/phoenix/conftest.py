"""The Phoenix tier (`make test-phoenix`): seri's OTLP export read back from Arize Phoenix.

Not part of `make test`: Phoenix is a large install (arize-phoenix from PyPI, some 850 MB,
in its own venv under .cache/phoenix/) and takes 10 to 40 seconds to start. Without
SERI_PHOENIX (the path of its `phoenix` program) these tests are not collected at all.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.server_process import free_port, stop_process, wait_healthy

PHOENIX = os.environ.get("SERI_PHOENIX", "")
START_SECONDS = 180

if not PHOENIX:
    collect_ignore_glob = ["test_*.py"]


class Phoenix:
    """`phoenix serve` on loopback, with its own working directory (SQLite store)."""

    def __init__(self, workdir: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._log = (workdir / "phoenix.log").open("w")
        env = {
            **os.environ,
            "PHOENIX_HOST": "127.0.0.1",
            "PHOENIX_PORT": str(self.port),
            "PHOENIX_GRPC_PORT": str(free_port()),
            "PHOENIX_WORKING_DIR": str(workdir),
            "PHOENIX_TELEMETRY_ENABLED": "false",
        }
        self.process = subprocess.Popen(
            [PHOENIX, "serve"], stdout=self._log, stderr=subprocess.STDOUT, env=env
        )
        self.log = workdir / "phoenix.log"

    def wait(self) -> None:
        why_not = wait_healthy(self.process, f"{self.url}/healthz", START_SECONDS)
        if why_not:
            pytest.fail(f"phoenix did not start: {why_not}: {self.log.read_text()[-2000:]}")

    def stop(self) -> None:
        stop_process(self.process, grace=20)
        self._log.close()


@pytest.fixture(scope="session")
def phoenix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Phoenix]:
    server = Phoenix(tmp_path_factory.mktemp("phoenix"))
    try:
        server.wait()
        yield server
    finally:
        server.stop()
