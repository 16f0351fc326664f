"""The `task` tool: a child agent with its own context and its own turn budget.

The child does not inherit the parent's budget: it gets ``subagent_max_turns``
(25 by default), because several children on the parent's cap would multiply
tokens without a ceiling. It sees read-only tools unless the parent's policy
allows more, never the `task` tool itself (one level deep), is never asked
anything (what needs approval is denied), and records into the parent's run,
so its token usage counts toward the parent's. The parent's MCP servers serve it
too: the tools of theirs the same policy allows without asking.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import attrs

from seri.io.session import session_table
from seri.io.session.ids import random_id
from seri.io.session.session_log import SessionLog
from seri.pure.agent.effects import ToolRun
from seri.pure.agent.prompt import assemble_prompt
from seri.pure.agent.task_records import Conversation
from seri.pure.inputs.errors import SeriError
from seri.pure.tools.tool_definitions import should_defer
from seri.pure.tools.tool_specs import READ_ONLY, SPECS, TOOL_SEARCH, ToolSpec
from seri.pure.trajectories.tool_events import SubagentEnd, SubagentStart
from seri.runtime.agent.agent import AgentBrief, AgentPorts, Role, build_agent
from seri.runtime.provider.model_caller import ModelCaller

if TYPE_CHECKING:
    from seri.runtime.tools.tool_host import ToolHost

CHILD_PREAMBLE = (
    "You are a subagent: another agent handed you the self-contained job below. Work on it "
    "with your tools and end with a complete answer; that answer is all the other agent sees."
)


def run_subagent(host: ToolHost, description: str, prompt: str) -> ToolRun:
    """The ``task`` tool: a child agent in its own session; its answer is the call's result."""
    settings = host.settings
    child_id = random_id()
    frozen = host.startup.prompt if host.startup else assemble_prompt(str(host.project), ())
    glob_rules = host.startup.glob_rules if host.startup else ()
    system_prompt = f"{frozen.text}\n{CHILD_PREAMBLE}\n"
    store = host.profile.store
    session_table.create_session(
        store,
        session_id=child_id,
        project=str(host.project),
        now=time.time(),
        model=settings.model,
        system_prompt=system_prompt,
        prompt_hashes=dict(frozen.hashes),
        parent_id=host.session_id,
    )
    host.events.record(SubagentStart(child=child_id, description=description))
    child_host = for_child(host, child_id)
    offered, deferred = child_tools(child_host)
    brief = AgentBrief(
        settings=settings,
        window=host.context_window,
        system_prompt=system_prompt,
        project=str(host.project),
        offered=offered,
        deferred=deferred,
        policy=host.policy,
        glob_rules=glob_rules,
    )
    # The child's own caller (its requests offer the child's tools), closed with the child.
    caller = ModelCaller(settings, host.api_key, host.events, offered, deferred=deferred)
    child_hooks = None if host.hooks is None else host.hooks.for_child(child_id)
    if child_hooks is not None:
        child_hooks.subagent_start()
    ports = AgentPorts(
        model=caller,
        session=SessionLog(store, child_id, 0, pending=host.events.flush_into),
        events=host.events,
        redactor=host.redactor,
        spill_dir=host.context.spill_dir,
        tools=child_host,
        spending=host.spending,
        hooks=child_hooks,
    )
    try:
        end = build_agent(Role.SUBAGENT, brief, ports).run_task(Conversation(()), prompt)
    except SeriError as exc:
        # The parent's turn goes on: the child's failure is this tool call's result.
        host.events.record(SubagentEnd(child=child_id, status="error"))
        return ToolRun(f"[subagent {child_id}] failed: {exc}", is_error=True)
    finally:
        caller.close()
    host.events.record(SubagentEnd(child=child_id, status=end.status, turns=end.turns))
    if end.status == "refused":
        # Its task was too big for the window and nothing was stored: no empty child.
        session_table.discard_empty_session(store, child_id)
    if end.status == "done":
        return ToolRun(f"[subagent {child_id}] {end.answer}")
    last = next(
        (m.text for m in reversed(end.conversation.history) if m.role == "assistant" and m.text),
        "",
    )
    note = {
        "max_turns": (
            f"the subagent used all {settings.subagent_max_turns} of its turns before finishing"
        ),
        "interrupted": (
            "the subagent was interrupted"
            if end.by_user
            else f"the subagent's answer was cut off ({end.detail})"
        ),
    }.get(end.status, f"the subagent stopped: {end.detail}")
    text = f"[subagent {child_id}] Not finished: {note}."
    if last:
        text += f" What it had so far:\n{last}"
    return ToolRun(text, is_error=end.status != "max_turns", interrupted=end.by_user)


def for_child(host: ToolHost, child_id: str) -> ToolHost:
    """The host a subagent's calls run in: the same project, policy, MCP servers and
    recording, its own session, one level deeper (it starts no subagent); file checkpoints
    stay with the parent's turn."""
    from seri.runtime.tools.tool_host import ToolHost

    scope = attrs.evolve(
        host.scope,
        session_id=child_id,
        depth=host.depth + 1,
        checkpoint_session=host.checkpoint_session,
    )
    return ToolHost(scope, host.policy, attrs.evolve(host.services, start_subagent=None))


def child_tools(host: ToolHost) -> tuple[tuple[ToolSpec, ...], bool]:
    """Read-only tools, plus the writing and running ones the parent's policy allows;
    never `task` or `remember` (seri's own tools). And the tools of the parent's MCP
    servers that the same policy allows without asking (those marked read-only, and
    those an allow rule names), out by name only (with tool_search) past the same
    threshold as the parent's; and whether they are.

    A tool allowed only for some paths or commands (``write_file(src/**)``) is offered
    too: the child runs under the same policy with no one to ask, so every call outside
    what the rules allow is denied.
    """
    reading = tuple(spec for spec in SPECS if spec.name in READ_ONLY)
    allowed = tuple(
        spec
        for spec in SPECS
        if spec.access in ("write", "exec")
        and any(rule.tool in (spec.name, "*") for rule in host.policy.allow)
    )
    served = _child_mcp_tools(host)
    deferred = should_defer(served, host.settings.mcp_tool_search_threshold)
    return (*reading, *allowed, *served, *((TOOL_SEARCH,) if deferred else ())), deferred


def _child_mcp_tools(host: ToolHost) -> tuple[ToolSpec, ...]:
    """The MCP tools up now that the policy allows unasked: a child has no one to ask,
    so a tool that needs an answer would only be denied."""
    if host.mcp is None:
        return ()
    from seri.pure.permissions.permissions import decide

    return tuple(
        spec
        for spec in host.mcp.specs()
        if decide(host.policy, spec.name, {}, spec=spec).action == "allow"
    )
