"""Driving a flow of effects by hand, the way httpx's tests drive ``auth_flow``.

A test sends each answer itself and looks at the next effect; ``Steps`` only keeps the
bookkeeping effects (stored messages, recorded events, counters, notices) out of the way
and remembers them, so that a test reads as the conversation between the loop and the world.
"""

from __future__ import annotations

import json
from typing import Any

from seri.pure.agent.effects import CallModel, Persist, Record, Reply, Say, UpdateCounters
from seri.pure.agent.task_records import Conversation, TaskSetup
from seri.pure.permissions.permission_policy import Policy, parse_policy
from seri.pure.session.records import Message, ToolCall, Usage
from seri.pure.tools.tool_specs import select_specs

BOOKKEEPING = (Persist, Record, Say, UpdateCounters)


class Steps:
    """A flow being driven: ``effect`` is the effect waiting for its answer."""

    def __init__(self, flow: Any) -> None:
        self.flow = flow
        self.stored: list[Message] = []
        self.records: list[tuple[str, dict[str, Any]]] = []
        self.said: list[str] = []
        self.result: Any = None
        self.done = False
        self.effect: Any = None
        try:
            first = next(flow)
        except StopIteration as stop:
            self._end(stop.value)
            return
        self._settle(first)

    def send(self, answer: Reply) -> Any:
        """Answer the waiting effect; returns the next one that is not bookkeeping."""
        assert not self.done, "the flow has ended"
        try:
            effect = self.flow.send(answer)
        except StopIteration as stop:
            self._end(stop.value)
            return None
        self._settle(effect)
        return self.effect

    def _settle(self, effect: Any) -> None:
        while isinstance(effect, BOOKKEEPING):
            if isinstance(effect, Persist):
                self.stored.extend(effect.messages)
            elif isinstance(effect, Record):
                self.records.append((effect.event.type, effect.event.export()))
            elif isinstance(effect, Say):
                self.said.append(effect.text)
            try:
                effect = self.flow.send(None)
            except StopIteration as stop:
                self._end(stop.value)
                return
        self.effect = effect

    def _end(self, value: Any) -> None:
        self.done, self.result, self.effect = True, value, None

    def summarize(self, reply: Any) -> int:
        """Answer every summarizer request of a fold with ``reply``; how many there were."""
        asked = 0
        while isinstance(self.effect, CallModel) and self.effect.purpose == "summary":
            asked += 1
            self.send(reply)
        return asked

    def recorded(self, type_: str) -> list[dict[str, Any]]:
        return [data for kind, data in self.records if kind == type_]


def setup(
    *,
    tools: tuple[str, ...] = ("read_file", "write_file", "edit", "glob", "grep", "bash"),
    policy: Policy | None = None,
    interactive: bool = False,
    max_turns: int = 10,
    context_window: int = 200_000,
    keep_tokens: int = 20_000,
    **more: Any,
) -> TaskSetup:
    return TaskSetup(
        system_prompt="You are seri.",
        max_turns=max_turns,
        context_window=context_window,
        keep_tokens=keep_tokens,
        elide_bytes=4_096,
        policy=parse_policy({}) if policy is None else policy,
        interactive=interactive,
        tools=select_specs(tools),
        **more,
    )


def user(text: str) -> Message:
    return Message(role="user", text=text)


def answer(text: str, *calls: ToolCall, usage: Usage | None = None) -> Any:
    from seri.pure.agent.effects import ModelReply

    return ModelReply(Message(role="assistant", text=text, tool_calls=calls), usage)


def call(call_id: str, name: str, **arguments: Any) -> ToolCall:
    return ToolCall(call_id, name, json.dumps(arguments))


def empty() -> Conversation:
    return Conversation(())


def results(stored: list[Message]) -> list[tuple[str, str, bool]]:
    """The tool results stored, as (call id, text, is_error)."""
    return [(m.tool_call_id, m.text, m.is_error) for m in stored if m.role == "tool"]
