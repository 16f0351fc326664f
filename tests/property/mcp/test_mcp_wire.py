"""JSON-RPC framing and the era rules: generated messages, and the real ones in
tests/mcp/captures/wire replayed through the same readers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from seri.pure.inputs.bounded_input import MCP_HTTP
from seri.pure.mcp import jsonrpc
from seri.pure.mcp.jsonrpc import (
    ErrorResponse,
    Notification,
    Response,
    ServerRequest,
    Unreadable,
    classify,
    decode_line,
    decode_value,
)
from seri.pure.mcp.mcp_protocol import (
    LEGACY,
    MODERN,
    FallBack,
    Incompatible,
    Retry,
    ServerInfo,
    decode_header_value,
    encode_header_value,
    modern_headers,
    modern_params,
    read_discover,
    read_initialize,
    read_initialize_error,
    result_type,
)
from seri.pure.provider.sse import SSEEvent, SSEParser
from tests.property.mcp_strategies import JSON, TEXT

WIRE = Path(__file__).resolve().parents[2] / "mcp" / "captures" / "wire"
IDS = st.integers(min_value=-(2**53), max_value=2**53) | TEXT


def wire(name: str) -> Any:
    return json.loads((WIRE / name).read_text())


# --- framing ---------------------------------------------------------------------------------


@settings(max_examples=150)
@given(request_id=IDS, method=TEXT, params=st.dictionaries(TEXT, JSON, max_size=4))
def test_a_message_is_one_line_and_reads_back(
    request_id: int | str, method: str, params: dict[str, Any]
) -> None:
    line = jsonrpc.encode(jsonrpc.request(request_id, method, params))
    assert line.endswith(b"\n")
    assert line.count(b"\n") == 1  # line breaks inside strings are escaped
    (message,) = decode_line(line)
    assert message == ServerRequest(request_id, method, params)


@given(request_id=IDS, result=st.dictionaries(TEXT, JSON, max_size=4))
def test_a_response_reads_back(request_id: int | str, result: dict[str, Any]) -> None:
    (message,) = decode_line(jsonrpc.encode(jsonrpc.result_response(request_id, result)))
    assert message == Response(request_id, result)


@given(data=st.binary(max_size=200))
def test_any_bytes_decode_without_raising(data: bytes) -> None:
    for message in decode_line(data):
        assert isinstance(
            message, Response | ErrorResponse | Notification | ServerRequest | Unreadable
        )


@given(value=JSON)
def test_any_json_value_is_classified(value: Any) -> None:
    assert classify(value) is not None
    assert len(decode_value([value, value])) == 2


def test_odd_messages_are_named_not_trusted() -> None:
    assert decode_line(b"Server log: starting\n") == (
        Unreadable("not JSON", "Server log: starting\n"),
    )
    assert decode_line(b"   \n") == ()
    assert isinstance(decode_line(b"[]")[0], Unreadable)
    assert classify({"jsonrpc": "2.0", "id": True, "result": {}}).__class__ is Unreadable
    assert classify({"jsonrpc": "2.0", "id": 1, "result": 5}) == ErrorResponse(
        1, jsonrpc.INVALID_REQUEST, "the result is not a JSON object"
    )
    assert classify({"jsonrpc": "2.0", "id": None, "error": {"code": -32700}}) == ErrorResponse(
        None, -32700, "an error without a message"
    )
    assert classify({"jsonrpc": "2.0", "method": "notifications/progress"}) == Notification(
        "notifications/progress", {}
    )


# --- eras ------------------------------------------------------------------------------------


def test_real_discover_answers_settle_the_era() -> None:
    git = read_discover(classify(wire("git-discover.json")), "2026-07-28")
    assert git == ServerInfo(
        era=MODERN,
        version="2026-07-28",
        name="mcp-git",
        server_version="2026.10.19",
        capabilities=wire("git-discover.json")["result"]["capabilities"],
    )
    everything = classify(wire("everything-discover.json"))
    assert isinstance(read_discover(everything, "2026-07-28"), FallBack)
    over_http = classify(wire("everything-http-discover.json")["body"])
    assert isinstance(over_http, ErrorResponse)
    assert isinstance(read_discover(over_http, "2026-07-28"), FallBack)
    assert isinstance(read_discover(None, "2026-07-28"), FallBack)


def test_a_real_unsupported_version_error_names_the_versions() -> None:
    error = classify(wire("sdk-unsupported-version.json")["body"])
    assert isinstance(error, ErrorResponse)
    # Asked 2027-01-01; the server lists 2026-07-28: retry at that one.
    assert read_discover(error, "2027-01-01") == Retry("2026-07-28")
    # Asked 2026-07-28 itself and refused: nothing in common.
    refused = read_discover(error, "2026-07-28")
    assert isinstance(refused, Incompatible)
    assert "2026-07-28" in refused.message


@given(
    supported=st.lists(
        st.sampled_from(["2024-11-05", "2025-11-25", "2026-07-28", "2027-01-01", "zzz"]), max_size=4
    )
)
def test_an_unsupported_version_error_is_retried_fallen_back_or_refused(
    supported: list[str],
) -> None:
    error = ErrorResponse(1, -32022, "Unsupported", {"supported": supported})
    verdict = read_discover(error, "2027-01-01")
    if "2026-07-28" in supported:
        assert verdict == Retry("2026-07-28")
    elif any(v.startswith("202") and v < "2026" for v in supported):
        assert isinstance(verdict, FallBack)
    else:
        assert isinstance(verdict, Incompatible)


@given(
    code=st.integers(-33000, 1000).filter(lambda c: c not in (-32020, -32021, -32022)), message=TEXT
)
def test_any_other_error_to_the_probe_means_a_handshake_server(code: int, message: str) -> None:
    assert isinstance(read_discover(ErrorResponse(1, code, message), "2026-07-28"), FallBack)


def test_initialize_answers() -> None:
    info = read_initialize(wire("everything-initialize.json")["result"])
    assert isinstance(info, ServerInfo)
    assert (info.era, info.version, info.name) == (LEGACY, "2025-11-25", "mcp-servers/everything")
    assert "Everything Server" in info.instructions
    assert isinstance(read_initialize({"protocolVersion": "2030-01-01"}), Incompatible)
    modern_refusal = ErrorResponse(1, -32022, "x", {"supported": ["2026-07-28"]})
    assert read_initialize_error(modern_refusal, already_retried=False) == Retry("2026-07-28")
    assert isinstance(read_initialize_error(modern_refusal, already_retried=True), Incompatible)


@given(params=st.dictionaries(TEXT, JSON, max_size=4), meta=st.dictionaries(TEXT, JSON, max_size=3))
def test_modern_params_keep_everything_and_add_the_envelope(
    params: dict[str, Any], meta: dict[str, Any]
) -> None:
    merged = modern_params({**params, "_meta": meta}, "2026-07-28", "9.9")
    for key, value in params.items():
        if key != "_meta":
            assert merged[key] == value
    envelope = merged["_meta"]
    assert envelope["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
    assert envelope["io.modelcontextprotocol/clientCapabilities"] == {}
    assert envelope["io.modelcontextprotocol/clientInfo"] == {"name": "seri", "version": "9.9"}
    for key, value in meta.items():
        if not key.startswith("io.modelcontextprotocol/"):
            assert envelope[key] == value


@settings(max_examples=150)
@given(value=st.text(st.characters(exclude_categories=["Cs"]), max_size=40))
def test_header_values_are_safe_and_decode_back(value: str) -> None:
    encoded = encode_header_value(value)
    assert all(0x20 <= ord(ch) <= 0x7E or ch == "\t" for ch in encoded)
    assert encoded == encoded.strip(" \t")
    assert decode_header_value(encoded) == value


def test_header_encoding_matches_the_spec_examples() -> None:
    # basic/transports/streamable-http.mdx @2026-07-28, "Encoding examples".
    assert encode_header_value("us-west1") == "us-west1"
    assert encode_header_value("Hello, 世界") == "=?base64?SGVsbG8sIOS4lueVjA==?="
    assert encode_header_value(" padded ") == "=?base64?IHBhZGRlZCA=?="
    assert encode_header_value("line1\nline2") == "=?base64?bGluZTEKbGluZTI=?="
    assert encode_header_value("=?base64?literal?=") == "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="


def test_modern_headers_name_the_method_and_the_tool() -> None:
    call = modern_headers("tools/call", {"name": "get_weather"}, "2026-07-28")
    assert call == (
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "get_weather"),
    )
    read = modern_headers("resources/read", {"uri": "file:///a b"}, "2026-07-28")
    assert read[-1] == ("Mcp-Name", "file:///a b")
    assert len(modern_headers("tools/list", {}, "2026-07-28")) == 2


def test_result_type_defaults_to_complete() -> None:
    assert result_type({}) == "complete"
    assert result_type(wire("git-tools-list.json")["result"]) == "complete"
    assert result_type({"resultType": "input_required"}) == "input_required"


def test_a_real_event_stream_yields_the_notifications_then_the_response() -> None:
    stream = (WIRE / "everything-sse-progress.txt").read_bytes()
    for size in (1, 7, 64, len(stream)):
        parser = SSEParser(MCP_HTTP)
        events = [e for n in range(0, len(stream), size) for e in parser.feed(stream[n : n + size])]
        events += parser.finish()
        messages = [
            m
            for e in events
            if isinstance(e, SSEEvent) and e.data.strip()
            for m in decode_line(e.data)
        ]
        assert [type(m) for m in messages] == [Notification, Notification, Response]
        assert messages[-1].id == 3
