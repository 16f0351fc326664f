"""One task: model turns until the model answers without asking for a tool.

``run_task`` is a generator of effects (``seri.pure.effects``). It owns every
decision: the turn budget, when to compact, what happens on overflow, which
tool calls may run, that every tool call gets exactly one result, which rules
fire. The driver in ``seri.io`` only carries the effects out.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from typing import Any, Literal

import attrs

from seri.pure.compaction import NOT_ENOUGH_HISTORY, Compacted, compact
from seri.pure.effects import (
    AskPerson,
    CallModel,
    Effect,
    ModelFailed,
    ModelReply,
    Persist,
    Record,
    ResolvedPath,
    ResolvePath,
    RunTool,
    Say,
    ToolRun,
    UpdateCounters,
)
from seri.pure.permissions import Policy, decide
from seri.pure.recap import Recap
from seri.pure.records import Message, ToolCall, Usage
from seri.pure.rules import GlobRule, rules_fired_by
from seri.pure.tokens import history_estimate, message_chars, should_compact
from seri.pure.tool_specs import parse_arguments

EndStatus = Literal["done", "max_turns", "error", "interrupted", "overflow"]

# Tools whose "path" argument names a file the permission rules judge.
PATH_TOOLS = frozenset({"read_file", "write_file", "edit", "grep"})
INTERRUPTED_RESULT = "interrupted by user: the tool call did not finish"
NOT_RUN_RESULT = "not run: the turn was interrupted before this call"


@attrs.frozen
class TaskSetup:
    """What stays fixed for a task: frozen prompt, budget, window, policy."""

    system_prompt: str
    max_turns: int
    context_window: int
    keep_tokens: int
    elide_bytes: int
    policy: Policy
    interactive: bool
    tool_names: tuple[str, ...]
    glob_rules: tuple[GlobRule, ...] = ()


@attrs.frozen
class Conversation:
    """A session's conversation as the loop sees it; ``total_chars`` is kept incrementally."""

    history: tuple[Message, ...]
    recap: Recap | None = None
    total_chars: int = 0
    last_input_tokens: int = 0
    fired_rules: frozenset[str] = frozenset()


@attrs.frozen
class TaskEnd:
    status: EndStatus
    answer: str
    conversation: Conversation
    turns: int
    detail: str = ""
    # Ended by the person's Ctrl-C, not by a cut stream: the exit status is then 130.
    by_user: bool = False


def conversation_of(
    history: Sequence[Message],
    recap: Recap | None,
    last_input_tokens: int,
    total_chars: int | None = None,
    fired_rules: frozenset[str] = frozenset(),
) -> Conversation:
    chars = sum(message_chars(m) for m in history) if total_chars is None else total_chars
    return Conversation(tuple(history), recap, chars, last_input_tokens, fired_rules)


def usage_record(usage: Usage | None) -> dict[str, Any]:
    if usage is None:
        return {"reported": False}
    return {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "reasoning_tokens": usage.reasoning_tokens,
        "cached_tokens": usage.cached_tokens,
        "cost": usage.cost,
        "provider": usage.provider or None,
    }


class _Loop:
    """Mutable working state of one task; lives only inside ``run_task``."""

    def __init__(self, setup: TaskSetup, conversation: Conversation) -> None:
        self.setup = setup
        self.history = list(conversation.history)
        self.recap = conversation.recap
        self.chars = conversation.total_chars
        self.billed = conversation.last_input_tokens
        self.fired = set(conversation.fired_rules)
        self.turns = 0

    def add(self, messages: Sequence[Message]) -> Persist:
        self.history.extend(messages)
        self.chars += sum(message_chars(m) for m in messages)
        return Persist(tuple(messages))

    def estimate(self) -> int:
        return history_estimate(self.billed, self.chars + len(self.setup.system_prompt))

    def conversation(self) -> Conversation:
        return Conversation(
            tuple(self.history), self.recap, self.chars, self.billed, frozenset(self.fired)
        )

    def end(
        self, status: EndStatus, answer: str = "", detail: str = "", *, by_user: bool = False
    ) -> TaskEnd:
        return TaskEnd(status, answer, self.conversation(), self.turns, detail, by_user)

    def compaction(
        self, trigger: str, focus: str = "", keep_tokens: int | None = None
    ) -> Generator[Effect, Any, str]:
        """Run one compaction; returns '' on success, else why it did not happen."""
        outcome = yield from compact(
            self.history,
            self.recap,
            keep_tokens=self.setup.keep_tokens if keep_tokens is None else keep_tokens,
            elide_bytes=self.setup.elide_bytes,
            trigger=trigger,
            focus=focus,
            # The frozen system prompt fills the window too: both ledger numbers count it.
            system_chars=len(self.setup.system_prompt),
            estimate_before=self.estimate(),
            # Room for the summarizer's own instructions and its answer.
            summary_budget=self.setup.context_window // 2,
        )
        if not isinstance(outcome, Compacted):
            return outcome.reason
        self.history = list(outcome.history)
        self.recap = outcome.recap
        self.chars = sum(message_chars(m) for m in self.history)
        # The last bill counted the evicted messages; it says nothing about the new history.
        self.billed = 0
        return ""


def run_task(
    setup: TaskSetup, conversation: Conversation, prompt: Message, turns_used: int = 0
) -> Generator[Effect, Any, TaskEnd]:
    """Work on ``prompt`` until the model answers without tool calls, or the budget ends."""
    loop = _Loop(setup, conversation)
    loop.turns = turns_used
    yield loop.add((prompt,))
    while True:
        if loop.turns >= setup.max_turns:
            message = (
                f"turn budget spent: {loop.turns} of {setup.max_turns} model turns used; "
                "raise it with --max-turns N or /max-turns N"
            )
            yield Record("turn_end", {"status": "max_turns", "turns": loop.turns})
            return loop.end("max_turns", detail=message)
        reply = yield from _model_call(loop)
        if isinstance(reply, TaskEnd):
            return reply
        loop.turns += 1
        if reply.usage is not None and reply.usage.input_tokens:
            loop.billed = reply.usage.input_tokens
        yield UpdateCounters(loop.turns, loop.billed)
        yield loop.add((reply.message,))
        if not reply.message.tool_calls:
            yield Record("turn_end", {"status": "done", "turns": loop.turns})
            return loop.end("done", reply.message.text)
        interrupted = yield from _answer_calls(loop, reply)
        if interrupted:
            yield Record("turn_end", {"status": "interrupted", "turns": loop.turns})
            return loop.end("interrupted", detail="interrupted by user", by_user=True)


def _model_call(loop: _Loop) -> Generator[Effect, Any, ModelReply | TaskEnd]:
    """One model call with at most one automatic and one overflow compaction."""
    setup = loop.setup
    estimate = loop.estimate()
    if should_compact(estimate, setup.context_window):
        why_not = yield from loop.compaction("auto")
        if why_not and why_not != NOT_ENOUGH_HISTORY:
            # Fail-soft: the turn goes on with the uncompacted history. (No safe cut yet is
            # not a failure: it would only repeat before every call until one exists.)
            yield Say(f"warning: automatic compaction skipped: {why_not}")
    reply = yield CallModel(tuple(loop.history), "turn", setup.system_prompt)
    if isinstance(reply, ModelFailed) and reply.overflow:
        refused = loop.estimate()
        yield Record("overflow", {"error": reply.error, "estimate": refused})
        why_not = yield from loop.compaction(
            "overflow", keep_tokens=overflow_keep_tokens(setup.keep_tokens, refused)
        )
        if why_not:
            yield Record("turn_end", {"status": "overflow", "turns": loop.turns})
            return loop.end(
                "overflow", detail=f"the request is too long and compaction failed: {why_not}"
            )
        reply = yield CallModel(tuple(loop.history), "turn", setup.system_prompt)
        if isinstance(reply, ModelFailed) and reply.overflow:
            yield Record("turn_end", {"status": "overflow", "turns": loop.turns})
            return loop.end(
                "overflow", detail=f"the request is still too long after compacting: {reply.error}"
            )
    if isinstance(reply, ModelFailed):
        status: EndStatus = "interrupted" if reply.interrupted else "error"
        if reply.usage is not None or reply.partial is not None:
            yield Record(
                "model_call",
                {
                    "finish_reason": "incomplete",
                    "usage": usage_record(reply.usage),
                    "tool_calls": 0,
                },
            )
        if reply.partial is not None:
            yield loop.add((reply.partial,))
        yield Record("turn_end", {"status": status, "turns": loop.turns, "error": reply.error})
        return loop.end(status, detail=reply.error, by_user=reply.by_user)
    assert isinstance(reply, ModelReply)
    yield Record(
        "model_call",
        {
            "finish_reason": reply.finish_reason,
            "usage": usage_record(reply.usage),
            "tool_calls": len(reply.message.tool_calls),
        },
    )
    return reply


def overflow_keep_tokens(keep_tokens: int, refused_estimate: int) -> int:
    """The keep budget of the compaction that answers a provider's "too long".

    The usual budget cannot be trusted here: an automatic compaction may have just chosen the
    tail that was refused, and cutting the same history by the same budget finds the same tail
    again (no cut, so the overflow retry could never happen). And the window seri believed in
    was evidently too large. So this one compaction keeps at most a quarter of what was refused.
    """
    return max(1, min(keep_tokens, refused_estimate // 4))


def _answer_calls(loop: _Loop, reply: ModelReply) -> Generator[Effect, Any, bool]:
    """Give every tool call exactly one result; returns True if the person interrupted."""
    interrupted = False
    touched: list[str] = []
    seen_ids: set[str] = set()
    for call in reply.message.tool_calls:
        if interrupted:
            yield loop.add((_result(call, NOT_RUN_RESULT, is_error=True),))
            continue
        run = yield from _one_call(loop, call, reply, seen_ids)
        seen_ids.add(call.id)
        interrupted = run.interrupted
        touched.extend(run.touched_paths)
        yield loop.add((_result(call, run.text, is_error=run.is_error),))
    fired = rules_fired_by(loop.setup.glob_rules, touched, frozenset(loop.fired))
    for rule in fired:
        loop.fired.add(rule.name)
        yield Record("rule", {"name": rule.name, "paths": touched})
        yield loop.add((Message(role="user", text=rule.message_text(), kind="rule"),))
    return interrupted


def _result(call: ToolCall, text: str, *, is_error: bool) -> Message:
    return Message(
        role="tool", text=text, tool_call_id=call.id, tool_name=call.name, is_error=is_error
    )


def _one_call(
    loop: _Loop, call: ToolCall, reply: ModelReply, seen_ids: set[str]
) -> Generator[Effect, Any, ToolRun]:
    setup = loop.setup
    yield Record("tool_call", {"id": call.id, "name": call.name, "arguments": call.arguments})
    rejection = ""
    if not reply.tool_calls_runnable:
        rejection = f"not run: {reply.unrunnable_reason or 'the call arrived incomplete'}"
    elif call.id in seen_ids:
        rejection = f"not run: duplicate tool call id {call.id}"
    elif call.name not in setup.tool_names:
        rejection = (
            f"not run: unknown tool '{call.name}'; the tools are {', '.join(setup.tool_names)}"
        )
    arguments: dict[str, Any] = {}
    if not rejection:
        parsed = parse_arguments(call)
        if isinstance(parsed, str):
            rejection = f"not run: {parsed}"
        else:
            arguments = parsed
    if rejection:
        yield Record("tool_result", {"id": call.id, "ok": False, "error": rejection})
        return ToolRun(rejection, is_error=True)
    where = ResolvedPath(None, None)
    raw_path = arguments.get("path")
    if call.name in PATH_TOOLS and isinstance(raw_path, str):
        where = yield ResolvePath(raw_path)
        if where.refused:
            yield Record(
                "denial",
                {"id": call.id, "name": call.name, "rule": "(project)", "reason": where.refused},
            )
            return ToolRun(f"denied: {where.refused}", is_error=True)
    decision = decide(
        setup.policy,
        call.name,
        arguments,
        project_relative_path=where.relative,
        resolved_path=where.absolute,
    )
    if decision.action == "deny" or (decision.action == "ask" and not setup.interactive):
        reason = decision.reason
        if decision.action == "ask":
            reason = f"{reason}; approval is needed and no one can be asked in this mode"
        text = f"denied by {'rule ' + decision.rule if decision.rule else 'policy'}: {reason}"
        yield Record(
            "denial",
            {
                "id": call.id,
                "name": call.name,
                "rule": decision.rule,
                "reason": reason,
                "by": "policy",
            },
        )
        return ToolRun(text, is_error=True)
    if decision.action == "ask":
        approved = yield AskPerson(call, decision.reason)
        if not approved:
            yield Record(
                "denial",
                {
                    "id": call.id,
                    "name": call.name,
                    "rule": "",
                    "reason": "denied by user",
                    "by": "user",
                },
            )
            return ToolRun("denied by user", is_error=True)
    run = yield RunTool(call, arguments)
    assert isinstance(run, ToolRun)
    if run.interrupted:
        run = attrs.evolve(run, text=run.text or INTERRUPTED_RESULT, is_error=True)
    yield Record(
        "tool_result",
        {
            "id": call.id,
            "name": call.name,
            "ok": not run.is_error,
            "interrupted": run.interrupted,
            "bytes": len(run.text.encode("utf-8", "replace")),
            # The recorder stores a large result as {"elided": true, "originalBytes": N}.
            "text": run.text,
        },
    )
    return run


def compact_on_demand(
    setup: TaskSetup, conversation: Conversation, focus: str, trigger: str = "manual"
) -> Generator[Effect, Any, tuple[Conversation, str]]:
    """``/compact [focus]``: the same primitive, without waiting for the 50% trigger."""
    loop = _Loop(setup, conversation)
    why_not = yield from loop.compaction(trigger, focus)
    return loop.conversation(), why_not
