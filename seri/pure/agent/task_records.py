"""A task's records: what stays fixed for it (``TaskSetup``), the conversation it works on
(``Conversation``) and how it ended (``TaskEnd``, ``EndStatus``).

The agent loop (``seri.pure.agent.turn``) takes the first two and returns the third; the runtime
keeps them between tasks.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

import attrs

from seri.pure.agent.rules import GlobRule
from seri.pure.compaction.compaction_contract import LastCompaction
from seri.pure.compaction.tokens import message_chars
from seri.pure.compaction.window import Window
from seri.pure.permissions.permission_policy import Policy
from seri.pure.provider.output_budget import OutputBudget
from seri.pure.session.records import Message
from seri.pure.tools.tool_specs import ToolSpec

if TYPE_CHECKING:
    from seri.pure.compaction.recap import Recap

# "refused": the prompt alone is too big for the window; nothing was stored.
EndStatus = Literal[
    "done",
    "max_turns",
    "budget",
    "error",
    "interrupted",
    "overflow",
    "length",
    "refused",
    # A goal run's own ends (seri.pure.agent.goals), and the compaction contract's no-loop rule.
    "stalled",
    "max_checks",
    "wall",
    "context_exhausted",
]


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
    # The tools offered, as records (built-in ones and those of MCP servers that are up).
    tools: tuple[ToolSpec, ...]
    glob_rules: tuple[GlobRule, ...] = ()
    # Characters of the tool definitions every turn request carries (they fill the window too).
    tool_chars: int = 0
    # The session's project: recap paths are relative to it.
    project: str = ""
    # The configured answer budget (sampling max_tokens), kept free in every request.
    max_tokens: int | None = None
    # The answer budget requests go out with, as this run has it so far (see OutputBudget).
    budget: OutputBudget = attrs.field(factory=OutputBudget)
    # The run's cost budget in USD (--max-budget-usd; None: none): no call starts once the
    # run's reported cost has reached it (see seri.pure.agent.cost_budget).
    max_budget_usd: float | None = None
    # compaction.auto: false never compacts without being asked; an overflow fails the turn.
    auto_compact: bool = True
    # The hook events the session has hooks for (seri.pure.extensions.hook_points asks only those).
    hook_events: frozenset[str] = frozenset()

    @property
    def tool_names(self) -> tuple[str, ...]:
        return tuple(spec.name for spec in self.tools)

    def window(self, token_scale: float = 0.0, learned_window: int = 0) -> Window:
        """The window as this task starts, with the scale learned so far (0: none yet) and
        the window a provider stated when it is smaller than the configured one (0: none)."""
        tokens = self.context_window
        if 0 < learned_window < tokens:
            tokens = learned_window
        return Window.of(
            tokens,
            self.keep_tokens,
            overhead_chars=len(self.system_prompt) + self.tool_chars,
            max_tokens=self.max_tokens,
            scale=token_scale,
        )


@attrs.frozen
class Conversation:
    """A session's conversation as the loop sees it; ``total_chars`` is kept incrementally."""

    history: tuple[Message, ...]
    recap: Recap | None = None
    total_chars: int = 0
    last_input_tokens: int = 0
    fired_rules: frozenset[str] = frozenset()
    # Provider tokens per local token, as learned (0: never measured).
    token_scale: float = 0.0
    # Notes carried verbatim in every recap (/pin, seri pin).
    pins: tuple[str, ...] = ()
    # The window a provider's overflow answer stated, when smaller than the configured one.
    learned_window: int = 0
    # This run's last compaction, for the no-loop rule (seri.pure.compaction.compaction_contract).
    last_compaction: LastCompaction | None = None


@attrs.frozen
class TaskEnd:
    status: EndStatus
    answer: str
    conversation: Conversation
    turns: int
    detail: str = ""
    # Ended by the person's Ctrl-C, not by a cut stream: the exit status is then 130.
    by_user: bool = False
    # The answer budget as the run has it now (lowered for the rest of the run by a 402).
    budget: OutputBudget = attrs.field(factory=OutputBudget)


def conversation_of(
    history: Sequence[Message],
    recap: Recap | None,
    last_input_tokens: int,
    total_chars: int | None = None,
    fired_rules: frozenset[str] = frozenset(),
    *,
    token_scale: float = 0.0,
    pins: tuple[str, ...] = (),
    learned_window: int = 0,
) -> Conversation:
    chars = sum(message_chars(m) for m in history) if total_chars is None else total_chars
    return Conversation(
        tuple(history),
        recap,
        chars,
        last_input_tokens,
        fired_rules,
        token_scale,
        tuple(pins),
        learned_window,
    )
