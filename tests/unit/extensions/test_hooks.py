"""Hooks' pure part: Claude Code's configuration read as written, matchers with Claude Code's
tool names, the meaning of exit codes and JSON output, several hooks deciding together, and
a hook's say in a permission decision (never past a deny rule)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs
from hypothesis import given
from hypothesis import strategies as st

from seri.pure.agent.effects import HookDecision, RunHooks
from seri.pure.extensions.hook_decisions import HookResult, combined, decide
from seri.pure.extensions.hook_events import (
    EVENTS,
    PERSON_SOURCE,
    STOP,
    STOP_LOOP_LIMIT,
    SUBAGENT_STOP,
)
from seri.pure.extensions.hook_points import stop_sent_back, with_hook
from seri.pure.extensions.hooks import (
    CLAUDE_TOOL_NAMES,
    HookCommand,
    matches,
    parse_hooks,
    tool_input,
)
from seri.pure.permissions.permission_policy import Decision
from tests.drive_effects import drive

PUBLIC = Path(__file__).parents[2] / "third_party" / "hooks" / "living-architecture"


def test_a_public_claude_code_settings_file_reads_as_written() -> None:
    document = json.loads((PUBLIC / ".claude" / "settings.json").read_text())
    (hook,), problems = parse_hooks(document["hooks"], ".claude/settings.json")
    assert problems == ()
    assert (hook.event, hook.matcher, hook.timeout, hook.sandbox) == (
        "PreToolUse",
        "Bash",
        60,
        True,
    )
    assert hook.command == "$CLAUDE_PROJECT_DIR/.claude/hooks/block-dangerous-commands.sh"
    assert hook.name == "PreToolUse #1" and hook.is_project


def test_a_bad_entry_is_named_and_the_rest_still_runs() -> None:
    document = {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "a"}]},
            {"matcher": "(", "hooks": [{"type": "command", "command": "b"}]},
            {"hooks": [{"type": "prompt", "prompt": "judge"}]},
            {"hooks": [{"type": "command", "command": "c", "timeout": "soon"}]},
        ],
        "Notification": [],
        "Stop": "not a list",
    }
    hooks, problems = parse_hooks(document, PERSON_SOURCE)
    assert [h.command for h in hooks] == ["a"]
    assert len(problems) == 5
    assert any("'Notification' is not one seri runs" in p for p in problems)


def test_a_project_hook_cannot_leave_the_sandbox() -> None:
    document = {"Stop": [{"hooks": [{"command": "x", "sandbox": False}]}]}
    (theirs,), problems = parse_hooks(document, ".seri/hooks.json")
    (mine,), _ = parse_hooks(document, PERSON_SOURCE)
    assert theirs.sandbox and not mine.sandbox and "always runs in the sandbox" in problems[0]


def _hook(matcher: str) -> HookCommand:
    return HookCommand("PreToolUse", matcher, "x", 60, PERSON_SOURCE, "PreToolUse #1")


@given(st.sampled_from(sorted(CLAUDE_TOOL_NAMES)))
def test_a_matcher_takes_claude_codes_names_and_seris(tool: str) -> None:
    assert matches(_hook(CLAUDE_TOOL_NAMES[tool]), tool)
    assert matches(_hook(tool), tool)
    assert matches(_hook(""), tool) and matches(_hook("*"), tool)
    assert matches(_hook(f"Nothing|{CLAUDE_TOOL_NAMES[tool]}"), tool)
    assert not matches(_hook("Nothing"), tool)


def test_matchers_are_whole_regular_expressions() -> None:
    assert matches(_hook("mcp__memory__.*"), "mcp__memory__create")
    assert not matches(_hook("Bas"), "bash")
    assert matches(_hook("Edit|Write"), "write_file")


def test_tool_input_carries_claude_codes_fields() -> None:
    shown = tool_input("edit", {"path": "src/a.py", "old_string": "a", "new_string": "b"}, "/p")
    assert shown["file_path"] == "/p/src/a.py" and shown["replace_all"] is False
    assert tool_input("bash", {"command": "ls"}, "/p") == {"command": "ls"}


def _ran(code: int | None, out: str = "", err: str = "") -> HookResult:
    return HookResult(code, out, err, 0.1, timed_out=code is None)


def test_exit_codes_mean_what_they_mean_in_claude_code() -> None:
    assert decide("PreToolUse", _ran(2, err="no\n")) == HookDecision("deny", "no")
    assert decide("Stop", _ran(2, err="go on")) == HookDecision("block", "go on")
    assert decide("UserPromptSubmit", _ran(2, err="x")).decision == "block"
    assert decide("PostToolUse", _ran(2, err="fix it")).context == ("fix it",)
    assert decide("SessionStart", _ran(2, err="x")).decision == ""
    assert decide("PreToolUse", _ran(1, err="boom\nmore")).notices == ("failed (exit 1): boom",)
    assert "did not finish" in decide("PreToolUse", _ran(None)).notices[0]
    assert decide("UserPromptSubmit", _ran(0, out="ctx\n")).context == ("ctx",)
    assert decide("PreToolUse", _ran(0, out="not json")) == HookDecision()


def test_json_output_decides() -> None:
    def said(event: str, data: object) -> HookDecision:
        return decide(event, _ran(0, out=json.dumps(data)))

    ask = said("PreToolUse", {"hookSpecificOutput": {"permissionDecision": "ask"}})
    assert ask.decision == "ask"
    old = said("PreToolUse", {"decision": "block", "reason": "r"})
    assert (old.decision, old.reason) == ("deny", "r")
    stop = said("Stop", {"decision": "block", "reason": "tests first"})
    assert (stop.decision, stop.reason) == ("block", "tests first")
    ended = said("PostToolUse", {"continue": False, "stopReason": "enough", "systemMessage": "m"})
    assert ended.stop and ended.stop_reason == "enough" and ended.notices == ("m",)
    post = said("PostToolUse", {"decision": "block", "reason": "lint failed"})
    assert post.decision == "" and post.context == ("lint failed",)


_decisions = st.builds(
    HookDecision,
    decision=st.sampled_from(["", "allow", "ask", "block", "deny"]),
    reason=st.text(max_size=5),
    context=st.lists(st.text(max_size=5), max_size=2).map(tuple),
)
_RANK = ["", "allow", "ask", "block", "deny"]


@given(st.lists(_decisions, max_size=5))
def test_the_strongest_decision_wins_and_every_context_is_kept(said: list[HookDecision]) -> None:
    together = combined(said)
    strongest = max((d.decision for d in said), key=_RANK.index, default="")
    assert together.decision == strongest
    assert together.context == tuple(c for d in said for c in d.context)


@given(
    st.sampled_from(["allow", "ask", "deny"]),
    st.sampled_from(["", "allow", "ask", "deny", "block"]),
)
def test_a_hook_never_overrides_a_deny_rule(policy: str, hook: str) -> None:
    decided = with_hook(Decision(policy, "r", "why"), HookDecision(hook, "because"))  # type: ignore[arg-type]
    if policy == "deny" or hook in ("deny", "block"):
        assert decided.action == "deny"
    elif hook == "ask":
        assert decided.action == "ask"
    elif hook == "allow":
        assert decided.action == "allow"
    else:
        assert decided == Decision(policy, "r", "why")  # type: ignore[arg-type]


def test_every_event_is_claude_codes_name() -> None:
    assert set(EVENTS) == {
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUse",
        "PreCompact",
        "PostCompact",
        "Stop",
        "SubagentStart",
        "SubagentStop",
        "SessionEnd",
    }


@attrs.frozen
class _Setup:
    hook_events: frozenset[str]
    project: str = "/p"


@given(
    st.sets(st.sampled_from(EVENTS)),
    st.integers(min_value=0, max_value=6),
    st.sampled_from(["", "block"]),
    st.booleans(),
)
def test_the_end_of_a_loop_asks_subagent_stop_or_stop_never_both(
    configured: set[str], sent_back: int, decision: str, stop: bool
) -> None:
    """A subagent's loop (its setup asks SubagentStop) asks SubagentStop in Stop's place; a
    block sends the model back with that event's name, never past the loop limit, and never
    when the hook said ``continue: false``."""
    asked: list[RunHooks] = []

    def answer(effect: Any) -> Any:
        if isinstance(effect, RunHooks):
            asked.append(effect)
            return HookDecision(decision, "go on", stop=stop)  # type: ignore[arg-type]
        return None

    setup = _Setup(frozenset(configured))
    back = drive(stop_sent_back(setup, sent_back, "answer"), answer)
    expected = (
        SUBAGENT_STOP if SUBAGENT_STOP in configured else STOP if STOP in configured else None
    )
    assert [effect.event for effect in asked] == ([expected] if expected else [])
    if asked:
        assert dict(asked[0].fields)["stop_hook_active"] is (sent_back > 0)
    sends = bool(asked) and decision == "block" and not stop and sent_back < STOP_LOOP_LIMIT
    if sends:
        assert back is not None and back.text == f"[hook {expected}]\ngo on"
    else:
        assert back is None
