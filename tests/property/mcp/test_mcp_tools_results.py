"""Tools as servers list them, results as the model reads them, names as providers take them,
and the environment a server starts with: invariants over generated inputs and real captures."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from seri.pure.mcp.mcp_environment import (
    holds_credential,
    is_credential_name,
    server_environment,
)
from seri.pure.mcp.mcp_names import MAX_NAME_LENGTH, VALID_NAME, name_tools, server_prefix
from seri.pure.mcp.mcp_results import render_result
from seri.pure.mcp.mcp_tools import (
    HeaderParameter,
    header_parameters,
    header_values,
    read_tools_page,
)
from seri.pure.trajectories.redaction import Redactor
from tests.property.mcp_strategies import JSON, TEXT

WIRE = Path(__file__).resolve().parents[2] / "mcp" / "captures" / "wire"


def wire(name: str) -> Any:
    return json.loads((WIRE / name).read_text())


# --- tools -----------------------------------------------------------------------------------


def test_a_real_tool_list_is_read_with_its_hints() -> None:
    page = read_tools_page(wire("git-tools-list.json")["result"])
    assert page.next_cursor is None and not page.skipped
    tools = {tool.name: tool for tool in page.tools}
    assert len(tools) == 12
    status = tools["git_status"]
    assert (status.read_only, status.destructive, status.idempotent) == (True, False, True)
    assert not tools["git_commit"].read_only
    assert status.parameters()["required"] == ["repo_path"]


@settings(max_examples=200)
@given(result=st.dictionaries(TEXT, JSON, max_size=4) | st.fixed_dictionaries({"tools": JSON}))
def test_any_tools_result_is_read_without_raising(result: dict[str, Any]) -> None:
    page = read_tools_page(result, over_http=True)
    assert all(tool.name.strip() for tool in page.tools)


def test_unusable_tools_are_left_out_with_a_reason() -> None:
    result = {
        "tools": [
            {"name": "ok"},
            {"name": ""},
            "text",
            {"name": "array_schema", "inputSchema": {"type": "array"}},
            {
                "name": "bad_mark",
                "inputSchema": {
                    "type": "object",
                    "properties": {"x": {"type": "number", "x-mcp-header": "X"}},
                },
            },
        ],
        "nextCursor": "",
    }
    page = read_tools_page(result, over_http=True)
    assert [t.name for t in page.tools] == ["ok"]
    assert len(page.skipped) == 4
    assert page.next_cursor is None
    # Over stdio the marks are ignored, as the spec allows.
    assert [t.name for t in read_tools_page(result).tools] == ["ok", "bad_mark"]


def test_absent_hints_take_the_spec_defaults() -> None:
    (tool,) = read_tools_page({"tools": [{"name": "t"}]}).tools
    assert (tool.read_only, tool.destructive, tool.idempotent, tool.open_world) == (
        False,
        True,
        False,
        True,
    )
    assert tool.parameters() == {"type": "object", "properties": {}}


def test_x_mcp_header_marks_follow_the_rules() -> None:
    def schema(**properties: Any) -> dict[str, Any]:
        return {"type": "object", "properties": properties}

    nested = schema(
        outer={
            "type": "object",
            "properties": {"inner": {"type": "integer", "x-mcp-header": "Inner"}},
        }
    )
    assert header_parameters(nested) == (HeaderParameter("Inner", ("outer", "inner")),)
    assert "twice" in str(
        header_parameters(
            schema(
                a={"type": "string", "x-mcp-header": "Dup"},
                b={"type": "string", "x-mcp-header": "dup"},
            )
        )
    )
    assert "outside a chain" in str(
        header_parameters(
            schema(a={"type": "array", "items": {"type": "string", "x-mcp-header": "I"}})
        )
    )
    assert "outside a chain" in str(
        header_parameters(schema(a={"anyOf": [{"type": "string", "x-mcp-header": "A"}]}))
    )
    assert "not a header name" in str(
        header_parameters(schema(a={"type": "string", "x-mcp-header": "bad name"}))
    )
    assert "outside a chain" in str(header_parameters({"type": "object", "x-mcp-header": "Root"}))


@given(
    value=st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.floats(allow_nan=False),
        TEXT,
        st.lists(st.integers(), max_size=2),
    )
)
def test_header_values_are_only_given_for_primitive_values(value: Any) -> None:
    marks = (HeaderParameter("Region", ("region",)),)
    headers = dict(header_values(marks, {"region": value}))
    if value is None or isinstance(value, list):
        assert headers == {}
    elif isinstance(value, bool):
        assert headers == {"Mcp-Param-Region": "true" if value else "false"}
    elif isinstance(value, float) and not value.is_integer():
        assert headers == {}
    for text in headers.values():
        assert all(0x20 <= ord(ch) <= 0x7E or ch == "\t" for ch in text)


# --- results ---------------------------------------------------------------------------------


def test_real_results_render_as_text_with_placeholders() -> None:
    image = render_result(wire("everything-tiny-image.json")["result"])
    data = next(
        b["data"]
        for b in wire("everything-tiny-image.json")["result"]["content"]
        if b["type"] == "image"
    )
    assert image.images == 1
    assert f"image/png, {len(base64.b64decode(data)):,} bytes" in image.text
    assert data[:40] not in image.text
    links, blob = (render_result(r["result"]) for r in wire("everything-resources.json"))
    assert links.resources == 2
    assert "[resource link: Blob Resource 1 <demo://resource/dynamic/blob/1> (text/plain; " in (
        links.text
    )
    assert "[resource demo://resource/dynamic/blob/2 (text/plain, " in blob.text
    assert "bytes of binary data): not shown to the model]" in blob.text
    same = render_result(wire("fs-structured.json")["result"])
    assert (same.text, same.structured) == ("hello from a file\n", False)


@settings(max_examples=150)
@given(
    content=st.lists(
        st.one_of(
            st.fixed_dictionaries({"type": st.just("text"), "text": TEXT}),
            st.fixed_dictionaries(
                {
                    "type": st.sampled_from(["image", "audio"]),
                    "data": st.binary(max_size=60).map(lambda b: base64.b64encode(b).decode()),
                    "mimeType": st.sampled_from(["image/png", "audio/wav"]),
                }
            ),
            st.dictionaries(TEXT, JSON, max_size=3),
            JSON,
        ),
        max_size=5,
    ),
    structured=st.none() | st.dictionaries(TEXT, JSON, max_size=3),
    is_error=st.none() | st.booleans(),
    cap=st.none() | st.integers(400, 2000),
)
def test_any_result_renders_and_media_never_leak(
    content: list[Any], structured: Any, is_error: Any, cap: int | None
) -> None:
    result: dict[str, Any] = {"content": content}
    if structured is not None:
        result["structuredContent"] = structured
    if is_error is not None:
        result["isError"] = is_error
    outcome = render_result(result, cap)
    assert outcome.text
    assert outcome.is_error == (is_error is True)
    assert outcome.kind == ("tool_error" if is_error is True else "ok")
    if cap is not None:
        assert len(outcome.text) <= cap
    for block in content:
        media = isinstance(block, dict) and block.get("type") in ("image", "audio")
        data = block.get("data") if media else None
        if isinstance(data, str) and len(data) >= 12:
            assert data not in outcome.text


def test_input_required_is_an_error_the_model_can_read() -> None:
    outcome = render_result({"resultType": "input_required", "inputRequests": {}})
    assert (outcome.kind, outcome.is_error) == ("input_required", True)
    assert "does not provide" in outcome.text


# --- names -----------------------------------------------------------------------------------

SERVER_NAMES = st.text(st.characters(exclude_categories=["Cs"]), min_size=1, max_size=40)


@settings(max_examples=150)
@given(pairs=st.lists(st.tuples(SERVER_NAMES, SERVER_NAMES), max_size=12))
def test_names_are_valid_unique_and_stable(pairs: list[tuple[str, str]]) -> None:
    names = name_tools(pairs)
    assert [(n.server, n.tool) for n in names] == pairs
    exposed = [n.exposed for n in names]
    assert len(set(exposed)) == len(exposed)
    assert all(VALID_NAME.match(name) and len(name) <= MAX_NAME_LENGTH for name in exposed)
    assert all(name.startswith("mcp__") for name in exposed)
    assert name_tools(pairs) == names


@given(
    server=st.from_regex(r"[a-z][a-z0-9_-]{0,15}", fullmatch=True),
    tool=st.from_regex(r"[a-z][a-z0-9_-]{0,30}", fullmatch=True),
)
def test_a_clean_short_name_is_used_as_is(server: str, tool: str) -> None:
    (named,) = name_tools([(server, tool)])
    assert named.exposed == f"mcp__{server}__{tool}"
    assert named.exposed.startswith(server_prefix(server))


def test_long_and_clashing_names_get_a_stable_hash() -> None:
    long_tool = "x" * 80
    clash = name_tools([("a.b", "t"), ("a_b", "t"), ("srv", long_tool)])
    assert clash[0].exposed == "mcp__a_b__t"
    assert re.fullmatch(r"mcp__a_b__t_[0-9a-f]{8}", clash[1].exposed)
    assert len(clash[2].exposed) == 64
    assert clash[2].exposed.startswith("mcp__srv__xxx")


# --- the environment a server starts with ----------------------------------------------------

SECRET_NAMES = [
    "OPENAI_API_KEY",
    "GITHUB_TOKEN",
    "AWS_SECRET_ACCESS_KEY",
    "PGPASSWORD",
    "SSH_AUTH_SOCK",
    "NPM_AUTH_TOKEN",
    "MY_CREDENTIALS",
    "SERI_HOME",
    "apiKey",
    "SESSION_COOKIE",
    "GPG_PASSPHRASE",
]
PLAIN_NAMES = [
    "PATH",
    "HOME",
    "LANG",
    "GIT_AUTHOR_NAME",
    "NODE_EXTRA_CA_CERTS",
    "TERM",
    "KEYBOARD_LAYOUT",
    "HTTPS_PROXY",
    "PWD",
    "DBUS_SESSION_BUS_ADDRESS",
    "MONKEY",
]


def test_credential_names_are_recognised_and_ordinary_ones_kept() -> None:
    assert [n for n in SECRET_NAMES if not is_credential_name(n)] == []
    assert [n for n in PLAIN_NAMES if is_credential_name(n)] == []


@settings(max_examples=200)
@given(
    parent=st.dictionaries(
        st.sampled_from(SECRET_NAMES + PLAIN_NAMES),
        st.text(st.characters(exclude_categories=["Cs"]), max_size=20),
    ),
    configured=st.dictionaries(
        st.sampled_from(SECRET_NAMES + PLAIN_NAMES + ["OWN"]), st.text(max_size=10), max_size=3
    ),
    key=st.from_regex(r"sk-or-v1-[0-9a-f]{32}", fullmatch=True),
    innocent=st.sampled_from(PLAIN_NAMES),
)
def test_no_credential_reaches_a_server_unless_its_entry_names_it(
    parent: dict[str, str], configured: dict[str, str], key: str, innocent: str
) -> None:
    parent = {**parent, innocent: f"prefix {key} suffix"}
    environment = server_environment(parent, configured.items(), known_secrets=(key,)).as_dict()
    for name, value in environment.items():
        if name in configured:
            assert value == configured[name]  # what the entry sets always wins
            continue
        assert not is_credential_name(name)
        assert key not in value
    for name in PLAIN_NAMES:
        kept = name in parent and name not in configured and name != innocent
        if kept and not holds_credential(parent[name], Redactor.of((key,))):
            assert environment.get(name) == parent[name]


def test_values_that_carry_credentials_are_held_back_by_shape() -> None:
    parent = {
        "DATABASE_URL": "postgres://admin:hunter2@db/prod",
        "NOTE": "token ghp_0123456789abcdefghijABCDEFGHIJ",
        "PATH": "/usr/bin",
    }
    env = server_environment(parent, ())
    assert env.as_dict() == {"PATH": "/usr/bin"}
    assert env.withheld == ("DATABASE_URL", "NOTE")
