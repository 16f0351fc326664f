"""The agent loop's compaction rules, driven as the interpreter drives them (pure effects)."""

from __future__ import annotations

import json
from typing import Any

from seri.pure.agent.effects import (
    ApplyCompaction,
    CallModel,
    ModelReply,
    Persist,
    Record,
    RunTool,
    Say,
    ShrinkPayloads,
    SpillText,
    ToolRun,
    UpdateCounters,
)
from seri.pure.agent.task_records import Conversation, TaskSetup
from seri.pure.agent.turn import run_task
from seri.pure.compaction.tokens import estimate_tokens, messages_chars
from seri.pure.permissions.permission_policy import parse_policy
from seri.pure.session.records import Message, ToolCall, Usage
from seri.pure.tools.tool_specs import select_specs
from tests.drive_effects import drive


class Loop:
    """Answers a task's effects: the model globs ``calls`` times, then answers."""

    def __init__(self, calls: int, billed: int) -> None:
        self.calls = calls
        self.billed = billed
        self.turns = 0
        self.compactions = 0
        self.grown_at: list[int] = []
        self.chars = 0
        self.said: list[str] = []

    def __call__(self, effect: Any) -> Any:
        if isinstance(effect, CallModel) and effect.purpose == "summary":
            return ModelReply(Message(role="assistant", text=json.dumps({"goal": "g"})))
        if isinstance(effect, CallModel):
            self.turns += 1
            usage = Usage(input_tokens=self.billed)
            if self.turns > self.calls:
                return ModelReply(Message(role="assistant", text="done"), usage)
            call = ToolCall(f"g{self.turns}", "glob", json.dumps({"pattern": "*.py"}))
            return ModelReply(Message(role="assistant", text="", tool_calls=(call,)), usage)
        if isinstance(effect, RunTool):
            return ToolRun("\n".join(f"src/module_{n}.py" for n in range(20)))
        if isinstance(effect, ApplyCompaction):
            self.compactions += 1
            self.grown_at.append(self.chars)
            return True
        if isinstance(effect, Persist):
            self.chars += messages_chars(effect.messages)
            return None
        if isinstance(effect, ShrinkPayloads):
            return True
        if isinstance(effect, SpillText):
            return ""
        if isinstance(effect, Say):
            self.said.append(effect.text)
            return None
        assert isinstance(effect, Record | UpdateCounters), effect
        return None


def test_a_compaction_follows_another_only_after_the_history_grew_by_the_keep_budget() -> None:
    """A frozen prompt of nearly half the window and bills that never fall under half: the
    50% trigger fires before every call, but a task compacts again only after its history
    grew by the keep budget since the last compaction (no thrashing)."""
    setup = TaskSetup(
        system_prompt="rules. " * 4_000,  # 28,000 characters: 7,000 of 16,000 tokens
        max_turns=200,
        context_window=16_000,
        keep_tokens=4_000,
        elide_bytes=4_096,
        policy=parse_policy({"allow": ["glob"]}),
        interactive=False,
        tools=select_specs(("glob",)),
        tool_chars=4_700,
    )
    history = tuple(
        Message(role="user" if n % 2 == 0 else "assistant", text=f"earlier {n} " * 40)
        for n in range(12)
    )
    conversation = Conversation(history, total_chars=sum(len(m.text) for m in history))
    loop = Loop(calls=120, billed=8_500)
    end = drive(run_task(setup, conversation, Message(role="user", text="go")), loop)
    assert end.status == "done"
    # The bills are about 1.03 times the local count: the keep budget, in local tokens.
    window = setup.window(1.03)
    keep_local = window.keep_local
    assert loop.compactions >= 2
    # Between two compactions the history grew by the keep budget, or (where the fixed part
    # leaves no room under half, and the check before sending compacts a request that would
    # not fit the whole window) by about what a request holds beyond what a compaction
    # leaves, less the new messages' framing: never call on call.
    headroom = window.request_room_local - window.history_target_local
    grown_by = min(keep_local, headroom * 3 // 4)
    for before, after in zip(loop.grown_at, loop.grown_at[1:], strict=False):
        assert estimate_tokens(after - before) >= grown_by
    # Without the rule there would be one compaction a call once four messages are evictable.
    assert loop.compactions <= 1 + loop.chars // 4 // grown_by
    # The fixed part leaves no room under half the window: said once, not before every call.
    notes = [text for text in loop.said if "cannot leave the session under half" in text]
    assert len(notes) == 1, loop.said
