"""Invariants of reading ``mcpServers`` entries: variable expansion as Claude Code documents
it, every entry ending as exactly one of server / problem / disabled, nothing ever raised."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from seri.pure.mcp.mcp_config import (
    HTTP,
    STDIO,
    McpServerSet,
    combine,
    expand_variables,
    parse_servers,
    servers_from_document,
)
from tests.property.mcp_strategies import JSON

NAMES = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True)
# Text that holds no "${": nothing in it is a reference.
PLAIN = st.text(st.characters(exclude_categories=["Cs"]), max_size=30).filter(
    lambda t: "${" not in t
)
ENVS = st.dictionaries(NAMES, st.text(st.characters(exclude_categories=["Cs"]), max_size=12))


@given(text=PLAIN, env=ENVS)
def test_text_without_references_is_unchanged(text: str, env: dict[str, str]) -> None:
    assert expand_variables(text, env) == (text, ())


@given(
    name=NAMES,
    value=st.text(max_size=10),
    default=PLAIN.filter(lambda t: "}" not in t),
    before=PLAIN,
    after=PLAIN,
)
def test_a_set_variable_wins_over_its_default(
    name: str, value: str, default: str, before: str, after: str
) -> None:
    env = {name: value}
    assert expand_variables(f"{before}${{{name}}}{after}", env)[0] == f"{before}{value}{after}"
    assert expand_variables(f"${{{name}:-{default}}}", env) == (value, ())
    # Even an empty value counts as set: "expands to VAR if set".
    assert expand_variables(f"${{{name}:-{default}}}", {name: ""}) == ("", ())


@given(name=NAMES, default=PLAIN.filter(lambda t: "}" not in t))
def test_an_unset_variable_takes_its_default_or_is_reported(name: str, default: str) -> None:
    assert expand_variables(f"${{{name}:-{default}}}", {}) == (default, ())
    assert expand_variables(f"a${{{name}}}b${{{name}}}", {}) == (
        f"a${{{name}}}b${{{name}}}",
        (name,),
    )


@given(name=NAMES, env=ENVS)
def test_bare_dollar_and_shell_forms_stay_as_written(name: str, env: dict[str, str]) -> None:
    for text in (f"${name}", f"${{{name}%/}}", f"${{{name}#x}}", "$(echo hi)", "${}"):
        assert expand_variables(text, {**env, name: "VALUE"})[0] == text


@settings(max_examples=150, deadline=None)
@given(section=st.dictionaries(st.text(max_size=6), JSON, max_size=5), env=ENVS)
def test_any_json_becomes_servers_problems_or_disabled_and_never_raises(
    section: dict[str, Any], env: dict[str, str]
) -> None:
    parsed = parse_servers(section, env, "f")
    accounted = [*parsed.names(), *(p.name for p in parsed.problems), *parsed.disabled]
    assert sorted(accounted) == sorted(section)
    for server in parsed.servers:
        assert server.transport in (STDIO, HTTP)
        assert server.command if server.transport == STDIO else server.url
        assert server.source == "f"
    for problem in parsed.problems:
        assert problem.line().startswith(f"MCP server {problem.name!r} in f: ")


@given(document=JSON, env=ENVS)
def test_any_document_is_read_without_raising(document: Any, env: dict[str, str]) -> None:
    parsed = servers_from_document(document, env, ".mcp.json")
    assert isinstance(parsed, McpServerSet)


@given(
    command=PLAIN.filter(lambda t: t.strip()),
    args=st.lists(PLAIN, max_size=5),
    env=st.dictionaries(NAMES, PLAIN.filter(lambda t: "\0" not in t), max_size=4),
)
def test_a_stdio_entry_without_references_is_kept_exactly(
    command: str, args: list[str], env: dict[str, str]
) -> None:
    entry = {"command": command, "args": args, "env": env}
    (server,) = parse_servers({"s": entry}, {}, "f").servers
    assert (server.command, server.args, dict(server.env)) == (command, tuple(args), env)
    # The same entry written in opencode's list form reads the same.
    (listed,) = parse_servers(
        {"s": {"type": "local", "command": [command, *args]}}, {}, "f"
    ).servers
    assert (listed.command, listed.args) == (command, tuple(args))


@given(
    lower=st.dictionaries(st.sampled_from("abcde"), st.just({"command": "low"}), max_size=5),
    higher=st.dictionaries(st.sampled_from("cdefg"), st.just({"command": "high"}), max_size=5),
)
def test_the_higher_set_wins_by_name(lower: dict[str, Any], higher: dict[str, Any]) -> None:
    both = combine(parse_servers(lower, {}, "user"), parse_servers(higher, {}, "project"))
    assert sorted(both.names()) == sorted(set(lower) | set(higher))
    for server in both.servers:
        assert server.command == ("high" if server.name in higher else "low")


def test_every_transport_spelling_people_use() -> None:
    entries = {
        "a": {"type": "stdio", "command": "x"},
        "b": {"type": "local", "command": ["x", "--flag"]},
        "c": {"type": "http", "url": "https://h/mcp"},
        "d": {"type": "streamable-http", "url": "https://h/mcp"},
        "e": {"type": "streamableHttp", "url": "https://h/mcp"},
        "f": {"type": "remote", "url": "https://h/mcp"},
        "g": {"httpUrl": "https://h/mcp"},
        "h": {"serverUrl": "https://h/mcp"},
        "i": {"transportType": "streamable-http", "url": "https://h/mcp"},
        "j": {"url": "http://localhost:3000/mcp"},
        "k": {"command": "x", "disabled": True},
        "l": {"command": "x", "enabled": False},
    }
    parsed = parse_servers(entries, {}, "f")
    kinds = {s.name: s.transport for s in parsed.servers}
    assert kinds == {"a": STDIO, "b": STDIO, **dict.fromkeys("cdefghij", HTTP)}
    assert parsed.disabled == ("k", "l")
    assert not parsed.problems


def test_problems_say_what_to_change() -> None:
    entries = {
        "sse": {"type": "sse", "url": "https://mcp.asana.com/sse"},
        "ws": {"type": "websocket", "url": "wss://h/ws"},
        "nothing": {"description": "no command, no url"},
        "badurl": {"url": "ftp://h/mcp"},
        "inject": {"url": "https://h/mcp", "headers": {"X-A": "v\r\nX-Evil: 1"}},
        "badheader": {"url": "https://h/mcp", "headers": {"bad name": "v"}},
        "args": {"command": "x", "args": "--not-a-list"},
        "era": {"command": "x", "protocol": "2025"},
        "timeout": {"command": "x", "timeout": -5},
        "envobj": {"command": "x", "env": {"A": {"nested": 1}}},
    }
    problems = {p.name: p.message for p in parse_servers(entries, {}, "f").problems}
    assert set(problems) == set(entries)
    assert 'set "type": "http"' in problems["sse"]
    assert "unknown type 'websocket'" in problems["ws"]
    assert 'give "command"' in problems["nothing"]
    assert "http:// or https://" in problems["badurl"]
    assert "line break" in problems["inject"]
    assert "not a valid HTTP header name" in problems["badheader"]
    assert '"args" must be a list of strings' in problems["args"]
    assert '"protocol" must be one of auto, legacy, modern' in problems["era"]
    assert "positive number of milliseconds" in problems["timeout"]
    assert '"env.A" must be a string' in problems["envobj"]


def test_scalars_in_env_are_written_as_json_would_and_timeout_is_seconds() -> None:
    entry = {
        "command": "x",
        "env": {"DEBUG": True, "PORT": 8080},
        "timeout": 1500,
        "cwd": "${HOME}/p",
        "protocol": "legacy",
    }
    (server,) = parse_servers({"s": entry}, {"HOME": "/home/u"}, "f").servers
    assert dict(server.env) == {"DEBUG": "true", "PORT": "8080"}
    assert (server.call_timeout, server.cwd, server.era) == (1.5, "/home/u/p", "legacy")


def test_the_digest_changes_with_any_field_env_included() -> None:
    """Approvals once covered only the command and arguments: an added env (PYTHONPATH plus a
    sitecustomize.py) ran code without asking again. The digest covers the whole entry."""

    def digest(entry: dict[str, Any]) -> str:
        return parse_servers({"s": entry}, {}, "f").servers[0].digest

    base = digest({"command": "npx", "args": ["-y", "pkg"]})
    assert base.startswith("sha256:")
    assert base != digest({"command": "npx", "args": ["-y", "pkg"], "env": {"PYTHONPATH": "."}})
    assert base != digest({"command": "npx", "args": ["-y", "pkg"], "cwd": "elsewhere"})
    assert base != digest({"command": "npx", "args": ["-y", "other"]})
    assert base == digest({"args": ["-y", "pkg"], "command": "npx"})


def test_a_server_named_star_is_a_server_and_a_broken_file_is_not_one() -> None:
    """Found by the property above: the whole-file problem once used the name "*" to say so,
    and a server called "*" was then reported as the whole file (and hid one across files)."""
    starred = parse_servers({"*": None}, {}, "f")
    assert [p.line() for p in starred.problems] == [
        "MCP server '*' in f: the entry must be an object with a command or a url"
    ]
    broken = servers_from_document([], {}, "g")
    assert [p.line() for p in broken.problems] == [
        "MCP servers of g: the file must hold a JSON object"
    ]
    both = combine(starred, servers_from_document([], {}, ".mcp.json"))
    assert len(both.problems) == 2
