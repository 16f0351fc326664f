"""`seri chat` against a fake model server we did not write: @copilotkit/aimock, from npm.

The test's own setup installs aimock (pinned) into .cache/aimock and starts it on a free
loopback port. It checks seri's SSE parsing, tool loop, OpenRouter error envelopes and
outbound requests against someone else's reading of the OpenRouter protocol.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO, RunSeri
from tests.request_schema import assert_valid_request

AIMOCK_VERSION = "1.43.0"
PREFIX = REPO / ".cache" / "aimock"
KEY = "sk-or-v1-" + "cd34" * 16


def _install() -> Path:
    binary = PREFIX / "node_modules" / ".bin" / "llmock"
    if binary.exists():
        return binary
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed")
    PREFIX.mkdir(parents=True, exist_ok=True)
    # A file lock keeps the two xdist workers from installing at once.
    import fcntl

    with (PREFIX / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not binary.exists():
            subprocess.run(
                [
                    "npm",
                    "install",
                    "--no-audit",
                    "--no-fund",
                    "--prefix",
                    str(PREFIX),
                    f"@copilotkit/aimock@{AIMOCK_VERSION}",
                ],
                check=True,
                capture_output=True,
                timeout=300,
            )
    return binary


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


FIXTURES: dict[str, Any] = {
    "fixtures": [
        {
            "match": {"userMessage": "make notes", "hasToolResult": False},
            "response": {
                "toolCalls": [
                    {
                        "name": "write_file",
                        "arguments": json.dumps(
                            {"path": "notes.txt", "content": "aimock was here\n"}
                        ),
                    }
                ]
            },
            "openRouterProcessing": True,
            "chunkSize": 5,
        },
        {
            "match": {"userMessage": "make notes", "hasToolResult": True},
            "response": {"content": "Wrote notes.txt."},
            "chunkSize": 3,
        },
        {
            "match": {"userMessage": "too long please"},
            "response": {
                "error": {
                    "message": (
                        "This endpoint's maximum context length is 8192 tokens. "
                        "However, you requested about 9000 tokens."
                    ),
                    "code": 400,
                },
                "status": 400,
            },
        },
        {"match": {"userMessage": "hello"}, "response": {"content": "Hello from aimock!"}},
    ]
}


@pytest.fixture(scope="module")
def aimock(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    binary = _install()
    directory = tmp_path_factory.mktemp("aimock")
    (directory / "fixtures.json").write_text(json.dumps(FIXTURES))
    port = _free_port()
    proc = subprocess.Popen(
        [
            str(binary),
            "-p",
            str(port),
            "-h",
            "127.0.0.1",
            "-f",
            str(directory),
            "--log-level",
            "warn",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 20
    while True:
        try:
            urllib.request.urlopen(f"{base}/api/v1/models", timeout=1).read()
            break
        except OSError:
            if time.monotonic() > deadline or proc.poll() is not None:
                proc.kill()
                pytest.fail("aimock did not start")
            time.sleep(0.1)
    try:
        yield base
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def journal(base: str) -> list[dict[str, Any]]:
    with urllib.request.urlopen(f"{base}/__aimock/journal", timeout=5) as response:
        entries: list[dict[str, Any]] = json.loads(response.read())
    return entries


def env_for(base: str) -> dict[str, str]:
    return {
        "SERI_BASE_URL": f"{base}/api/v1",
        "OPENROUTER_API_KEY": KEY,
        "SERI_MODEL": "qwen/qwen3-coder",
    }


def test_plain_answer(aimock: str, run_seri: RunSeri) -> None:
    result = run_seri("chat", "-p", "hello", env=env_for(aimock))
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Hello from aimock!\n"


def test_tool_loop_with_fragmented_calls_and_comments(
    aimock: str, run_seri: RunSeri, project: Path, seri_home: Path
) -> None:
    seri_home.mkdir(parents=True, exist_ok=True)
    config = {
        "provider": {"order": ["openai"], "allow_fallbacks": False},
        "reasoning": {"effort": "low"},
    }
    (seri_home / "config.json").write_text(json.dumps(config))
    result = run_seri("chat", "--allow", "write_file", "-p", "make notes", env=env_for(aimock))
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Wrote notes.txt.\n"
    assert (project / "notes.txt").read_text() == "aimock was here\n"
    bodies = [
        entry["body"] for entry in journal(aimock) if "make notes" in json.dumps(entry.get("body"))
    ]
    assert len(bodies) >= 2
    for body in bodies[-2:]:
        assert_valid_request(body)
        assert body["provider"] == config["provider"]
        assert body["reasoning"] == {"effort": "low"}
        assert body["tools"], "tools go in every request"


def test_overflow_envelope_is_recognised(aimock: str, run_seri: RunSeri) -> None:
    result = run_seri("chat", "-p", "too long please", env=env_for(aimock))
    assert result.returncode == 1
    assert "too long" in result.stderr or "context" in result.stderr
    assert KEY not in result.stderr


def test_stream_json_of_a_tool_loop_ends_in_one_result(
    aimock: str, run_seri: RunSeri, project: Path
) -> None:
    """The stream and its result record (issue 15) over aimock's own chunking of a tool call."""
    argv = ("chat", "--allow", "write_file", "-p", "make notes", "--output-format", "stream-json")
    result = run_seri(*argv, env=env_for(aimock))
    assert result.returncode == 0, result.stderr
    records = [json.loads(line) for line in result.stdout.splitlines()]
    types = [record["type"] for record in records]
    assert types[0] == "header" and types[-1] == "result" and types.count("result") == 1
    assert "tool_call" in types and "model_call" in types
    final = records[-1]
    assert final["status"] == "done" and final["exit_status"] == 0
    assert final["answer"] == "Wrote notes.txt."
    assert final["usage"]["calls"] == 2
    assert (project / "notes.txt").read_text() == "aimock was here\n"
    assert KEY not in result.stdout


def test_json_result_of_an_overflow_says_overflow_with_exit_1(
    aimock: str, run_seri: RunSeri
) -> None:
    result = run_seri(
        "chat", "-p", "too long please", "--output-format", "json", env=env_for(aimock)
    )
    assert result.returncode == 1
    (record,) = [json.loads(line) for line in result.stdout.splitlines()]
    assert record["type"] == "result" and record["exit_status"] == 1
    assert record["status"] == "overflow"
    assert KEY not in result.stdout
