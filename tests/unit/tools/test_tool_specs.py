"""Tool schemas and the validation of the model's arguments."""

from __future__ import annotations

import json

import jsonschema  # type: ignore[import-untyped]  # no stubs are published
import pytest

from seri.pure.session.records import ToolCall
from seri.pure.tools.tool_arguments import parse_arguments
from seri.pure.tools.tool_definitions import ALL_TOOLS, select_tools
from seri.pure.tools.tool_specs import READ_ONLY, TOOL_NAMES


def call(name: str, arguments: object) -> ToolCall:
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return ToolCall(id="c1", name=name, arguments=text)


def test_the_tool_set_is_the_contract() -> None:
    assert TOOL_NAMES == (
        "read_file",
        "write_file",
        "edit",
        "glob",
        "grep",
        "bash",
        "task",
        "remember",
    )
    params = {t["function"]["name"]: t["function"]["parameters"] for t in ALL_TOOLS}
    assert params["read_file"]["required"] == ["path"]
    assert set(params["read_file"]["properties"]) == {"path", "offset", "limit"}
    assert params["edit"]["required"] == ["path", "old_string", "new_string"]
    assert params["remember"]["properties"]["scope"]["enum"] == ["project", "global"]
    assert params["bash"]["properties"]["timeout"]["maximum"] == 600
    for tool in ALL_TOOLS:
        assert tool["type"] == "function"
        jsonschema.Draft202012Validator.check_schema(tool["function"]["parameters"])


def test_select_tools_keeps_order_and_rejects_unknown_names() -> None:
    chosen = select_tools(READ_ONLY)
    assert [t["function"]["name"] for t in chosen] == ["read_file", "glob", "grep"]
    chosen[0]["function"]["name"] = "mutated"  # a fresh copy: the module is unharmed
    assert select_tools(["read_file"])[0]["function"]["name"] == "read_file"
    with pytest.raises(ValueError, match="unknown tool 'nope'"):
        select_tools(["nope"])


def test_good_arguments_come_back_as_a_dict() -> None:
    assert parse_arguments(call("read_file", {"path": "a", "offset": 3})) == {
        "path": "a",
        "offset": 3,
    }
    assert parse_arguments(call("bash", {"command": "ls", "timeout": 2.5})) == {
        "command": "ls",
        "timeout": 2.5,
    }
    # An optional parameter sent as null is simply absent.
    assert parse_arguments(call("read_file", {"path": "a", "limit": None})) == {"path": "a"}


@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        ("read_file", "{not json", "not valid JSON"),
        ("read_file", "[1, 2]", "must be a JSON object, not an array"),
        ("read_file", "", "missing required parameter(s): path"),
        ("read_file", {}, "missing required parameter(s): path"),
        ("read_file", {"path": 3}, "'path' must be a string, got an integer"),
        ("read_file", {"path": "a", "offset": "3"}, "must be an integer, got a string"),
        ("read_file", {"path": "a", "offset": 0}, "must be at least 1"),
        ("read_file", {"path": "a", "offset": True}, "must be an integer, got a boolean"),
        ("read_file", {"path": ""}, "must not be empty"),
        ("read_file", {"path": "a", "lines": 3}, "unknown parameter(s) lines"),
        ("edit", {"path": "a", "old_string": "x"}, "missing required parameter(s): new_string"),
        (
            "edit",
            {"path": "a", "old_string": "x", "new_string": "y", "replace_all": "yes"},
            "must be a boolean",
        ),
        ("bash", {"command": "ls", "timeout": 601}, "must be at most 600"),
        ("bash", {"command": "ls", "timeout": "NaN"}, "must be a number"),
        ("remember", {"text": "x", "scope": "team"}, "must be one of project, global"),
        ("delete_everything", {}, "Unknown tool 'delete_everything'"),
    ],
)
def test_bad_arguments_get_a_clear_error(name: str, arguments: object, expected: str) -> None:
    result = parse_arguments(call(name, arguments))
    assert isinstance(result, str)
    assert expected in result


def test_non_finite_numbers_are_refused() -> None:
    result = parse_arguments(call("bash", '{"command": "ls", "timeout": NaN}'))
    assert isinstance(result, str)
    assert "finite" in result
