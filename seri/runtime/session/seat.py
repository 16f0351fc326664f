"""The front-end as the agent loop's ``Person``, with what a session adds to an answer:
an "always" is kept with the session before the loop goes on."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from seri.pure.effects import Answer, AskPerson, ToolRun
from seri.pure.events import Event
from seri.pure.records import ToolCall
from seri.runtime.session.ports import FrontEnd

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
