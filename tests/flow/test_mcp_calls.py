"""MCP tools in the loop, driven by hand: the loop knows them only as records in its setup.
A read-only one runs unasked with no path resolved, one that changes things asks (and
"always" offers its own name as the rule), in -p it is denied with the reason, a name no
record carries is refused, and arguments its server's schema refuses never run."""

from __future__ import annotations

import json

import attrs

from seri.pure.agent.effects import AskPerson, CallModel, RunTool, ToolRun
from seri.pure.agent.turn import run_task
from seri.pure.mcp.mcp_tools import McpTool
from seri.pure.permissions.approval import Answer
from seri.pure.tools.tool_specs import SPECS, mcp_spec
from tests.flow.steps import Steps, answer, call, empty, results, setup, user

SCHEMA = json.dumps(
    {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
)
READ = mcp_spec(
    "mcp__fs__read_text_file",
    "fs",
    McpTool("read_text_file", "Read.", input_schema=SCHEMA, read_only=True),
)
WRITE = mcp_spec("mcp__fs__write_file", "fs", McpTool("write_file", "Write.", input_schema=SCHEMA))


def with_mcp(*, interactive: bool = False) -> Steps:
    task = attrs.evolve(setup(interactive=interactive), tools=(*SPECS, READ, WRITE))
    return Steps(run_task(task, empty(), user("go")))


def test_a_read_only_server_tool_runs_unasked_and_its_path_is_not_the_projects() -> None:
    steps = with_mcp()
    steps.send(answer("", call("c1", READ.name, path="/etc/hosts")))
    run = steps.effect
    assert isinstance(run, RunTool)  # no ResolvePath: a server's path is the server's business
    assert run.call.name == READ.name and dict(run.arguments) == {"path": "/etc/hosts"}
    steps.send(ToolRun("127.0.0.1 localhost"))
    assert isinstance(steps.effect, CallModel)
    assert results(steps.stored) == [("c1", "127.0.0.1 localhost", False)]


def test_a_tool_that_changes_things_asks_and_always_offers_its_name() -> None:
    steps = with_mcp(interactive=True)
    steps.send(answer("", call("c1", WRITE.name, path="x")))
    asked = steps.effect
    assert isinstance(asked, AskPerson)
    assert asked.offered == (WRITE.name,)
    assert "mcp__fs__write_file needs approval" in asked.reason
    steps.send(Answer(approved=True, always=(WRITE.name,)))
    assert isinstance(steps.effect, RunTool)
    steps.send(ToolRun("written"))
    steps.send(answer("", call("c2", WRITE.name, path="y")))
    assert isinstance(steps.effect, RunTool)  # "always" held for the rest of the task
    assert steps.recorded("session_rule") == [{"id": "c1", "rules": [WRITE.name]}]


def test_in_p_mode_it_is_denied_with_the_reason_as_its_result() -> None:
    steps = with_mcp()
    steps.send(answer("", call("c1", WRITE.name, path="x")))
    assert isinstance(steps.effect, CallModel)
    [(call_id, text, is_error)] = results(steps.stored)
    assert call_id == "c1" and is_error
    assert text == (
        "denied by policy: mcp__fs__write_file needs approval (no rule allows it); "
        "approval is needed and no one can be asked in this mode"
    )


def test_a_tool_no_record_carries_and_arguments_the_schema_refuses_never_run() -> None:
    steps = with_mcp()
    steps.send(answer("", call("c1", "mcp__gone__tool"), call("c2", READ.name, file="x")))
    assert isinstance(steps.effect, CallModel)
    gone, refused = results(steps.stored)
    assert gone[1].startswith("not run: unknown tool 'mcp__gone__tool'; the tools are read_file")
    assert refused[1] == "not run: mcp__fs__read_text_file is missing required parameter(s): path."
