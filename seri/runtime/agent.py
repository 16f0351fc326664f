"""The one place an agent is put together: for a chat, a shell compaction or a subagent.

An agent is the pure loop's fixed setup (``TaskSetup``: the frozen prompt, the window, the
budget, the policy, the tools offered) and an interpreter whose ports are filled for the
role: a chat talks to a person and runs the whole toolbox, a subagent runs the tools its
parent allows and asks no one, a compaction runs no tool at all but counts the chat's tool
definitions in the window (they fill it when the session next runs).
"""

from __future__ import annotations

import enum
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import attrs

from seri.pure.cuts import keep_budget
from seri.pure.effects import Flow
from seri.pure.output_budget import OutputBudget
from seri.pure.permission_policy import Policy
from seri.pure.records import Message, MessageKind
from seri.pure.redaction import Redactor
from seri.pure.rules import GlobRule
from seri.pure.settings import Settings, configured_max_tokens
from seri.pure.tool_specs import SPECS, ToolSpec, tool_definition_chars
from seri.pure.turn import (
    CompactEnd,
    Conversation,
    TaskEnd,
    TaskSetup,
    compact_on_demand,
    run_task,
)
from seri.pure.value_record import ValueRecord
from seri.runtime.interpreter import Interpreter
from seri.runtime.model_caller import ModelCaller
from seri.runtime.ports import Nobody, NoTools, Person, SessionPort, SpendingPort, ToolPort
from seri.runtime.run_events import RunEvents

if TYPE_CHECKING:
    from seri.runtime.hook_host import HookHost

T = TypeVar("T")

# The tools a chat offers its model: every built-in one, in the order of their definitions
# (then the tools of its MCP servers that are up).
PARENT_TOOLS: tuple[ToolSpec, ...] = SPECS


class Role(enum.Enum):
    """Whom an agent works for, which decides what it may do."""

    CHAT = "chat"
    COMPACTION = "compaction"
    SUBAGENT = "subagent"


@attrs.frozen(repr=False, eq=False)
class Agent(ValueRecord):
    """A task setup and the interpreter that carries its effects out."""

    role: Role
    setup: TaskSetup
    interpreter: Interpreter
    # The model caller this agent made for itself (closed with it); None when it was lent one.
    own_caller: ModelCaller | None = None

    def close(self) -> None:
        if self.own_caller is not None:
            self.own_caller.close()

    def run(self, flow: Flow[T]) -> T:
        return self.interpreter.run(flow)

    def run_task(
        self, conversation: Conversation, prompt: str, turns_used: int = 0, kind: MessageKind = ""
    ) -> TaskEnd:
        """Work on ``prompt`` until the model answers without a tool call, or the budget ends
        (``kind``: "skill" for a skill the person started with /name)."""
        message = Message(role="user", text=prompt, kind=kind)
        return self.run(run_task(self.setup, conversation, message, turns_used))

    def compact(self, conversation: Conversation, focus: str, trigger: str) -> CompactEnd:
        """Compact now (``/compact``, ``seri compact``)."""
        return self.run(compact_on_demand(self.setup, conversation, focus, trigger))


def build_agent(
    role: Role,
    *,
    settings: Settings,
    api_key: str,
    window: int,
    system_prompt: str,
    project: str,
    session: SessionPort,
    events: RunEvents,
    redactor: Redactor,
    spill_dir: Path | None,
    tools: ToolPort | None = None,
    offered: tuple[ToolSpec, ...] = (),
    deferred: bool = False,
    person: Person | None = None,
    policy: Policy | None = None,
    glob_rules: tuple[GlobRule, ...] = (),
    interactive: bool = False,
    max_turns: int | None = None,
    caller: ModelCaller | None = None,
    budget: OutputBudget | None = None,
    spending: SpendingPort | None = None,
    hooks: HookHost | None = None,
) -> Agent:
    """An agent for ``role``.

    ``offered`` are the tools the model may call (none for a compaction), ``deferred`` whether
    MCP tools among them go out by name and one line (``tool_search`` then among them);
    ``caller`` is a model caller to reuse (a chat keeps one across tasks, for its wire cache
    and its usage; it is given this task's tools), else one is made for ``offered``.
    ``max_turns`` defaults by role: the subagent's own budget, one for a compaction (which
    takes no turn). ``spending`` is the run's usage so far: with it, a chat or a subagent
    keeps to ``settings.max_budget_usd``.
    """
    if role is Role.COMPACTION:
        offered, tools, interactive = (), NoTools(), False
        # The chat's tool definitions fill the window the compaction must leave room in.
        counted = PARENT_TOOLS
    else:
        counted = offered
    if role is not Role.CHAT:
        person, interactive = Nobody(), False
    if max_turns is None:
        max_turns = settings.subagent_max_turns if role is Role.SUBAGENT else 1
    setup = TaskSetup(
        system_prompt=system_prompt,
        max_turns=max_turns,
        context_window=window,
        keep_tokens=keep_budget(settings.keep_tokens, window),
        elide_bytes=settings.elide_bytes,
        policy=Policy() if policy is None else policy,
        interactive=interactive,
        tools=offered,
        glob_rules=glob_rules,
        tool_chars=tool_definition_chars(counted, deferred),
        project=project,
        max_tokens=configured_max_tokens(settings),
        budget=OutputBudget.of(settings.sampling) if budget is None else budget,
        max_budget_usd=None if spending is None else settings.max_budget_usd,
        hook_events=frozenset() if hooks is None else hooks.configured(child=role is not Role.CHAT),
    )
    own_caller = None
    if caller is None:
        caller = own_caller = ModelCaller(settings, api_key, events, offered, deferred=deferred)
    elif role is not Role.COMPACTION and isinstance(caller, ModelCaller):
        # (A test may lend a fake ModelPort, which builds no request.)
        caller.offer(offered, deferred)
    interpreter = Interpreter(
        model=caller,
        tools=NoTools() if tools is None else tools,
        session=session,
        recorder=events,
        person=Nobody() if person is None else person,
        redactor=redactor,
        spill_dir=spill_dir,
        spending=spending,
        hooks=hooks,
    )
    return Agent(role, setup, interpreter, own_caller)
