"""What the effect interpreter needs from the world, as small protocols.

The interpreter (``seri.runtime.agent.interpreter``) carries the agent loop's effects out through
these ports and nothing else, so a chat, a shell compaction and a subagent differ only in
which adapters fill them (``seri.runtime.agent.agent.build_agent``), and a test can fill them with
fakes. Each port is as small as its one use: the model answers a request, the tools resolve
a path and run a call, the session log appends and swaps, the recorder keeps events, and
the person is told what happens and asked what may run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Any, Protocol

from seri.pure.agent.effects import (
    Answer,
    ApplyCompaction,
    AskPerson,
    CallModel,
    ModelFailed,
    ModelReply,
    ResolvedPath,
    ShrinkPayloads,
    ToolRun,
    UpdateCounters,
)
from seri.pure.agent.usage_totals import UsageTotals
from seri.pure.session.records import Message, ToolCall
from seri.pure.trajectories.event_record import Event
from seri.pure.trajectories.events import Header


class ModelPort(Protocol):
    """Sends one request to the model; every failure comes back as a value."""

    def call(self, request: CallModel) -> ModelReply | ModelFailed: ...


class ToolPort(Protocol):
    """Resolves a tool's path argument and runs one validated call."""

    def resolve(self, raw: str) -> ResolvedPath: ...

    def run(
        self, call: ToolCall, arguments: Mapping[str, Any], max_chars: int | None = None
    ) -> ToolRun: ...

    def current_text(self, raw: str) -> str | None: ...

    def one_call(self) -> AbstractContextManager[None]:
        """Around one call's run with its before and after: files are looked at once."""
        ...


class SessionPort(Protocol):
    """The session's writer (``seri.io.session.session_log.SessionLog`` or a fake)."""

    def changed_elsewhere(self) -> bool: ...

    def append(self, messages: Sequence[Message]) -> None: ...

    def note_counters(self, counters: UpdateCounters) -> None: ...

    def flush_counters(self) -> None: ...

    def swap_compaction(self, effect: ApplyCompaction, recap_message: Message) -> bool: ...

    def swap_shrink(
        self, effect: ShrinkPayloads, replacements: Sequence[tuple[int, Message]]
    ) -> bool: ...


class RecorderPort(Protocol):
    """Keeps a run's events (``seri.runtime.trajectories.run_events.RunEvents`` or a fake)."""

    def record(self, event: Event) -> None: ...

    def flush(self) -> None: ...


class SpendingPort(Protocol):
    """What the run's model calls have used so far (every call of the run, subagents'
    included): the figure a cost budget is held to."""

    def totals(self) -> UsageTotals: ...


class Person(Protocol):
    """Who watches a task run (the chat's view, or nobody): told, and asked what may run."""

    # Whether tool calls are shown (then a write's before and after are read for +N −M).
    shows_tools: bool

    def ask(self, request: AskPerson) -> Answer: ...
    def notice(self, text: str) -> None: ...
    def model_call_started(self, purpose: str) -> None: ...
    def model_call_finished(self) -> None: ...
    def tool_started(self, call: ToolCall, arguments: Mapping[str, Any]) -> None: ...
    def tool_finished(
        self,
        call: ToolCall,
        arguments: Mapping[str, Any],
        run: ToolRun,
        change: tuple[str | None, str | None] | None,
    ) -> None: ...
    def recorded(self, event: Event) -> None: ...


class EventObserver(Protocol):
    """Watches a run live: its header, every event in order with its time, and its end.

    Observers are handed to whatever opens a run (``ChatSession.open``, ``ShellCompaction``)
    and from there to the agent builder, and see every event whether or not trajectory
    recording is on. ``at`` is the event's time in epoch seconds, the one the recorder stores;
    ``header.session`` and ``header.run`` are the ids ``seri trajectory export`` writes on
    every line of the run. A chat that ``/clear``s ends one run and starts another: each is
    ``started`` once and ``finished`` once.

    An observer must not block the run (hand slow work to a thread of its own). One that
    raises is reported once on stderr and dropped; the run goes on without it.
    """

    def started(self, header: Header, at: float) -> None: ...  # once, the run's header

    def observe(self, event: Event, at: float) -> None: ...  # every event, in order

    def finished(self, at: float) -> None: ...  # once, at the run's end


class Nobody:
    """No one to ask or show anything: what needs approval is denied, notices go to stderr."""

    shows_tools = False

    def ask(self, request: AskPerson) -> Answer:
        return Answer(False)

    def notice(self, text: str) -> None:
        import sys

        from seri.pure.terminal.terminal_text import neutralise

        print(neutralise(text), file=sys.stderr)

    def model_call_started(self, purpose: str) -> None:
        return

    def model_call_finished(self) -> None:
        return

    def tool_started(self, call: ToolCall, arguments: Mapping[str, Any]) -> None:
        return

    def tool_finished(
        self,
        call: ToolCall,
        arguments: Mapping[str, Any],
        run: ToolRun,
        change: tuple[str | None, str | None] | None,
    ) -> None:
        return

    def recorded(self, event: Event) -> None:
        return


class NoTools:
    """The tools of an agent that runs none (a compaction): every call is refused as a value."""

    REFUSAL = "no tools run here"

    def resolve(self, raw: str) -> ResolvedPath:
        return ResolvedPath(None, None, self.REFUSAL)

    def run(
        self, call: ToolCall, arguments: Mapping[str, Any], max_chars: int | None = None
    ) -> ToolRun:
        return ToolRun(f"not run: {self.REFUSAL}", is_error=True)

    def current_text(self, raw: str) -> str | None:
        return None

    def one_call(self) -> AbstractContextManager[None]:
        return nullcontext()
