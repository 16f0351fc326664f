"""What a session puts between the agent loop's ports and what fills them: the front-end
as the loop's ``Person`` (an "always" is kept with the session before the loop goes on),
and the tools with the session's hooks run around each call."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from typing import Any

from seri.pure.agent.effects import Answer, AskPerson, ResolvedPath, ToolRun
from seri.pure.session.records import ToolCall
from seri.pure.trajectories.event_record import Event
from seri.runtime.agent.ports import ToolPort
from seri.runtime.session.ports import FrontEnd, ToolHooks

# Told the rules a person allowed with "always", and the call they were given for.
OnAlways = Callable[[tuple[str, ...], AskPerson], None]


class Seat:
    def __init__(self, front: FrontEnd, on_always: OnAlways) -> None:
        self.front = front
        self.on_always = on_always
        # Whether tool calls are shown (then a write's before and after are read for +N -M).
        self.shows_tools = front.shows_tools

    def ask(self, request: AskPerson) -> Answer:
        answer = self.front.ask(request)
        if answer.approved and answer.always:
            self.on_always(answer.always, request)
        return answer

    def notice(self, text: str) -> None:
        self.front.notice(text)

    def model_call_started(self, purpose: str) -> None:
        self.front.model_call_started(purpose)

    def model_call_finished(self) -> None:
        self.front.model_call_finished()

    def tool_started(self, call: ToolCall, arguments: Mapping[str, Any]) -> None:
        self.front.tool_started(call, arguments)

    def tool_finished(
        self,
        call: ToolCall,
        arguments: Mapping[str, Any],
        run: ToolRun,
        change: tuple[str | None, str | None] | None,
    ) -> None:
        self.front.tool_finished(call, arguments, run, change)

    def recorded(self, event: Event) -> None:
        self.front.recorded(event)


class HookedTools:
    """The tools, with ``hooks`` run before and after each call."""

    def __init__(self, tools: ToolPort, hooks: ToolHooks) -> None:
        self.tools = tools
        self.hooks = hooks

    def resolve(self, raw: str) -> ResolvedPath:
        return self.tools.resolve(raw)

    def current_text(self, raw: str) -> str | None:
        return self.tools.current_text(raw)

    def one_call(self) -> AbstractContextManager[None]:
        return self.tools.one_call()

    def run(
        self, call: ToolCall, arguments: Mapping[str, Any], max_chars: int | None = None
    ) -> ToolRun:
        refused = self.hooks.before(call, arguments)
        if refused is not None:
            return ToolRun(f"not run: {refused}", is_error=True)
        run = self.tools.run(call, arguments, max_chars)
        self.hooks.after(call, arguments, run)
        return run
