"""The hook events seri runs and where hooks are configured: names only, so that the agent
loop and a chat's start can ask "any hooks?" without loading the hooks' machinery
(``seri.pure.extensions.hooks``)."""

from __future__ import annotations

SESSION_START = "SessionStart"
USER_PROMPT_SUBMIT = "UserPromptSubmit"
PRE_TOOL_USE = "PreToolUse"
POST_TOOL_USE = "PostToolUse"
PRE_COMPACT = "PreCompact"
POST_COMPACT = "PostCompact"
STOP = "Stop"
# When a subagent (the task tool's child) starts, and Stop's counterpart when it ends
# (Claude Code's names).
SUBAGENT_START = "SubagentStart"
SUBAGENT_STOP = "SubagentStop"
SESSION_END = "SessionEnd"
EVENTS = (
    SESSION_START,
    USER_PROMPT_SUBMIT,
    PRE_TOOL_USE,
    POST_TOOL_USE,
    PRE_COMPACT,
    POST_COMPACT,
    STOP,
    SUBAGENT_START,
    SUBAGENT_STOP,
    SESSION_END,
)
# How many times in one task Stop hooks may send the model back to work.
STOP_LOOP_LIMIT = 3
# The type a subagent's hooks are told (``agent_type``, SubagentStop's matcher): seri has one
# kind of subagent, the general one Claude Code names so.
SUBAGENT_TYPE = "general-purpose"

PERSON_SOURCE = "config.json"
PROJECT_SOURCES = (".seri/hooks.json", ".claude/settings.json")
