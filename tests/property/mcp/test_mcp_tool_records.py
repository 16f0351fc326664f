"""MCP tools as records: permissions by name and glob, the read-only default, argument checks
against a server's schema, what the window is charged, tool_search, and which servers start."""

from __future__ import annotations

import json

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from seri.pure.mcp.mcp_config import McpServerConfig, McpServerSet, parse_servers
from seri.pure.mcp.mcp_startup import plan_start
from seri.pure.mcp.mcp_tools import McpTool
from seri.pure.permissions.permission_policy import PolicyError, parse_policy, parse_rule
from seri.pure.permissions.permissions import decide
from seri.pure.permissions.trust import CHANGED
from seri.pure.session.records import ToolCall
from seri.pure.tools.tool_arguments import parse_arguments
from seri.pure.tools.tool_definitions import (
    SERVER_DEFINITION_CHARS,
    definitions,
    search_tools,
    servers_over_budget,
    should_defer,
    tool_definition_chars,
    unlisted_tools,
)
from seri.pure.tools.tool_specs import SPECS, TOOL_SEARCH, ToolSpec, mcp_spec

SCHEMA = json.dumps(
    {
        "type": "object",
        "properties": {"repo_path": {"type": "string"}, "max_count": {"type": "integer"}},
        "required": ["repo_path"],
        "additionalProperties": False,
    }
)
LOG = mcp_spec(
    "mcp__git__git_log",
    "git",
    McpTool("git_log", "Show the commit log.", input_schema=SCHEMA, read_only=True),
)
COMMIT = mcp_spec(
    "mcp__git__git_commit", "git", McpTool("git_commit", "Record changes.", input_schema=SCHEMA)
)
NAMES = st.from_regex(r"[A-Za-z0-9_-]{1,12}", fullmatch=True)


def verdict(
    rules: dict[str, list[str]], spec: ToolSpec, args: dict[str, object] | None = None
) -> str:
    policy = parse_policy(rules)
    return decide(policy, spec.name, args or {"repo_path": "."}, spec=spec).action


def test_a_read_only_tool_is_allowed_like_read_file_and_others_ask() -> None:
    assert verdict({}, LOG) == "allow"
    assert verdict({}, COMMIT) == "ask"
    assert verdict({"deny": ["mcp__git__git_log"]}, LOG) == "deny"
    assert verdict({"ask": ["mcp__git__*"]}, LOG) == "ask"


@pytest.mark.parametrize(
    "rule", ["mcp__git__*", "mcp__git", "mcp__git__git_commit", "*", "mcp__*__git_c*"]
)
def test_rules_name_mcp_tools_by_name_glob_and_server(rule: str) -> None:
    assert verdict({"allow": [rule]}, COMMIT) == "allow"


@pytest.mark.parametrize("rule", ["mcp__gi", "mcp__git__git_log", "mcp__other__*", "bash"])
def test_rules_for_other_tools_or_servers_do_not_match(rule: str) -> None:
    assert verdict({"allow": [rule]}, COMMIT) == "ask"


def test_an_mcp_rule_takes_no_pattern_and_must_be_a_valid_glob() -> None:
    with pytest.raises(PolicyError, match="by name only"):
        parse_rule("mcp__git__git_commit(foo)")
    with pytest.raises(PolicyError, match="mcp__git__\\["):
        parse_rule("mcp__git__[")
    assert parse_rule("mcp__Git__Log").tool == "mcp__Git__Log"  # case kept: names are exact


def test_a_name_that_is_no_tool_offered_is_denied() -> None:
    assert decide(parse_policy({"allow": ["*"]}), "mcp__git__git_log", {}).action == "deny"


@settings(max_examples=1000)
@given(server=NAMES, tool=NAMES, other=NAMES)
@example(server="__", tool="0", other="_")  # a name alone would seem to be server _'s
def test_a_server_rule_covers_exactly_that_servers_tools(
    server: str, tool: str, other: str
) -> None:
    spec = mcp_spec(f"mcp__{server}__{tool}", server, McpTool(tool))
    assert verdict({"deny": [f"mcp__{server}"]}, spec, {}) == "deny"
    expected = "deny" if other == server else "ask"
    assert verdict({"deny": [f"mcp__{other}"]}, spec, {}) == expected


def test_arguments_are_checked_against_the_servers_schema() -> None:
    def parsed(arguments: object) -> object:
        return parse_arguments(ToolCall("c", LOG.name, json.dumps(arguments)), LOG)

    assert parsed({"repo_path": ".", "max_count": 3}) == {"repo_path": ".", "max_count": 3}
    assert parsed({}) == "mcp__git__git_log is missing required parameter(s): repo_path."
    assert "must be an integer, got a string" in str(parsed({"repo_path": ".", "max_count": "3"}))
    assert "unknown parameter(s) colour" in str(parsed({"repo_path": ".", "colour": 1}))
    assert "must be a JSON object" in str(parse_arguments(ToolCall("c", LOG.name, "[1]"), LOG))


@given(
    arguments=st.dictionaries(st.text(max_size=8), st.integers() | st.text(max_size=8), max_size=4)
)
def test_any_object_is_either_accepted_whole_or_refused_with_a_sentence(
    arguments: dict[str, object],
) -> None:
    got = parse_arguments(ToolCall("c", COMMIT.name, json.dumps(arguments)), COMMIT)
    assert got == arguments or (isinstance(got, str) and got.startswith("mcp__git__git_commit"))


def test_tool_definitions_are_charged_to_the_window_and_deferring_charges_less() -> None:
    builtin = tool_definition_chars(SPECS)
    whole = tool_definition_chars((*SPECS, LOG, COMMIT))
    brief = tool_definition_chars((*SPECS, LOG, COMMIT, TOOL_SEARCH), deferred=True)
    assert whole > builtin + len(SCHEMA)
    deferred_mcp = brief - builtin - tool_definition_chars((TOOL_SEARCH,))
    assert 0 < deferred_mcp < whole - builtin


@pytest.mark.parametrize(
    ("threshold", "count", "deferred"),
    [(-1, 200, False), (0, 1, True), (0, 0, False), (40, 40, False), (40, 41, True)],
)
def test_deferring_starts_above_the_threshold(threshold: int, count: int, deferred: bool) -> None:
    tools = (*SPECS, *(mcp_spec(f"mcp__s__t{i}", "s", McpTool(f"t{i}")) for i in range(count)))
    assert should_defer(tools, threshold) is deferred


@pytest.mark.parametrize("threshold", [-1, 40, 1000])
def test_one_server_over_its_budget_is_deferred_whatever_the_threshold(threshold: int) -> None:
    """Three tools of 20 KB each: past SERVER_DEFINITION_CHARS, so by name and one line."""
    big = McpTool("t", description="word " * 4000)
    tools = (*SPECS, *(mcp_spec(f"mcp__s__t{i}", "s", big) for i in range(3)))
    assert servers_over_budget(tools).keys() == {"s"}
    assert should_defer(tools, threshold)


@given(st.lists(st.tuples(st.sampled_from(["a", "b", "c"]), st.text(max_size=300)), max_size=400))
def test_each_server_adds_at_most_its_budget_and_every_tool_stays_findable(
    made: list[tuple[str, str]],
) -> None:
    tools = tuple(
        mcp_spec(f"mcp__{server}__t{n}", server, McpTool(f"t{n}", description=text))
        for n, (server, text) in enumerate(made)
    )
    sent = definitions((*tools, TOOL_SEARCH), deferred=True)
    listed = {d["function"]["name"] for d in sent}
    left_out = unlisted_tools(tools)
    for server in ("a", "b", "c"):
        mine = [d for d in sent if d["function"]["name"].startswith(f"mcp__{server}__")]
        assert len(json.dumps(mine, separators=(",", ":"))) <= SERVER_DEFINITION_CHARS + 400
        for d in mine:
            assert "\n" not in d["function"]["description"]
    for spec in tools:
        assert (spec.name in listed) != (spec.name in left_out.get(spec.server, ()))
        assert spec.name in search_tools(tools, spec.name)


def test_tool_search_finds_by_name_or_by_words_and_says_when_nothing_matches() -> None:
    tools = (*SPECS, LOG, COMMIT)
    by_name = json.loads(search_tools(tools, "mcp__git__git_commit"))
    assert [found["name"] for found in by_name] == ["mcp__git__git_commit"]
    assert by_name[0]["parameters"]["required"] == ["repo_path"]
    by_words = json.loads(search_tools(tools, "commit log"))
    assert {found["name"] for found in by_words} == {"mcp__git__git_log", "mcp__git__git_commit"}
    assert search_tools(tools, "weather").startswith("No tool matches 'weather'")
    # Built-in tools are never "found": they always go out whole.
    assert search_tools(tools, "read_file").startswith("No tool matches")


def server(name: str, command: str = "srv", source: str = "") -> McpServerConfig:
    (parsed,) = parse_servers({name: {"command": command}}, {}, source).servers
    return parsed


def test_the_persons_servers_start_a_projects_wait_for_approval_of_what_they_run() -> None:
    user = McpServerSet((server("mine"),))
    project = McpServerSet((server("git", "uvx"), server("fs", "npx")))
    approved = {"git": server("git", "uvx").digest, "fs": server("fs", "evil").digest}
    plan = plan_start(user, project, approved)
    assert [s.name for s in plan.start] == ["mine", "git"]
    assert [s.name for s in plan.unapproved] == ["fs"]
    assert plan.state_of("fs") == CHANGED
    *_, notice = plan.notices()
    assert "'fs'" in notice and "seri mcp approve fs" in notice
    assert any("changed since you approved it" in line for line in plan.notices())


@given(
    user=st.lists(NAMES, max_size=4, unique=True),
    project=st.lists(NAMES, max_size=4, unique=True),
    approved=st.lists(NAMES, max_size=4, unique=True),
)
def test_every_server_starts_or_waits_and_a_project_one_starts_only_when_approved(
    user: list[str], project: list[str], approved: list[str]
) -> None:
    """And a project entry never hides one of the person's: theirs starts, the project's of
    the same name is a conflict, named in a warning with both files."""
    plan = plan_start(
        McpServerSet(tuple(server(n, source="config.json") for n in user)),
        McpServerSet(tuple(server(n, "p", ".mcp.json") for n in project)),
        {n: server(n, "p").digest for n in approved},
    )
    started = [s.name for s in plan.start]
    waiting = [s.name for s in plan.unapproved]
    assert sorted(started + waiting) == sorted(set(user) | set(project))
    for name in user:
        assert name in started
        assert [s.command for s in plan.start if s.name == name] == ["srv"]
    for name in set(project) - set(user):
        assert (name in started) == (name in approved)
    assert sorted(s.name for s in plan.conflicts) == sorted(set(user) & set(project))
    for name in set(user) & set(project):
        assert any(
            repr(name) in line and "config.json" in line and ".mcp.json" in line
            for line in plan.notices()
        )


def test_when_the_tool_definitions_fill_the_window_the_servers_are_named() -> None:
    """It blamed AGENTS.md, the rules and the memory files alone."""
    from seri.pure.compaction.compaction_outcome import does_not_fit
    from seri.pure.compaction.window import Window
    from seri.pure.tools.tool_definitions import definition_chars_by_server

    big = McpTool("t", description="word " * 4000)
    tools = (
        *SPECS,
        *(mcp_spec(f"mcp__huge__t{i}", "huge", big) for i in range(30)),
        *(mcp_spec(f"mcp__small__t{i}", "small", McpTool(f"t{i}")) for i in range(2)),
    )
    servers = definition_chars_by_server(tools)
    assert [name for name, _ in servers] == ["huge", "small"]
    assert servers[0][1] <= SERVER_DEFINITION_CHARS
    window = Window.of(8_000, 2_000, overhead_chars=sum(chars for _, chars in servers))
    said = does_not_fit(window, (), (), 100, servers)
    assert "MCP server 'huge' about" in said and "seri mcp list" in said
    assert "\n" not in said
