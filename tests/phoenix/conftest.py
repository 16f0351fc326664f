"""The Phoenix tier (`make test-phoenix`): seri's OTLP export read back from Arize Phoenix.

Not part of `make test`: Phoenix is a large install (arize-phoenix from PyPI, some 850 MB,
in its own venv under .cache/phoenix/) and takes 10 to 40 seconds to start. Without
SERI_PHOENIX (the path of its `phoenix` program) these tests are not collected at all.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

PHOENIX = os.environ.get("SERI_PHOENIX", "")
START_SECONDS = 180

if not PHOENIX:
    collect_ignore_glob = ["test_*.py"]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class Phoenix:
    """`phoenix serve` on loopback, with its own working directory (SQLite store)."""

    def __init__(self, workdir: Path) -> None:
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._log = (workdir / "phoenix.log").open("w")
        env = {
            **os.environ,
            "PHOENIX_HOST": "127.0.0.1",
            "PHOENIX_PORT": str(self.port),
            "PHOENIX_GRPC_PORT": str(_free_port()),
            "PHOENIX_WORKING_DIR": str(workdir),
            "PHOENIX_TELEMETRY_ENABLED": "false",
        }
        self.process = subprocess.Popen(
            [PHOENIX, "serve"], stdout=self._log, stderr=subprocess.STDOUT, env=env
        )
        self.log = workdir / "phoenix.log"

    def wait(self) -> None:
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                pytest.fail(f"phoenix exited: {self.log.read_text()[-2000:]}")
            try:
                if httpx.get(f"{self.url}/healthz", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        pytest.fail(f"phoenix did not start in {START_SECONDS} s: {self.log.read_text()[-2000:]}")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self._log.close()


@pytest.fixture(scope="session")
def phoenix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Phoenix]:
    server = Phoenix(tmp_path_factory.mktemp("phoenix"))
    try:
        server.wait()
        yield server
    finally:
        server.stop()
