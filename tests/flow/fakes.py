"""Fake ports for the flow tests: adapters that keep what they were given, not mocks
(cosmicpython's fakes, gidgethub's MockGitHubAPI)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from seri.pure.agent.effects import (
    ApplyCompaction,
    CallModel,
    ModelFailed,
    ModelReply,
    ResolvedPath,
    ShrinkPayloads,
    ToolRun,
    UpdateCounters,
)
from seri.pure.session.records import Message, ToolCall
from seri.pure.trajectories.event_record import Event

SECRET = "sk-or-v1-abcdefghijklmnop"


class FakeModel:
    """Answers requests from a script, and keeps them."""

    def __init__(self, *replies: ModelReply | ModelFailed) -> None:
        self.replies = list(replies)
        self.requests: list[CallModel] = []

    def call(self, request: CallModel) -> ModelReply | ModelFailed:
        self.requests.append(request)
        return self.replies.pop(0)


class FakeTools:
    def __init__(self) -> None:
        self.ran: list[tuple[str, dict[str, Any]]] = []

    def resolve(self, raw: str) -> ResolvedPath:
        return ResolvedPath(raw, f"/project/{raw}")

    def run(
        self, call: ToolCall, arguments: Mapping[str, Any], max_chars: int | None = None
    ) -> ToolRun:
        self.ran.append((call.name, dict(arguments)))
        return ToolRun(f"{call.name} ran; the key is {SECRET}", touched_paths=("a.txt",))

    def current_text(self, raw: str) -> str | None:
        return None

    def one_call(self) -> AbstractContextManager[None]:
        return nullcontext()


class FakeSession:
    """The session log in memory: a list of messages and a revision."""

    def __init__(self, *, changed: bool = False) -> None:
        self.messages: list[Message] = []
        self.revision = 0
        self.counters: list[UpdateCounters] = []
        self.changed = changed
        self.swaps: list[str] = []

    def changed_elsewhere(self) -> bool:
        return self.changed

    def append(self, messages: Sequence[Message]) -> None:
        self.messages.extend(messages)
        self.revision += 1

    def note_counters(self, counters: UpdateCounters) -> None:
        self.counters.append(counters)

    def flush_counters(self) -> None:
        return

    def swap_compaction(self, effect: ApplyCompaction, recap_message: Message) -> bool:
        self.swaps.append("compaction")
        return not self.changed

    def swap_shrink(self, effect: ShrinkPayloads, replacements: Sequence[Any]) -> bool:
        self.swaps.append("shrink")
        return not self.changed


class FakeRecorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, dict[str, Any]]] = []
        self.flushed = 0

    def record(self, event: Event) -> None:
        self.events.append((event.type, event.export()))

    def flush(self) -> None:
        self.flushed += 1


def reply(text: str, *calls: ToolCall) -> ModelReply:
    return ModelReply(Message(role="assistant", text=text, tool_calls=calls))
