"""Tool calls, driven by hand: which run, which are denied and why, and that every call gets
exactly one result, in order, whatever happens to the others."""

from __future__ import annotations

from seri.pure.agent.effects import (
    AskPerson,
    CallModel,
    ModelReply,
    ResolvedPath,
    ResolvePath,
    RunTool,
    ToolRun,
)
from seri.pure.agent.tool_call_answers import INTERRUPTED_RESULT, NOT_RUN_RESULT
from seri.pure.agent.turn import run_task
from seri.pure.permissions.approval import Answer
from seri.pure.permissions.permission_policy import parse_policy
from seri.pure.session.records import ToolCall
from tests.flow.steps import Steps, answer, call, empty, results, setup, user


def resolved(path: str) -> ResolvedPath:
    return ResolvedPath(path, f"/project/{path}")


def test_an_allowed_call_runs_with_its_path_resolved_first() -> None:
    steps = Steps(run_task(setup(), empty(), user("read it")))
    steps.send(answer("", call("c1", "read_file", path="notes.txt")))
    assert steps.effect == ResolvePath("notes.txt")
    steps.send(resolved("notes.txt"))
    run = steps.effect
    assert isinstance(run, RunTool)
    assert (run.call.id, dict(run.arguments)) == ("c1", {"path": "notes.txt"})
    assert run.max_chars is not None
    steps.send(ToolRun("hello", touched_paths=("notes.txt",)))
    assert isinstance(steps.effect, CallModel)
    assert results(steps.stored) == [("c1", "hello", False)]
    assert steps.effect.messages[-1].role == "tool"


def test_every_call_gets_exactly_one_result_in_order_whatever_it_was() -> None:
    """An unknown tool, arguments that are not JSON, a repeated id and a good call: four
    results, three of them errors the model can act on, and only the good call runs."""
    steps = Steps(run_task(setup(tools=("glob",)), empty(), user("go")))
    steps.send(
        answer(
            "",
            call("a", "teleport", to="mars"),
            ToolCall("j", "glob", "{not json"),
            call("b", "glob", pattern="*"),
            call("b", "glob", pattern="*.py"),
            call("c", "glob", pattern="*"),
        )
    )
    ran = []
    while isinstance(steps.effect, RunTool):
        ran.append(steps.effect.call.id)
        steps.send(ToolRun(f"ran {steps.effect.call.id}"))
    assert ran == ["b", "c"]
    got = results(steps.stored)
    assert [r[0] for r in got] == ["a", "j", "b", "b", "c"]
    assert "unknown tool 'teleport'" in got[0][1] and got[0][2]
    assert "not valid JSON" in got[1][1] and got[1][2]
    assert got[2] == ("b", "ran b", False)
    assert got[3] == ("b", "not run: duplicate tool call id b", True)
    assert got[4] == ("c", "ran c", False)
    assert steps.recorded("tool_result")[0] == {
        "id": "a",
        "ok": False,
        "error": got[0][1],
    }


def test_calls_of_a_cut_stream_are_answered_but_never_run() -> None:
    steps = Steps(run_task(setup(), empty(), user("go")))
    reply = answer("", call("c1", "bash", command="ls"), call("c2", "bash", command="rm -rf /"))
    steps.send(
        ModelReply(reply.message, tool_calls_runnable=False, unrunnable_reason="the stream broke")
    )
    assert isinstance(steps.effect, CallModel)
    assert results(steps.stored) == [
        ("c1", "not run: the stream broke", True),
        ("c2", "not run: the stream broke", True),
    ]


def test_a_deny_rule_denies_with_its_name_and_nothing_runs() -> None:
    policy = parse_policy({"deny": ["bash(rm *)"]})
    steps = Steps(run_task(setup(policy=policy), empty(), user("clean")))
    steps.send(answer("", call("c1", "bash", command="rm -rf build")))
    assert isinstance(steps.effect, CallModel)
    (result,) = results(steps.stored)
    assert result[0] == "c1" and result[2]
    assert result[1].startswith("denied by rule bash(rm *)")
    (denial,) = steps.recorded("denial")
    assert (denial["rule"], denial["by"], denial["name"]) == ("bash(rm *)", "policy", "bash")


def test_what_needs_approval_is_denied_when_no_one_can_be_asked() -> None:
    steps = Steps(run_task(setup(interactive=False), empty(), user("write")))
    steps.send(answer("", call("c1", "write_file", path="a.txt", content="x")))
    steps.send(resolved("a.txt"))
    assert isinstance(steps.effect, CallModel)
    (result,) = results(steps.stored)
    assert "no one can be asked in this mode" in result[1]


def test_a_person_who_says_no_gives_the_model_their_reason() -> None:
    steps = Steps(run_task(setup(interactive=True), empty(), user("write")))
    steps.send(answer("", call("c1", "write_file", path="a.txt", content="x")))
    steps.send(resolved("a.txt"))
    ask = steps.effect
    assert isinstance(ask, AskPerson)
    assert (ask.call.id, ask.path, ask.offered) == ("c1", "a.txt", ("write_file",))
    steps.send(Answer(False, reason="use edit instead"))
    assert results(steps.stored) == [("c1", "denied by user: use edit instead", True)]
    assert steps.recorded("denial")[0]["by"] == "user"


def test_always_lets_the_rest_of_the_task_through_unasked() -> None:
    steps = Steps(run_task(setup(interactive=True), empty(), user("write twice")))
    steps.send(answer("", call("c1", "write_file", path="a.txt", content="x")))
    steps.send(resolved("a.txt"))
    assert isinstance(steps.effect, AskPerson)
    steps.send(Answer(True, always=("write_file",)))
    assert isinstance(steps.effect, RunTool)
    steps.send(ToolRun("wrote a.txt"))
    steps.send(answer("", call("c2", "write_file", path="b.txt", content="y")))
    steps.send(resolved("b.txt"))
    assert isinstance(steps.effect, RunTool), "asked again after always"
    assert steps.recorded("session_rule") == [{"id": "c1", "rules": ["write_file"]}]


def test_a_path_that_leads_out_of_the_project_is_denied_before_any_rule() -> None:
    policy = parse_policy({"allow": ["read_file"]})
    steps = Steps(run_task(setup(policy=policy), empty(), user("read")))
    steps.send(answer("", call("c1", "read_file", path="link/secret")))
    steps.send(ResolvedPath(None, "/etc/secret", "link/secret resolves to /etc/secret"))
    assert isinstance(steps.effect, CallModel)
    assert results(steps.stored) == [("c1", "denied: link/secret resolves to /etc/secret", True)]
    assert steps.recorded("denial")[0]["rule"] == "(project)"


def test_an_interrupted_call_leaves_the_others_answered_but_not_run() -> None:
    policy = parse_policy({"allow": ["bash"]})
    steps = Steps(run_task(setup(policy=policy), empty(), user("go")))
    steps.send(
        answer(
            "",
            call("c1", "bash", command="sleep 100"),
            call("c2", "bash", command="echo 2"),
            call("c3", "bash", command="echo 3"),
        )
    )
    assert isinstance(steps.effect, RunTool)
    steps.send(ToolRun("", is_error=True, interrupted=True))
    assert steps.done
    assert (steps.result.status, steps.result.by_user) == ("interrupted", True)
    assert results(steps.stored) == [
        ("c1", INTERRUPTED_RESULT, True),
        ("c2", NOT_RUN_RESULT, True),
        ("c3", NOT_RUN_RESULT, True),
    ]


def test_a_touched_path_fires_a_glob_rule_once() -> None:
    from seri.pure.agent.rules import GlobRule

    rule = GlobRule("migrations", ("db/**",), "Never edit a migration that ran.")
    steps = Steps(run_task(setup(glob_rules=(rule,)), empty(), user("look")))
    steps.send(answer("", call("c1", "read_file", path="db/001.sql")))
    steps.send(resolved("db/001.sql"))
    steps.send(ToolRun("CREATE TABLE t", touched_paths=("db/001.sql",)))
    fired = [m for m in steps.stored if m.kind == "rule"]
    assert len(fired) == 1 and "Never edit a migration" in fired[0].text
    steps.send(answer("", call("c2", "read_file", path="db/002.sql")))
    steps.send(resolved("db/002.sql"))
    steps.send(ToolRun("ALTER TABLE t", touched_paths=("db/002.sql",)))
    assert len([m for m in steps.stored if m.kind == "rule"]) == 1
