"""seri's MCP client against real servers: server-everything (stdio and streamable HTTP),
server-filesystem, mcp-server-git (stateless era, and the handshake when forced) and the
official SDK's stateless HTTP server. Listing, calling, every kind of result, errors as values,
timeouts and cancellation, secrets kept from servers."""

from __future__ import annotations

import base64
import json
import threading
import time
from pathlib import Path

import httpx

from seri.io.mcp.mcp_http import HttpTransport
from seri.io.mcp.mcp_hub import McpHub
from seri.io.mcp.mcp_session import McpConnection
from seri.io.mcp.mcp_stdio import StdioTransport
from seri.io.mcp.mcp_transport import McpRequest
from seri.pure.mcp import mcp_results
from seri.pure.mcp.jsonrpc import ErrorResponse, Response
from seri.pure.mcp.mcp_names import VALID_NAME
from seri.pure.mcp.mcp_protocol import HEADER_MISMATCH, LATEST_MODERN, modern_headers, modern_params
from seri.pure.mcp.mcp_tools import McpTool
from tests.mcp.conftest import FAKE_API_KEY, parent_environment
from tests.mcp.install import Servers


def test_every_server_is_up_in_the_era_it_speaks(real_hub: McpHub) -> None:
    statuses = {s.name: s for s in real_hub.statuses()}
    eras = {name: (s.era, s.version) for name, s in statuses.items()}
    assert eras == {
        # server-everything answers server/discover with -32601: a handshake server.
        "everything": ("legacy", "2025-11-25"),
        "fs": ("legacy", "2025-11-25"),
        # mcp-server-git (mcp 2.3.0) answers server/discover: stateless.
        "git": ("modern", "2026-07-28"),
        "git_legacy": ("legacy", "2025-11-25"),
        # Over HTTP the probe gets 400 "Server not initialized", not a modern error.
        "everything_http": ("legacy", "2025-11-25"),
        "sdk": ("modern", "2026-07-28"),
        "sdk_legacy": ("legacy", "2025-11-25"),
    }
    assert statuses["git"].server_name == "mcp-git"
    assert statuses["everything"].tools >= 13
    assert statuses["fs"].tools >= 14
    assert statuses["git"].tools == statuses["git_legacy"].tools >= 12


def test_tool_names_are_namespaced_valid_and_carry_annotations(real_hub: McpHub) -> None:
    entries = {entry.name: entry for entry in real_hub.tools()}
    assert all(VALID_NAME.match(name) for name in entries)
    assert len(entries) == len(real_hub.tools())
    for name in (
        "mcp__everything__echo",
        "mcp__everything_http__get-sum",
        "mcp__fs__read_text_file",
        "mcp__git__git_status",
        "mcp__git_legacy__git_log",
        "mcp__sdk__add",
    ):
        assert name in entries, name
    assert entries["mcp__git__git_status"].tool.read_only
    assert not entries["mcp__git__git_commit"].tool.read_only
    assert not entries["mcp__fs__write_file"].tool.read_only
    parameters = entries["mcp__everything__echo"].tool.parameters()
    assert "$schema" not in parameters
    assert parameters["required"] == ["message"]


def test_calls_over_stdio_and_http_in_both_eras(real_hub: McpHub, git_repo: Path) -> None:
    echo = real_hub.call("mcp__everything__echo", {"message": "über stdio"})
    assert (echo.kind, echo.text) == ("ok", "Echo: über stdio")
    over_http = real_hub.call("mcp__everything_http__get-sum", {"a": 2, "b": 40})
    assert over_http.text == "The sum of 2 and 40 is 42."
    for server in ("git", "git_legacy"):
        status = real_hub.call(f"mcp__{server}__git_status", {"repo_path": str(git_repo)})
        assert status.kind == "ok", status
        assert "notes.txt" in status.text
        log = real_hub.call(f"mcp__{server}__git_log", {"repo_path": str(git_repo)})
        assert "first commit of the fixture" in log.text
    for server in ("sdk", "sdk_legacy"):
        added = real_hub.call(f"mcp__{server}__add", {"a": 20, "b": 22})
        # The SDK sends "42" and {"result": 42}: the same thing once.
        assert (added.kind, added.text, added.structured) == ("ok", "42", False)


def test_structured_content_image_and_resources_become_text(real_hub: McpHub) -> None:
    weather = real_hub.call("mcp__everything__get-structured-content", {"location": "Chicago"})
    assert json.loads(weather.text)["conditions"]
    image = real_hub.call("mcp__everything__get-tiny-image", {})
    assert image.images == 1
    assert "[image (image/png, " in image.text
    assert "not shown to the model" in image.text
    assert "iVBORw0KGgo" not in image.text  # the PNG's base64 never reaches the window
    links = real_hub.call("mcp__everything__get-resource-links", {"count": 2})
    assert links.resources == 2
    assert "<demo://resource/dynamic/" in links.text
    embedded = real_hub.call(
        "mcp__everything__get-resource-reference", {"resourceType": "Text", "resourceId": 1}
    )
    assert "[resource demo://resource/dynamic/text/1]" in embedded.text
    assert "Resource 1: This is a plaintext resource" in embedded.text


def test_tool_errors_are_values_the_model_can_read(real_hub: McpHub, shared_dir: Path) -> None:
    wrong = real_hub.call("mcp__everything__get-sum", {"a": "two"})
    assert (wrong.kind, wrong.is_error) == ("tool_error", True)
    assert "expected number" in wrong.text
    outside = real_hub.call("mcp__fs__write_file", {"path": "/etc/seri-test", "content": "x"})
    assert outside.is_error
    assert "outside allowed directories" in outside.text
    exploded = real_hub.call("mcp__sdk__explode", {"reason": "on purpose"})
    assert exploded.is_error
    assert "exploded: on purpose" in exploded.text
    missing = real_hub.call("mcp__nobody__nothing", {})
    assert missing.kind == "unavailable"
    assert "no MCP tool 'mcp__nobody__nothing'" in missing.text


def test_a_json_rpc_error_is_an_outcome_too(mcp_servers: Servers, git_repo: Path) -> None:
    """mcp-server-git answers an unknown tool with a JSON-RPC error, not an isError result."""
    transport = StdioTransport(
        str(mcp_servers.git), ("--repository", str(git_repo)), env=parent_environment()
    )
    connection = McpConnection(transport, server="git", client_version="test")
    try:
        assert not isinstance(connection.open(time.monotonic() + 30), Exception)
        outcome = connection.call_tool(McpTool(name="no_such_tool"), {}, timeout=10)
    finally:
        connection.close()
    assert outcome.kind == mcp_results.RPC_ERROR
    assert "Unknown tool: no_such_tool" in outcome.text
    assert "-32602" in outcome.text


def test_a_huge_result_arrives_whole_and_can_be_capped(real_hub: McpHub, shared_dir: Path) -> None:
    size = 3 * 1024 * 1024
    line = "the quick brown fox jumps over the lazy dog 0123456789\n"
    text = (line * (size // len(line) + 1))[:size]
    (shared_dir / "huge.txt").write_text(text)
    whole = real_hub.call("mcp__fs__read_text_file", {"path": str(shared_dir / "huge.txt")})
    assert whole.kind == "ok"
    assert whole.text == text
    capped = real_hub.call(
        "mcp__fs__read_text_file", {"path": str(shared_dir / "huge.txt")}, cap_chars=20_000
    )
    assert len(capped.text) <= 20_000
    assert "left out here to fit the context window" in capped.text
    assert capped.text.startswith(line)


def test_secrets_in_seri_environment_never_reach_a_server(real_hub: McpHub) -> None:
    answer = real_hub.call("mcp__everything__get-env", {})
    environment = json.loads(answer.text)
    assert FAKE_API_KEY not in answer.text  # neither under its own name nor an innocent one
    for name in ("OPENROUTER_API_KEY", "INNOCENT_LOOKING", "AWS_SECRET_ACCESS_KEY", "DATABASE_URL"):
        assert name not in environment, name
    assert "hunter2hunter2" not in answer.text
    # What a program needs is kept, and what the entry gives is added (explicitly wins).
    assert environment["PATH"]
    assert environment["GIT_AUTHOR_NAME"] == "Ada Lovelace"
    assert environment["VISIBLE_SETTING"] == "on"
    assert environment["GITHUB_TOKEN"] == "ghp_givenonpurpose"
    everything = next(s for s in real_hub.statuses() if s.name == "everything")
    assert {"OPENROUTER_API_KEY", "INNOCENT_LOOKING", "DATABASE_URL"} <= set(everything.withheld)


def test_a_call_past_its_timeout_is_cancelled_and_the_server_goes_on(real_hub: McpHub) -> None:
    for server in ("everything", "everything_http"):
        started = time.monotonic()
        slow = real_hub.call(
            f"mcp__{server}__trigger-long-running-operation",
            {"duration": 5, "steps": 5},
            timeout=0.5,
        )
        assert slow.kind == "timeout", slow
        assert time.monotonic() - started < 2.0
        assert "cancelled the call" in slow.text
        echo = real_hub.call(f"mcp__{server}__echo", {"message": "still here"})
        assert echo.text == "Echo: still here"


def test_a_cancelled_call_returns_at_once(real_hub: McpHub) -> None:
    cancel = threading.Event()
    threading.Timer(0.3, cancel.set).start()
    started = time.monotonic()
    outcome = real_hub.call(
        "mcp__everything_http__trigger-long-running-operation",
        {"duration": 10, "steps": 2},
        cancel=cancel,
    )
    assert outcome.kind == "cancelled"
    assert time.monotonic() - started < 2.0


def test_progress_notifications_on_an_event_stream_are_read_past(real_hub: McpHub) -> None:
    outcome = real_hub.call(
        "mcp__everything_http__trigger-long-running-operation",
        {"duration": 1, "steps": 4},
        timeout=20,
    )
    assert outcome.text == "Long running operation completed. Duration: 1 seconds, Steps: 4."


def test_parameters_marked_x_mcp_header_are_mirrored_as_the_sdk_checks(
    real_hub: McpHub, sdk_http: str
) -> None:
    entry = next(e for e in real_hub.tools() if e.name == "mcp__sdk__region_info")
    assert [p.header for p in entry.tool.header_parameters] == ["Region"]
    # Non-ASCII goes as base64; the SDK decodes it and compares it with the body.
    outcome = real_hub.call("mcp__sdk__region_info", {"region": "Zürich Ost", "detail": "d"})
    assert (outcome.kind, outcome.text) == ("ok", "region Zürich Ost (d)")
    # The check is real: the same call without the header is refused.
    params = modern_params(
        {"name": "region_info", "arguments": {"region": "north"}}, LATEST_MODERN, "test"
    )
    transport = HttpTransport(sdk_http)
    transport.start()
    try:
        answer = transport.request(
            McpRequest(
                "tools/call",
                params,
                10,
                headers=modern_headers("tools/call", params, LATEST_MODERN),
            )
        )
    finally:
        transport.close()
    assert isinstance(answer, ErrorResponse)
    assert answer.code == HEADER_MISMATCH


def test_a_forgotten_http_session_is_opened_again(everything_http: str) -> None:
    transport = HttpTransport(everything_http)
    connection = McpConnection(transport, server="everything", client_version="t", over_http=True)
    try:
        assert not isinstance(connection.open(time.monotonic() + 30), Exception)
        old = transport.session_id
        assert old
        # End the session behind the client's back, as a restarted server would.
        httpx.delete(everything_http, headers={"Mcp-Session-Id": old}, timeout=10)
        outcome = connection.call_tool(McpTool(name="echo"), {"message": "again"}, timeout=20)
        assert outcome.text == "Echo: again"
        assert transport.session_id not in ("", old)
    finally:
        connection.close()


def test_an_image_placeholder_counts_bytes_not_characters(
    real_hub: McpHub, everything_http: str
) -> None:
    image = real_hub.call("mcp__everything__get-tiny-image", {})
    shown = int(image.text.split("image/png, ")[1].split(" bytes")[0].replace(",", ""))
    # Read the raw result with a connection of its own: the PNG decodes to that many bytes.
    connection = McpConnection(
        HttpTransport(everything_http), server="x", client_version="t", over_http=True
    )
    try:
        connection.open(time.monotonic() + 30)
        answer = connection.request(
            "tools/call", {"name": "get-tiny-image", "arguments": {}}, timeout=20
        )
    finally:
        connection.close()
    assert isinstance(answer, Response)
    data = next(b["data"] for b in answer.result["content"] if b["type"] == "image")
    assert shown == len(base64.b64decode(data)) > 0
