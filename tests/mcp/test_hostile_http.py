"""Streamable HTTP endpoints that refuse, stall, flood or ask things: seri's client answers
each with a clear outcome (tests/mcp/hostile_http_server.py on loopback)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from seri.io.mcp.mcp_hub import McpHub
from tests.mcp.conftest import configs, free_port, parent_environment

SERVER = Path(__file__).resolve().parent / "hostile_http_server.py"

Serve = Callable[..., str]


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Serve]:
    procs: list[subprocess.Popen[bytes]] = []

    def start(mode: str, record: Path | None = None) -> str:
        port = free_port()
        argv = [sys.executable, str(SERVER), mode, str(port)]
        if record is not None:
            argv.append(str(record))
        procs.append(subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        for _ in range(200):
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", port)) == 0:
                    return f"http://127.0.0.1:{port}/mcp"
            time.sleep(0.02)
        raise RuntimeError("the hostile HTTP server did not start")

    yield start
    for proc in procs:
        proc.kill()
        proc.wait()


@contextmanager
def hub_for(url: str, tmp_path: Path, **options: object) -> Iterator[McpHub]:
    """A started hub with the one endpoint, closed afterwards."""
    hub = McpHub(
        configs({"h": {"type": "http", "url": url, "headers": {"X-Token": "tok-123456789"}}}),
        parent_env=parent_environment(),
        project_dir=tmp_path,
        **options,  # type: ignore[arg-type]
    )
    with hub:
        yield hub


def test_a_401_says_how_to_give_a_token(serve: Serve, tmp_path: Path) -> None:
    with hub_for(serve("unauthorized"), tmp_path) as hub:
        status = hub.wait_ready(10)[0]
    assert status.state == "failed"
    assert "wants authorization (HTTP 401)" in status.message
    assert '"headers"' in status.message
    assert "tok-123456789" not in status.message


def test_an_endpoint_that_never_answers_fails_within_the_bound(
    serve: Serve, tmp_path: Path
) -> None:
    started = time.monotonic()
    with hub_for(serve("silent"), tmp_path, startup_timeout=1.5, probe_timeout=0.3) as hub:
        status = hub.wait_ready(10)[0]
    assert time.monotonic() - started < 5
    assert status.state == "failed"
    assert "within" in status.message


def test_plain_json_answers_without_a_session_work(serve: Serve, tmp_path: Path) -> None:
    with hub_for(serve("plain"), tmp_path) as hub:
        status = hub.wait_ready(10)[0]
        assert (status.state, status.era, status.version) == ("ready", "legacy", "2025-06-18")
        assert hub.call("mcp__h__echo", {"text": "json body"}).text == "json body"


def test_a_body_over_the_limit_is_refused(serve: Serve, tmp_path: Path) -> None:
    with hub_for(serve("huge"), tmp_path, max_message_bytes=1024 * 1024) as hub:
        hub.wait_ready(10)
        outcome = hub.call("mcp__h__echo", {"text": "x"})
    assert outcome.kind == "protocol"
    assert "limit of 1 MiB" in outcome.text


def test_a_request_from_the_server_on_the_stream_is_answered(serve: Serve, tmp_path: Path) -> None:
    record = tmp_path / "received.jsonl"
    with hub_for(serve("asks-client", record), tmp_path) as hub:
        hub.wait_ready(10)
        assert hub.call("mcp__h__echo", {"text": "after ping"}).text == "after ping"
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            seen = [json.loads(line) for line in record.read_text().splitlines()]
            if any(s["body"].get("id") == "srv-1" for s in seen):
                break
            time.sleep(0.02)
    (reply,) = [s for s in seen if s["body"].get("id") == "srv-1"]
    assert reply["body"] == {"jsonrpc": "2.0", "id": "srv-1", "result": {}}
    # The entry's header went with every POST; the negotiated version with all after the
    # handshake (the probe and initialize itself carry none or the modern one).
    assert {s["token"] for s in seen} == {"tok-123456789"}
    after = [s for s in seen if s["body"].get("method") not in ("server/discover", "initialize")]
    assert {s["version"] for s in after} == {"2025-06-18"}


def test_a_stream_that_ends_without_an_answer_is_an_outcome(serve: Serve, tmp_path: Path) -> None:
    with hub_for(serve("no-answer-stream"), tmp_path) as hub:
        hub.wait_ready(10)
        outcome = hub.call("mcp__h__echo", {"text": "x"})
    assert outcome.kind == "protocol"
    assert "ended its event stream without answering" in outcome.text
