"""The steps of one ATIF document from its timeline: events and stored messages in time order.

``Timeline`` keeps the document's steps and the state between them (the agent step under
way, which step made each tool call, the totals), and turns the session's stored messages
into steps: a person's message is a ``user`` step, an assistant message gives its ``agent``
step the words, a tool message is the result of the call it answers. The recorded events
are the subclass's (``atif_events``), and so is embedding a subagent (``atif``), in the
``DocumentContext`` every document of one export shares.
"""

from __future__ import annotations

import abc
import re
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from seri.pure.session.records import Message
from seri.pure.trajectories.atif_recordings import (
    RecordedEvent,
    SessionMessages,
    StoredMessage,
    json_object,
)
from seri.pure.trajectories.atif_steps import AtifStep, CallTotals, stamp, tool_call_of

# The result text of the `task` tool starts with this, naming the child session.
_SUBAGENT_RESULT = re.compile(r"\[subagent ([0-9A-Za-z_-]+)\]")


@attrs.frozen
class DocumentContext:
    """What every document of one export shares: who ran, as what."""

    session_id: str
    trajectory_id: str
    agent: dict[str, Any]
    reasoning_effort: Any
    extra: dict[str, Any]
    continued_by: str = ""
    # The trajectories this document is embedded in, outermost first.
    enclosing: tuple[str, ...] = ()

    def for_child(self, child_id: str) -> DocumentContext:
        return DocumentContext(
            self.session_id,
            child_id,
            self.agent,
            self.reasoning_effort,
            {"seri_session": child_id, "subagent_of": self.extra.get("seri_session")},
            enclosing=(*self.enclosing, self.trajectory_id),
        )

    def encloses(self, trajectory_id: str) -> bool:
        """Whether ``trajectory_id`` is this document or one it is embedded in."""
        return trajectory_id == self.trajectory_id or trajectory_id in self.enclosing


class Timeline(abc.ABC):
    """Builds one document's steps from its timeline of events and messages."""

    def __init__(
        self,
        subagents: Mapping[str, SessionMessages],
        spans: Mapping[str, list[RecordedEvent]],
        context: DocumentContext,
    ) -> None:
        self.steps: list[AtifStep] = []
        self.current: AtifStep | None = None
        self.call_steps: dict[str, AtifStep] = {}
        self.running_call = ""
        self.totals = CallTotals()
        self.summarizer = CallTotals()
        self.summary_calls = 0
        self.tasks: list[dict[str, Any]] = []
        self.extra: dict[str, Any] = {}
        self.unmatched_calls = 0
        self.subagents = subagents
        self.spans = spans
        self.context = context
        self.children: list[dict[str, Any]] = []
        # Subagents without a step of their own, whose calls were counted here instead.
        self.unshown: set[str] = set()
        self.embedded: set[str] = set()
        # The announcement of the compaction under way (compaction_start): a fact of its step.
        self.compaction_announced: dict[str, Any] | None = None

    # -- the timeline --------------------------------------------------------------------

    def feed(self, events: Sequence[RecordedEvent], messages: Sequence[StoredMessage]) -> None:
        timeline: list[tuple[float, int, int, Any]] = [
            (event.at, 0, index, event) for index, event in enumerate(events)
        ]
        timeline += [(m.created, 1, m.seq, m) for m in messages]
        timeline.sort(key=lambda item: item[:3])
        for _, _, _, item in timeline:
            if isinstance(item, RecordedEvent):
                self._event(item.type, item.at, json_object(item.body))
            else:
                self._message(item)
        self._close_agent_step()

    def _new(self, source: str, timestamp: str | None, **fields: Any) -> AtifStep:
        step = AtifStep(source, timestamp, **fields)
        self.steps.append(step)
        return step

    def _close_agent_step(self) -> None:
        if self.current is not None and self.current.awaiting_message:
            self.current.awaiting_message = False
            self.current.extra["message_stored"] = False
            self.unmatched_calls += 1

    # -- messages ------------------------------------------------------------------------

    def _message(self, stored: StoredMessage) -> None:
        message = stored.message
        when = stamp(stored.created)
        if message.role == "assistant":
            self._assistant(message, when)
            return
        if message.role == "tool":
            self._tool_message(message, when)
            return
        self._close_agent_step()
        self.current = None
        if message.role == "user" and not message.kind:
            self._new("user", when, message=message.text)
        else:
            extra = {"role": message.role, **({"kind": message.kind} if message.kind else {})}
            self._new("system", when, message=message.text, extra=extra)

    def _assistant(self, message: Message, when: str | None) -> None:
        step = self.current
        if step is None or not step.awaiting_message:
            self._close_agent_step()
            step = self._new("agent", when)
            self.current = step
        step.awaiting_message = False
        step.message = message.text
        step.reasoning = message.reasoning
        if message.kind:
            step.extra["kind"] = message.kind
        for call in message.tool_calls:
            self._add_call(step, call.id, call.name, call.arguments)

    def _add_call(self, step: AtifStep, call_id: str, name: str, arguments: Any) -> None:
        if all(c["tool_call_id"] != call_id for c in step.calls):
            step.calls.append(tool_call_of(call_id, name, arguments))
        self.call_steps[call_id] = step

    def _tool_message(self, message: Message, when: str | None) -> None:
        step = self.call_steps.get(message.tool_call_id)
        extra: dict[str, Any] = {}
        if message.is_error:
            extra["is_error"] = True
        if message.kind:
            extra["kind"] = message.kind
        if step is None:
            # A call made in an earlier document (a result seri supplied on resume).
            self._close_agent_step()
            self.current = None
            loose = {
                "content": message.text,
                "extra": {
                    "tool_call_id": message.tool_call_id,
                    "tool_name": message.tool_name,
                    **extra,
                },
            }
            self._new(
                "system",
                when,
                message=f"result of {message.tool_name} {message.tool_call_id}",
                loose_results=[loose],
            )
            return
        result = step.result(message.tool_call_id)
        result["content"] = message.text
        if extra:
            result.setdefault("extra", {}).update(extra)
        child = _SUBAGENT_RESULT.match(message.text)
        if message.tool_name == "task" and child and "subagent_trajectory_ref" not in result:
            self._embed(result, child.group(1))

    @abc.abstractmethod
    def _event(self, kind: str, at: float, body: dict[str, Any]) -> None:
        """A recorded event, in its place among the messages."""

    @abc.abstractmethod
    def _embed(self, result: dict[str, Any], child_id: str) -> None:
        """The subagent ``child_id`` named in a tool call's ``result`` (and embedded once)."""
