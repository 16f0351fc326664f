"""The chat's slash commands, the same whether typed or piped: one registry, one help text.

Each command is one ``SlashCommand`` record: its name, the forms it is written in with what
each does (the help text is made from them, for ``/help`` and for ``seri chat --help``),
and the function that runs it (``seri.runtime.terminal.slash_handlers``). Adding a command is adding
a record here and its handler there.

A handler is given the terminal's seat (``ChatSession``): it acts on the session only
through the controller's interface (``chat.session``: ``compact``, ``pin``, ``rewind``,
``set_model`` ... each answering with a value) and says what happened on the terminal.

This module is light on purpose: the prompt reads the names for Tab completion before the
agent's machinery is loaded, so each command imports what it needs when it runs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import attrs

from seri.runtime.terminal.slash_handlers import (
    LineOutcome,
    on_clear,
    on_compact,
    on_cost,
    on_diff,
    on_goal,
    on_init,
    on_last,
    on_max_turns,
    on_mcp,
    on_memory,
    on_model,
    on_permissions,
    on_pin,
    on_rewind,
    on_skill,
    on_status,
    on_trajectory,
    say,
)

if TYPE_CHECKING:
    from seri.runtime.terminal.chat_session import ChatSession

Handler = Callable[["ChatSession", str], LineOutcome]

# The column where a form's description starts in the help text.
_DESCRIPTION_COLUMN = 25


@attrs.frozen
class SlashCommand:
    """One slash command: ``forms`` are (how it is written, what it does), for the help."""

    name: str
    forms: tuple[tuple[str, str], ...]
    run: Handler
    aliases: tuple[str, ...] = ()


def _help(chat: ChatSession, _: str) -> LineOutcome:
    say(HELP)
    return None


def _exit(chat: ChatSession, _: str) -> LineOutcome:
    return "exit"


COMMANDS: tuple[SlashCommand, ...] = (
    SlashCommand(
        "/compact",
        (("/compact [focus words]", "compact the conversation now; the words steer the recap"),),
        on_compact,
    ),
    SlashCommand(
        "/clear",
        (("/clear", "start a new session here (the old one stays, resumable)"),),
        on_clear,
    ),
    SlashCommand(
        "/rewind",
        (
            ("/rewind", "list this session's turns since the last compaction"),
            (
                "/rewind N [files|conversation|both] [--yes]",
                "restore to just before turn N (default\n"
                "both); --yes overwrites files changed outside seri without asking",
            ),
        ),
        on_rewind,
    ),
    SlashCommand(
        "/max-turns",
        (("/max-turns N", "change the turn budget for the rest of the session"),),
        on_max_turns,
    ),
    SlashCommand(
        "/trajectory",
        (("/trajectory [on|off]", "show or store the recording toggle (SERI_TRAJECTORY wins)"),),
        on_trajectory,
    ),
    SlashCommand(
        "/memory",
        (
            ("/memory pending", "list staged memory writes"),
            (
                "/memory approve N",
                "write entry N into its memory file (enters the prompt next start)",
            ),
            ("/memory reject N", "drop entry N"),
        ),
        on_memory,
    ),
    SlashCommand(
        "/pin",
        (("/pin [TEXT]", "pin a note every recap carries verbatim; alone, list the pins"),),
        on_pin,
    ),
    SlashCommand(
        "/status",
        (("/status", "model, how full the window is, turn budget, cost so far"),),
        on_status,
    ),
    SlashCommand(
        "/goal",
        (
            ("/goal CMD", "check each task that follows with CMD until it exits 0"),
            ("/goal [clear]", "show the goal; clear ends it"),
        ),
        on_goal,
    ),
    SlashCommand(
        "/cost", (("/cost", "tokens and cost of this run and of the whole session"),), on_cost
    ),
    SlashCommand(
        "/model",
        (("/model [NAME]", "show the model, or talk to NAME for the rest of this run"),),
        on_model,
    ),
    SlashCommand(
        "/permissions",
        (("/permissions", "the rules in force and where each comes from"),),
        on_permissions,
    ),
    SlashCommand(
        "/mcp", (("/mcp", "this chat's MCP servers: state and tools (see seri mcp)"),), on_mcp
    ),
    SlashCommand(
        "/last",
        (("/last [N|#K]", "a tool call's whole output: the last cut one, Nth from the end, #K"),),
        on_last,
    ),
    SlashCommand(
        "/init", (("/init", "write AGENTS.md for this project (the model looks first)"),), on_init
    ),
    SlashCommand("/diff", (("/diff [PATH]", "what this session changed in the files"),), on_diff),
    SlashCommand("/help", (("/help", "this list"),), _help),
    SlashCommand("/exit", (("/exit", "leave (Ctrl-D works too)"),), _exit, aliases=("/quit",)),
)

KEYS = """\
Keys: Enter sends; Alt-Enter (or Esc Enter, or a line ending in \\) starts a new line; a paste
stays one message; Up/Down and Ctrl-R search the history; Ctrl-C cancels the running
task (or clears the line); Ctrl-D on an empty line leaves."""


def command_lines(commands: tuple[SlashCommand, ...] = COMMANDS) -> str:
    """Every form of every command with what it does, one column of descriptions."""
    lines = []
    pad = " " * _DESCRIPTION_COLUMN
    for command in commands:
        for form, does in command.forms:
            text = does.replace("\n", "\n" + pad)
            if len(form) < _DESCRIPTION_COLUMN:
                lines.append(f"{form:<{_DESCRIPTION_COLUMN}}{text}")
            else:
                lines.append(f"{form}   {text}")
    return "\n".join(lines)


HELP = f"{command_lines()}\n\n{KEYS}"

# Every command's name, for Tab completion.
COMMAND_NAMES = tuple(command.name for command in COMMANDS)
_BY_NAME = {name: c for c in COMMANDS for name in (c.name, *c.aliases)}


def command_menu() -> tuple[tuple[str, str, str], ...]:
    """Each command as the prompt's menu shows it: its name, how it is written, what it does."""
    return tuple((name, *_BY_NAME[name].forms[0]) for name in COMMAND_NAMES)


def run_slash(chat: ChatSession, line: str) -> LineOutcome:
    name, _, rest = line.strip().partition(" ")
    command = _BY_NAME.get(name)
    if command is None and chat.skills.find(name[1:]) is not None:
        return on_skill(chat, name[1:], rest.strip())
    if command is None:
        # A typo is not a failed task: the session's exit status stays as it was.
        say(f"unknown command {name}; /help lists them")
        return None
    return command.run(chat, rest.strip())
