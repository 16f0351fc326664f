"""Servers that crash, hang, never answer, flood, or speak an era seri must detect: the hub
keeps working, says what happened, and never raises. Uses tests/mcp/hostile_server.py."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from seri.io.mcp.mcp_hub import McpHub
from tests.mcp.conftest import FAKE_API_KEY, configs, hostile, parent_environment

OpenHub = Callable[..., McpHub]


@pytest.fixture
def open_hub(tmp_path: Path) -> Iterator[OpenHub]:
    hubs: list[McpHub] = []

    def make(entries: dict[str, object], **options: object) -> McpHub:
        hub = McpHub(
            configs(entries),
            parent_env=parent_environment(),
            project_dir=tmp_path,
            known_secrets=(FAKE_API_KEY,),
            **options,
        )
        hubs.append(hub)
        hub.start()
        return hub

    yield make
    for hub in hubs:
        hub.close()


def received(record: Path) -> list[dict[str, Any]]:
    if not record.exists():
        return []
    return [json.loads(line) for line in record.read_text().splitlines()]


def wait_until(condition: Callable[[], object], seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.02)
    raise AssertionError("the condition did not come true in time")


def test_a_crash_during_a_call_is_reported_then_the_server_restarts_once(open_hub: OpenHub) -> None:
    hub = open_hub({"h": hostile("normal")})
    hub.wait_ready(10)
    crashed = hub.call("mcp__h__boom", {})
    assert crashed.kind == "server_exited"
    assert "exited with status 3" in crashed.text
    assert "fatal: boom was called" in crashed.text  # its stderr, for the model and the person
    assert "the call was not repeated" in crashed.text
    wait_until(lambda: hub.statuses()[0].state == "ready")
    assert hub.call("mcp__h__echo", {"text": "back"}).text == "back"
    again = hub.call("mcp__h__boom", {})
    assert again.kind == "server_exited"
    assert "tools are gone" in again.text
    status = hub.statuses()[0]
    assert (status.state, status.restarts) == ("failed", 1)
    assert hub.tools() == ()
    gone = hub.call("mcp__h__echo", {"text": "x"})
    assert gone.kind == "unavailable"
    kinds = [event.kind for event in hub.events()]
    assert kinds == ["restarting", "restarted", "gone"]


def test_a_server_that_dies_between_calls_is_restarted_without_a_call(open_hub: OpenHub) -> None:
    hub = open_hub({"h": hostile("normal")})
    hub.wait_ready(10)
    assert hub.call("mcp__h__exit_soon", {}).text == "bye"
    wait_until(lambda: [e for e in hub.events() if e.kind == "restarted"])
    assert hub.call("mcp__h__echo", {"text": "again"}).text == "again"


def test_a_server_that_never_answers_fails_within_the_bound(open_hub: OpenHub) -> None:
    started = time.monotonic()
    hub = open_hub({"mute": hostile("silent")}, startup_timeout=1.5, probe_timeout=0.3)
    status = hub.wait_ready(10)[0]
    assert time.monotonic() - started < 4
    assert status.state == "failed"
    assert "no answer to initialize within" in status.message
    assert hub.tools() == ()


@pytest.mark.parametrize(
    ("entry", "words"),
    [
        (hostile("exit-at-start"), ("exited with status 2", "cannot open the database")),
        ({"command": "/nonexistent/seri-mcp-server"}, ("no such program",)),
        ({**hostile("normal"), "cwd": "no/such/dir"}, ("no/such/dir is missing",)),
        # A stateless server that knows only a version from the future: both lists shown.
        (hostile("future-only"), ("2027-01-01", "2026-07-28")),
        ({**hostile("normal"), "protocol": "modern"}, ('remove "protocol": "modern"',)),
    ],
    ids=["exits-at-start", "missing-program", "missing-cwd", "future-only", "forced-modern"],
)
def test_a_server_that_cannot_start_says_why(
    open_hub: OpenHub, entry: dict[str, object], words: tuple[str, ...]
) -> None:
    hub = open_hub({"s": entry})
    status = hub.wait_ready(10)[0]
    assert status.state == "failed"
    for word in words:
        assert word in status.message
    assert hub.tools() == ()


def test_the_first_call_waits_only_up_to_the_bound_then_the_slow_server_joins(
    open_hub: OpenHub,
) -> None:
    hub = open_hub({"quick": hostile("normal"), "slow": hostile("slow-start", "--delay", "2")})
    started = time.monotonic()
    statuses = {s.name: s.state for s in hub.wait_ready(0.8)}
    assert time.monotonic() - started < 1.5
    assert statuses == {"quick": "ready", "slow": "starting"}
    assert {e.name.split("__")[1] for e in hub.tools()} == {"quick"}
    wait_until(lambda: hub.statuses()[1].state == "ready")
    assert "mcp__slow__echo" in {e.name for e in hub.tools()}
    assert [(e.server, e.kind) for e in hub.events()] == [("slow", "ready")]


def test_a_call_past_its_timeout_sends_cancelled(open_hub: OpenHub, tmp_path: Path) -> None:
    record = tmp_path / "received.jsonl"
    hub = open_hub({"h": hostile("hang", "--record", str(record))})
    hub.wait_ready(10)
    outcome = hub.call("mcp__h__sleep", {"seconds": 1}, timeout=0.3)
    assert outcome.kind == "timeout"
    assert "0.3 s" in outcome.text
    wait_until(lambda: any(m.get("method") == "notifications/cancelled" for m in received(record)))
    call = next(m for m in received(record) if m.get("method") == "tools/call")
    cancelled = next(m for m in received(record) if m.get("method") == "notifications/cancelled")
    assert cancelled["params"]["requestId"] == call["id"]
    assert hub.call("mcp__h__echo", {"text": "fine"}).text == "fine"


def test_a_message_over_the_limit_fails_the_call_and_the_next_works(open_hub: OpenHub) -> None:
    hub = open_hub({"h": hostile("normal")}, max_message_bytes=1024 * 1024)
    hub.wait_ready(10)
    big = hub.call("mcp__h__big", {"bytes": 3 * 1024 * 1024})
    assert big.kind == "protocol"
    assert "limit of 1 MiB" in big.text
    fits = hub.call("mcp__h__big", {"bytes": 500_000})
    assert (fits.kind, len(fits.text)) == ("ok", 500_000)


def test_noise_on_stdout_and_a_flood_on_stderr_do_not_block(open_hub: OpenHub) -> None:
    hub = open_hub({"h": hostile("noisy")})
    assert hub.wait_ready(10)[0].state == "ready"
    for n in range(5):
        assert hub.call("mcp__h__echo", {"text": str(n)}).text == str(n)


def test_a_server_that_dies_on_the_probe_is_started_again_with_the_handshake(
    open_hub: OpenHub,
) -> None:
    hub = open_hub({"old": hostile("die-on-probe")})
    status = hub.wait_ready(10)[0]
    assert (status.state, status.era) == ("ready", "legacy")
    assert status.restarts == 0  # the era retry is not the one restart a server gets
    assert hub.call("mcp__old__echo", {"text": "ok"}).text == "ok"


def test_an_older_handshake_version_is_accepted(open_hub: OpenHub) -> None:
    hub = open_hub({"h": hostile("old-version")})
    status = hub.wait_ready(10)[0]
    assert (status.era, status.version) == ("legacy", "2025-03-26")
    assert hub.call("mcp__h__echo", {"text": "2025"}).text == "2025"


def test_a_stateless_only_server_gets_meta_on_every_request(
    open_hub: OpenHub, tmp_path: Path
) -> None:
    record = tmp_path / "received.jsonl"
    hub = open_hub({"m": hostile("modern-only", "--record", str(record))})
    status = hub.wait_ready(10)[0]
    assert (status.state, status.era, status.server_name) == ("ready", "modern", "hostile-modern")
    assert hub.call("mcp__m__echo", {"text": "stateless"}).text == "stateless"
    methods = [m["method"] for m in received(record) if "method" in m]
    assert "initialize" not in methods
    assert methods[0] == "server/discover"
    for message in received(record):
        meta = message["params"]["_meta"]
        assert meta["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
        assert meta["io.modelcontextprotocol/clientInfo"]["name"] == "seri"


def test_pages_of_tools_are_followed_and_a_looping_cursor_ends(open_hub: OpenHub) -> None:
    hub = open_hub({"p": hostile("paginated"), "loop": hostile("looping-cursor")})
    statuses = {s.name: s for s in hub.wait_ready(10)}
    assert statuses["p"].tools == 9
    assert statuses["loop"].state == "ready"
    assert statuses["loop"].tools == 1


def test_a_changed_tool_list_is_read_again(open_hub: OpenHub) -> None:
    hub = open_hub({"h": hostile("normal")})
    hub.wait_ready(10)
    hub.events()
    assert hub.call("mcp__h__grow", {}).text == "grown"
    wait_until(lambda: "mcp__h__grown_0" in {e.name for e in hub.tools()})
    assert [e.kind for e in hub.events()] == ["tools_changed"]


def test_the_servers_own_requests_are_answered(open_hub: OpenHub, tmp_path: Path) -> None:
    record = tmp_path / "received.jsonl"
    hub = open_hub({"h": hostile("asks-client", "--record", str(record))})
    hub.wait_ready(10)
    assert hub.call("mcp__h__echo", {"text": "x"}).text == "x"
    wait_until(lambda: len([m for m in received(record) if "method" not in m]) == 2)
    replies = {m["id"]: m for m in received(record) if "method" not in m}
    assert replies["s1"]["result"] == {}  # ping
    assert replies["s2"]["error"]["code"] == -32601  # no roots offered


def test_two_servers_whose_names_clash_get_distinct_tool_names(open_hub: OpenHub) -> None:
    hub = open_hub({"a.b": hostile("normal"), "a_b": hostile("normal")})
    hub.wait_ready(10)
    names = [e.name for e in hub.tools() if e.tool.name == "echo"]
    assert len(set(names)) == 2
    assert names[0] == "mcp__a_b__echo"
    by_server = {e.server: e.name for e in hub.tools() if e.tool.name == "echo"}
    assert hub.call(by_server["a_b"], {"text": "second"}).text == "second"


def test_closing_stops_every_process(open_hub: OpenHub) -> None:
    hub = open_hub({"h": hostile("normal"), "g": hostile("hang")})
    hub.wait_ready(10)
    environment = json.loads(hub.call("mcp__h__environment", {}).text)
    assert FAKE_API_KEY not in json.dumps(environment)
    started = time.monotonic()
    hub.close()
    assert time.monotonic() - started < 5
    assert all(s.state == "closed" for s in hub.statuses())
    assert hub.call("mcp__h__echo", {"text": "x"}).kind == "unavailable"
