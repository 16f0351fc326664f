"""What an MCP server sends is bounded (issue 25): JSON nested 100,000 deep on stdout, an
``inputSchema`` nested 490 deep, ``structuredContent`` nested past the limit. The reader
lives on, the request that was waiting fails at once with the limit named, the next call
works, and a chat never ends in "internal error". Uses tests/mcp/hostile_server.py."""

from __future__ import annotations

import base64
import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from scripts.fake_model import FakeModel
from seri.io.mcp.mcp_hub import McpHub
from seri.io.mcp.mcp_transport import OVERSIZED, Failure, PendingRequests
from tests.conftest import RunSeri
from tests.fuzzing import FUZZ
from tests.mcp.conftest import FAKE_API_KEY, configs, free_port, hostile, parent_environment
from tests.mcp.test_chat_with_servers import call, chat_env, tool_results, write_config

DEEP = "[" * 100_000 + "]" * 100_000


@pytest.fixture
def hub(tmp_path: Path) -> Iterator[McpHub]:
    made = McpHub(
        configs({"h": hostile("normal")}),
        parent_env=parent_environment(),
        project_dir=tmp_path,
        known_secrets=(FAKE_API_KEY,),
    )
    with made:
        made.wait_ready(10)
        yield made


def _raw(data: bytes) -> dict[str, str]:
    return {"data": base64.b64encode(data).decode()}


def test_a_line_nested_100000_deep_fails_the_waiting_call_at_once_and_the_reader_lives(
    hub: McpHub,
) -> None:
    started = time.monotonic()
    outcome = hub.call("mcp__h__raw", _raw(DEEP.encode() + b"\n"))
    assert time.monotonic() - started < 10  # not the call timeout (120 s)
    assert outcome.is_error
    assert "nested too deeply" in outcome.text and "100 levels" in outcome.text
    assert hub.call("mcp__h__echo", {"text": "still here"}).text == "still here"
    assert hub.statuses()[0].state == "ready"


def test_an_unterminated_line_over_the_limit_is_dropped_and_the_next_call_works(
    tmp_path: Path,
) -> None:
    with McpHub(
        configs({"h": hostile("normal")}),
        parent_env=parent_environment(),
        project_dir=tmp_path,
        max_message_bytes=64 * 1024,
    ) as small:
        small.wait_ready(10)
        outcome = small.call("mcp__h__raw", _raw(b"x" * 200_000 + b"\n"))
        assert outcome.is_error and "larger than seri's limit" in outcome.text
        assert small.call("mcp__h__echo", {"text": "ok"}).text == "ok"


def test_structured_content_past_the_limit_is_an_error_and_below_it_a_result(
    hub: McpHub,
) -> None:
    """400 deep: refused by name. 90 deep beside a text block of JSON text nested 100,000
    deep: a result (the text is only compared, never walked)."""
    refused = hub.call("mcp__h__deep", {"depth": 400})
    assert refused.is_error and "nested too deeply" in refused.text
    shown = hub.call("mcp__h__deep", {"depth": 90})
    assert not shown.is_error, shown.text
    assert hub.call("mcp__h__echo", {"text": "after"}).text == "after"


def test_an_input_schema_490_deep_costs_the_server_not_the_chat(
    run_seri: RunSeri, seri_home: Path
) -> None:
    """It ended every chat with `internal error: RecursionError` before the first model
    call; now the server does not start (said by name) and the chat runs without it."""
    write_config(seri_home, mcpServers={"deep": hostile("deep-schema")})
    with FakeModel([{"text": "answered"}]) as fake:
        result = run_seri("chat", "-p", "go", env=chat_env(fake), timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "answered\n"
    assert "internal error" not in result.stderr
    assert "MCP server 'deep' did not start" in result.stderr
    assert "nested too deeply" in result.stderr


def test_deep_structured_content_mid_run_is_a_tool_error_the_model_reads(
    run_seri: RunSeri, seri_home: Path
) -> None:
    write_config(seri_home, mcpServers={"h": hostile("normal")})
    script = [
        {"tool_calls": [call("c1", "mcp__h__deep", depth=400)]},
        {"tool_calls": [call("c2", "mcp__h__deep", depth=90)]},
        {"text": "carried on"},
    ]
    with FakeModel(script) as fake:
        result = run_seri(
            "chat", "--allow", "mcp__h__deep", "-p", "go", env=chat_env(fake), timeout=60
        )
        results = tool_results(fake.requests[-1])
    assert result.returncode == 0, result.stderr
    assert result.stdout == "carried on\n"
    assert "internal error" not in result.stderr
    assert "nested too deeply" in results[0]
    assert "bottom" in results[1] or json.dumps("bottom") in results[1]


# --- fuzzing: what a server writes, however hostile (make fuzz runs these long) ---------------

SMALL_MESSAGES = 8 * 1024
values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=10,
)
rpc_lines = st.one_of(
    st.fixed_dictionaries(
        {"jsonrpc": st.just("2.0")},
        optional={
            "id": st.integers(0, 5) | st.text(max_size=3) | st.none(),
            "method": st.sampled_from(["ping", "notifications/tools/list_changed", "x"]),
            "result": values,
            "error": values,
            "params": values,
        },
    ).map(json.dumps),
    st.integers(1, 300).map(
        lambda n: '{"jsonrpc":"2.0","id":1,"result":' + "[" * n + "]" * n + "}"
    ),
    st.binary(max_size=60).map(lambda b: b.replace(b"\n", b"").decode("latin-1")),
    st.integers(SMALL_MESSAGES - 10, SMALL_MESSAGES * 3).map(lambda n: "x" * n),
)


@pytest.fixture(scope="module")
def fuzzed_stdio(tmp_path_factory: pytest.TempPathFactory) -> Iterator[McpHub]:
    made = McpHub(
        configs({"h": hostile("normal")}),
        parent_env=parent_environment(),
        project_dir=tmp_path_factory.mktemp("stdio-fuzz"),
        max_message_bytes=SMALL_MESSAGES,
        call_timeout=10,
    )
    with made:
        made.wait_ready(10)
        yield made


def test_a_message_over_the_limit_fails_only_the_requests_sent_before_it_was_read() -> None:
    pending = PendingRequests()
    first = pending.open()
    sent = pending.last_id()
    second = pending.open()
    assert not isinstance(first, Failure) and not isinstance(second, Failure)
    pending.fail_all(Failure(OVERSIZED, "dropped"), final=False, up_to=sent)
    assert first[1].event.is_set() and first[1].answer == Failure(OVERSIZED, "dropped")
    assert not second[1].event.is_set() and pending.count() == 1


@FUZZ
@given(st.lists(rpc_lines, min_size=1, max_size=4), st.sampled_from(["\n", "\r\n"]))
# CI: the too-deep line failed the raw call; the line over the limit, read after the next
# call was sent, failed that one too (every waiting request, not only those sent before it)
@example(
    [
        '{"jsonrpc":"2.0","id":1,"result":' + "[" * 100 + "]" * 100 + "}",
        '{"jsonrpc": "2.0", "method": "ping", "id": 0}',
        "x" * 8192,
    ],
    "\r\n",
)
def test_H2_fuzz_mcp_stdio_lines(fuzzed_stdio: McpHub, lines: list[str], ending: str) -> None:
    """Whatever lines a stdio server writes, the call ends in an outcome within its bound
    and the next call works (the reader thread lives)."""
    data = "".join(line + ending for line in lines).encode("utf-8", "surrogatepass")
    started = time.monotonic()
    fuzzed_stdio.call("mcp__h__raw", _raw(data))
    assert time.monotonic() - started < 10
    # A bad line read after this call was sent cannot be told apart from its answer, so this
    # call may fail with it (the pipe decides where its reads split the server's bytes). The
    # server answers in order: once this call is answered, everything raw wrote was read.
    fuzzed_stdio.call("mcp__h__echo", {"text": "sync"})
    assert fuzzed_stdio.call("mcp__h__echo", {"text": "next"}).text == "next"


HTTP_SERVER = Path(__file__).resolve().parent / "hostile_http_server.py"


@pytest.fixture(scope="module")
def fuzzed_http(tmp_path_factory: pytest.TempPathFactory) -> Iterator[McpHub]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, str(HTTP_SERVER), "raw", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(200):
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.02)
        made = McpHub(
            configs({"h": {"type": "http", "url": f"http://127.0.0.1:{port}/mcp"}}),
            parent_env=parent_environment(),
            project_dir=tmp_path_factory.mktemp("http-fuzz"),
            max_message_bytes=SMALL_MESSAGES,
            call_timeout=10,
        )
        with made:
            made.wait_ready(10)
            yield made
    finally:
        proc.kill()
        proc.wait()


sse_pieces = st.one_of(
    rpc_lines.map(lambda line: f"data: {line}\n\n"),
    st.sampled_from([": c\n", "event: message\n", "\r", "\r\n", "\n", "data:", "id: 1\n"]),
    st.integers(1, SMALL_MESSAGES * 2).map(lambda n: "data: " + "y" * n),
)


@FUZZ
@given(
    st.one_of(
        st.lists(sse_pieces, max_size=6).map(lambda p: ("text/event-stream", "".join(p))),
        rpc_lines.map(lambda line: ("application/json", line)),
    )
)
def test_H2_fuzz_mcp_http_bodies(fuzzed_http: McpHub, answer: tuple[str, str]) -> None:
    """Whatever body or event stream an HTTP server answers with: an outcome, in time."""
    kind, body = answer
    started = time.monotonic()
    data = {**_raw(body.encode("utf-8", "surrogatepass")), "kind": kind}
    outcome = fuzzed_http.call("mcp__h__raw", data)
    assert time.monotonic() - started < 10
    assert outcome.text is not None
    assert fuzzed_http.statuses()[0].state == "ready"


# --- servers that never finished starting ----------------------------------------------------


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie does not count: it has exited)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"


def test_a_server_still_in_initialize_is_stopped_when_seri_exits(
    run_seri: RunSeri, seri_home: Path, tmp_path: Path
) -> None:
    """A server that reads nothing for 60 s (stuck before its `initialize` answer): the chat
    goes without it after mcp.startup_wait, and when seri exits the server is gone too (it
    outlived seri before, in a session of its own)."""
    pidfile = tmp_path / "server.pid"
    slow = hostile("slow-start", "--delay", "60", "--pidfile", str(pidfile))
    write_config(seri_home, mcpServers={"slow": slow}, mcp={"startup_wait": 0.5})
    with FakeModel([{"text": "without it"}]) as fake:
        result = run_seri("chat", "-p", "go", env=chat_env(fake), timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "without it\n"
    assert "MCP server 'slow' is still starting" in result.stderr
    pid = int(pidfile.read_text())
    deadline = time.monotonic() + 10
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(pid), "the server outlived seri"


# --- what a server may add to a request ------------------------------------------------------


def test_a_server_with_thousands_of_tools_adds_a_bounded_part_of_each_request(
    run_seri: RunSeri, seri_home: Path
) -> None:
    """5,000 tools with 2 KB descriptions (11 MB whole): the request carries at most the
    server's budget of them, by name and one line; stderr names the server; tool_search
    finds one that is not listed and the model calls it by name."""
    write_config(seri_home, mcpServers={"big": hostile("many-tools")})
    script = [
        {"tool_calls": [call("s", "tool_search", query="mcp__big__t4321")]},
        {"tool_calls": [call("c", "mcp__big__t4321")]},
        {"text": "done"},
    ]
    with FakeModel(script) as fake:
        result = run_seri(
            "chat", "--allow", "mcp__big__*", "-p", "go", env=chat_env(fake), timeout=120
        )
        requests = fake.requests
    assert result.returncode == 0, result.stderr
    assert "MCP server 'big' offers 5,009 tools" in result.stderr
    assert "only through tool_search" in result.stderr
    tools = requests[0]["tools"]
    size = len(json.dumps(tools, separators=(",", ":")))
    assert size < 60_000, size
    briefs = [t["function"] for t in tools if t["function"]["name"].startswith("mcp__big__t")]
    assert briefs and all("\n" not in b["description"] for b in briefs)
    assert all(len(b["description"]) < 200 for b in briefs)
    assert "mcp__big__t4321" not in {t["function"]["name"] for t in tools}
    search = next(t for t in tools if t["function"]["name"] == "tool_search")["function"]
    assert "of MCP server 'big'" in search["description"]
    results = tool_results(requests[-1])
    assert "mcp__big__t4321" in results[0]
    assert results[1] == "ran t4321"
