"""The hook events seri runs and where hooks are configured: names only, so that the agent
loop and a chat's start can ask "any hooks?" without loading the hooks' machinery
(``seri.pure.hooks``)."""

from __future__ import annotations

SESSION_START = "SessionStart"
USER_PROMPT_SUBMIT = "UserPromptSubmit"
PRE_TOOL_USE = "PreToolUse"
POST_TOOL_USE = "PostToolUse"
PRE_COMPACT = "PreCompact"
POST_COMPACT = "PostCompact"
STOP = "Stop"
SESSION_END = "SessionEnd"
EVENTS = (
    SESSION_START,
    USER_PROMPT_SUBMIT,
    PRE_TOOL_USE,
    POST_TOOL_USE,
    PRE_COMPACT,
    POST_COMPACT,
    STOP,
    SESSION_END,
)
# How many times in one task Stop hooks may send the model back to work.
STOP_LOOP_LIMIT = 3

PERSON_SOURCE = "config.json"
PROJECT_SOURCES = (".seri/hooks.json", ".claude/settings.json")
