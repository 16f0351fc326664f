"""The one place an agent is put together: for a chat, a shell compaction or a subagent.

An agent is the pure loop's fixed setup (``TaskSetup``: the frozen prompt, the window, the
budget, the policy, the tools offered) and an interpreter whose ports are filled for the
role: a chat talks to a person and runs the whole toolbox, a subagent runs the tools its
parent allows and asks no one, a compaction runs no tool at all but counts the chat's tool
definitions in the window (they fill it when the session next runs).

It is built from two records: ``AgentBrief``, what the task is set up with (values only),
and ``AgentPorts``, where its effects go (the model caller, the session log, the recorder,
the tools, the person: live objects, each closed by whoever made it, never by the agent).
"""

from __future__ import annotations

import enum
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import attrs

from seri.pure.agent.effects import Flow
from seri.pure.agent.rules import GlobRule
from seri.pure.agent.task_records import Conversation, TaskEnd, TaskSetup
from seri.pure.agent.turn import CompactEnd, compact_on_demand, run_task
from seri.pure.compaction.cuts import keep_budget
from seri.pure.inputs.settings import Settings, configured_max_tokens
from seri.pure.permissions.permission_policy import Policy
from seri.pure.provider.output_budget import OutputBudget
from seri.pure.session.records import Message, MessageKind
from seri.pure.tools.tool_definitions import tool_definition_chars
from seri.pure.tools.tool_specs import SPECS, ToolSpec
from seri.pure.trajectories.redaction import Redactor
from seri.runtime.agent.interpreter import Interpreter
from seri.runtime.agent.ports import (
    ModelPort,
    Nobody,
    NoTools,
    Person,
    SessionPort,
    SpendingPort,
    ToolPort,
)
from seri.runtime.provider.model_caller import ModelCaller
from seri.runtime.trajectories.run_events import RunEvents

if TYPE_CHECKING:
    from seri.runtime.extensions.hook_host import HookHost

T = TypeVar("T")

# The tools a chat offers its model: every built-in one, in the order of their definitions
# (then the tools of its MCP servers that are up).
PARENT_TOOLS: tuple[ToolSpec, ...] = SPECS


class Role(enum.Enum):
    """Whom an agent works for, which decides what it may do."""

    CHAT = "chat"
    COMPACTION = "compaction"
    SUBAGENT = "subagent"


@attrs.frozen
class AgentBrief:
    """What an agent is set up with, all values: the pure loop's ``TaskSetup`` is made
    from it (with what its role decides).

    ``offered`` are the tools the model may call (for a compaction: the chat's tools beyond
    the built-in ones, counted in the window, never offered), ``deferred``
    whether MCP tools among them go out by name and one line (``tool_search`` then among
    them). ``max_turns`` defaults by role: the subagent's own budget, one for a compaction
    (which takes no turn). ``budget`` is the answer budget as the run has it (None: as the
    settings ask)."""

    settings: Settings
    window: int
    system_prompt: str
    project: str
    offered: tuple[ToolSpec, ...] = ()
    deferred: bool = False
    policy: Policy | None = None
    glob_rules: tuple[GlobRule, ...] = ()
    interactive: bool = False
    max_turns: int | None = None
    budget: OutputBudget | None = None


@attrs.define(kw_only=True, eq=False)
class AgentPorts:
    """Where an agent's effects go: live objects, not values (no equality), each owned and
    closed by whoever made it, never by the agent.

    ``model`` is the run's model caller (a chat keeps one across tasks, for its wire cache
    and its usage; it is offered this agent's tools). ``spending`` is the run's usage so
    far: with it, a chat or a subagent keeps to the settings' ``max_budget_usd``."""

    model: ModelPort
    session: SessionPort
    events: RunEvents
    redactor: Redactor
    spill_dir: Path | None
    tools: ToolPort | None = None
    person: Person | None = None
    spending: SpendingPort | None = None
    # The session's hooks (None: none configured; the loop then never asks).
    hooks: HookHost | None = None


class Agent:
    """A task setup and the interpreter that carries its effects out through the ports."""

    def __init__(self, role: Role, setup: TaskSetup, interpreter: Interpreter) -> None:
        self.role = role
        self.setup = setup
        self.interpreter = interpreter

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


def build_agent(role: Role, brief: AgentBrief, ports: AgentPorts) -> Agent:
    """An agent for ``role``: a chat talks to its person and runs what it offers; a
    subagent asks no one; a compaction runs no tool but counts the chat's tool definitions
    in the window (they fill it when the session next runs)."""
    offered, tools, interactive = brief.offered, ports.tools, brief.interactive
    person = ports.person
    if role is Role.COMPACTION:
        # A compaction's ``offered`` are the chat's tools beyond the built-in ones (a
        # skills' activation tool): counted with them, as the chat counts them, never run.
        counted = (*PARENT_TOOLS, *offered)
        offered, tools, interactive = (), NoTools(), False
    else:
        counted = offered
    if role is not Role.CHAT:
        person, interactive = Nobody(), False
    settings, window = brief.settings, brief.window
    max_turns = brief.max_turns
    if max_turns is None:
        max_turns = settings.subagent_max_turns if role is Role.SUBAGENT else 1
    setup = TaskSetup(
        system_prompt=brief.system_prompt,
        max_turns=max_turns,
        context_window=window,
        keep_tokens=keep_budget(settings.keep_tokens, window),
        elide_bytes=settings.elide_bytes,
        policy=Policy() if brief.policy is None else brief.policy,
        interactive=interactive,
        tools=offered,
        glob_rules=brief.glob_rules,
        tool_chars=tool_definition_chars(counted, brief.deferred),
        project=brief.project,
        max_tokens=configured_max_tokens(settings),
        budget=OutputBudget.of(settings.sampling) if brief.budget is None else brief.budget,
        max_budget_usd=None if ports.spending is None else settings.max_budget_usd,
        auto_compact=settings.compaction_auto,
        hook_events=(
            frozenset()
            if ports.hooks is None
            else ports.hooks.configured(child=role is not Role.CHAT)
        ),
    )
    if role is not Role.COMPACTION and isinstance(ports.model, ModelCaller):
        # (A test may lend a fake ModelPort, which builds no request.)
        ports.model.offer(offered, brief.deferred)
    interpreter = Interpreter(
        model=ports.model,
        tools=NoTools() if tools is None else tools,
        session=ports.session,
        recorder=ports.events,
        person=Nobody() if person is None else person,
        redactor=ports.redactor,
        spill_dir=ports.spill_dir,
        spending=ports.spending,
        hooks=ports.hooks,
    )
    return Agent(role, setup, interpreter)
