"""What a hook's run means, as Claude Code defines it, and what several hooks decide together.

- Exit 0: the hook agrees. Its stdout, if it is a JSON object, may say more: ``continue:
  false`` (stop), ``decision: "block"`` with a ``reason``, ``systemMessage`` (for the person),
  and ``hookSpecificOutput`` with ``permissionDecision`` (``allow``, ``deny`` or ``ask``) and
  ``permissionDecisionReason`` (PreToolUse) or ``additionalContext`` (for the model). The
  plain stdout of a UserPromptSubmit or SessionStart hook is context for the model.
- Exit 2: a blocking error; its stderr is the reason. It denies a PreToolUse call (the model
  reads why), refuses a UserPromptSubmit prompt, sends the model back to work from Stop (a
  subagent's from SubagentStop), and
  is told to the model after PostToolUse; elsewhere the person reads it.
- Any other exit, or no exit within the time limit: a non-blocking error; the person reads
  the first line of stderr and the session goes on.

Several hooks of one event decide together: deny over block over ask over allow; their
contexts and messages are all kept, in order.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from seri.pure.agent.effects import NOTHING, HookDecision, HookVerdict
from seri.pure.extensions.hook_events import (
    POST_TOOL_USE,
    PRE_TOOL_USE,
    SESSION_START,
    STOP,
    SUBAGENT_STOP,
    USER_PROMPT_SUBMIT,
)
from seri.pure.inputs import json_text
from seri.pure.trajectories import event_record, events

BLOCKING_EXIT = 2
# How much of a hook's output is taken as a reason or context (a hook is not a document).
MAX_TEXT = 10_000
_RANK: Mapping[str, int] = {"": 0, "allow": 1, "ask": 2, "block": 3, "deny": 4}
# Events whose blocking error (exit 2) reaches the model, not only the person.
_BLOCKS = frozenset((PRE_TOOL_USE, USER_PROMPT_SUBMIT, STOP, SUBAGENT_STOP, POST_TOOL_USE))


@attrs.frozen
class HookResult:
    """How one run of a hook ended: ``exit_code`` None when it did not exit in time."""

    exit_code: int | None
    stdout: str
    stderr: str
    seconds: float
    timed_out: bool = False
    # Why it did not run at all ('' when it ran): a sandbox that could not be set up, say.
    failed: str = ""


def decide(event: str, result: HookResult) -> HookDecision:
    """What one run of a hook decided."""
    if result.failed:
        return HookDecision(notices=(f"did not run: {result.failed}",))
    if result.timed_out:
        return HookDecision(notices=(f"did not finish within {result.seconds:.0f} s",))
    if result.exit_code == BLOCKING_EXIT:
        reason = _cut(result.stderr.strip()) or "blocked by a hook (exit 2)"
        if event in _BLOCKS:
            if event == POST_TOOL_USE:
                return HookDecision(context=(reason,))
            return HookDecision("deny" if event == PRE_TOOL_USE else "block", reason)
        return HookDecision(notices=(reason,))
    if result.exit_code != 0:
        first = result.stderr.strip().splitlines()[:1]
        return HookDecision(
            notices=(f"failed (exit {result.exit_code}){': ' + first[0] if first else ''}",)
        )
    return _from_output(event, result.stdout)


def _from_output(event: str, stdout: str) -> HookDecision:
    data = _json_object(stdout)
    if data is None:
        if event in (USER_PROMPT_SUBMIT, SESSION_START) and stdout.strip():
            return HookDecision(context=(_cut(stdout.strip()),))
        return NOTHING
    specific = data.get("hookSpecificOutput")
    specific = specific if isinstance(specific, Mapping) else {}
    decision: HookVerdict = ""
    reason = _text(data.get("reason"))
    permission = specific.get("permissionDecision")
    if event == PRE_TOOL_USE and permission in ("allow", "deny", "ask"):
        decision = permission
        reason = _text(specific.get("permissionDecisionReason")) or reason
    elif event == PRE_TOOL_USE and data.get("decision") in ("approve", "block"):
        # The older form: approve / block.
        decision = "allow" if data["decision"] == "approve" else "deny"
    elif data.get("decision") == "block":
        decision = "block"
    context = _text(specific.get("additionalContext"))
    if event == POST_TOOL_USE and decision == "block":
        # PostToolUse cannot undo the call: its "block" is a reason the model reads.
        decision, context = "", "\n".join(t for t in (reason, context) if t)
    notice = _text(data.get("systemMessage"))
    stop = data.get("continue") is False
    return HookDecision(
        decision=decision,
        reason=reason or ("" if not decision or decision == "allow" else "blocked by a hook"),
        context=(context,) if context else (),
        notices=(notice,) if notice else (),
        stop=stop,
        stop_reason=_text(data.get("stopReason")) if stop else "",
    )


def _json_object(text: str) -> dict[str, Any] | None:
    stripped = text.strip()
    if not stripped.startswith("{"):
        return None
    try:
        data = json_text.loads(stripped)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _text(value: Any) -> str:
    return _cut(value.strip()) if isinstance(value, str) else ""


def _cut(text: str) -> str:
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + "…"


def combined(decisions: Iterable[HookDecision]) -> HookDecision:
    """The hooks of one event together: the strongest decision with its reason; every
    context and notice; a stop if any asked for one."""
    together = NOTHING
    for one in decisions:
        stronger = _RANK[one.decision] > _RANK[together.decision]
        together = HookDecision(
            decision=one.decision if stronger else together.decision,
            reason=one.reason if stronger else together.reason,
            context=(*together.context, *one.context),
            notices=(*together.notices, *one.notices),
            stop=together.stop or one.stop,
            stop_reason=together.stop_reason or one.stop_reason,
        )
    return together


def hook_line(run: events.HookRun, interactive: bool) -> str:
    """The one line a chat shows for a hook's run."""
    command = " ".join(run.command.split())
    command = command if len(command) <= 60 else command[:59] + "…"
    exit_code = "timed out" if run.exit_code is None else f"exit {run.exit_code}"
    reason = "" if run.reason is event_record.ABSENT else f": {' '.join(str(run.reason).split())}"
    reason = reason if len(reason) <= 200 else reason[:199] + "…"
    line = (
        f"hook {run.event} `{command}` ({exit_code}, {run.seconds:.2f} s): {run.decision}{reason}"
    )
    return f"  {line}" if interactive else f"seri: {line}"
