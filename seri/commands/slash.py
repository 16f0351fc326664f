"""Slash commands of the chat loop, the same whether typed or piped."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from seri.pure.errors import EXIT_USAGE
from seri.pure.terminal_text import neutralise

if TYPE_CHECKING:
    from seri.commands.chat_session import ChatSession, LineOutcome

HELP = """\
/compact [focus words]   compact the conversation now; the words steer the recap
/clear                   start a new session here (the old one stays, resumable)
/rewind                  list this session's turns since the last compaction
/rewind N [files|conversation|both] [--yes]   restore to just before turn N (default
                         both); --yes overwrites files changed outside seri without asking
/max-turns N             change the turn budget for the rest of the session
/trajectory [on|off]     show or store the recording toggle (SERI_TRAJECTORY wins)
/memory pending          list staged memory writes
/memory approve N        write entry N into its memory file (enters the prompt next start)
/memory reject N         drop entry N
/pin [TEXT]              pin a note every recap carries verbatim; alone, list the pins
/status                  model, how full the window is, turn budget, cost so far
/cost                    tokens and cost of this run and of the whole session
/model [NAME]            show the model, or talk to NAME for the rest of this run
/permissions             the rules in force and where each comes from
/last [N]                the whole output of the last tool call (or the Nth from the end)
/help                    this list
/exit                    leave (Ctrl-D works too)

Keys: Enter sends; Alt-Enter (or Esc Enter, or a line ending in \\) starts a new line; a paste
stays one message; Up/Down and Ctrl-R search the history; Ctrl-C cancels the running
task (or clears the line); Ctrl-D on an empty line leaves."""

# Every command's name, for Tab completion: the first word of each line of HELP above.
COMMAND_NAMES = tuple(
    dict.fromkeys(line.split()[0] for line in HELP.splitlines() if line.startswith("/"))
)


def _say(text: str) -> None:
    print(neutralise(text), file=sys.stderr)


def run_slash(chat: ChatSession, line: str) -> LineOutcome:
    name, _, rest = line.strip().partition(" ")
    rest = rest.strip()
    if name in ("/exit", "/quit"):
        return "exit"
    if name == "/help":
        _say(HELP)
        return None
    if name == "/compact":
        return _compact(chat, rest)
    if name == "/clear":
        old = chat.clear()
        if old:
            _say(f"Started a new session. The previous one is kept: seri chat --resume {old}")
            print(old)
        else:
            _say("Started a new session.")
        return None
    if name == "/max-turns":
        return _max_turns(chat, rest)
    if name == "/trajectory":
        from seri.commands.trajectory_toggle import toggle_trajectory

        _say(toggle_trajectory(chat.profile.root, rest or None, os.environ))
        if rest in ("on", "off") and not os.environ.get("SERI_TRAJECTORY"):
            chat.set_recording(rest == "on")
        return None
    if name == "/memory":
        from seri.commands.memory import memory_slash

        return memory_slash(chat, rest)
    if name == "/pin":
        from seri.commands.pin import pin_slash

        return pin_slash(chat, rest)
    if name == "/rewind":
        from seri.commands.rewind import rewind_slash

        return rewind_slash(chat, rest)
    if name in ORIENTATION_COMMANDS:
        return _orientation_command(chat, name, rest)
    # A typo is not a failed task: the session's exit status stays as it was.
    _say(f"unknown command {name}; /help lists them")
    return None


ORIENTATION_COMMANDS = frozenset({"/status", "/cost", "/model", "/permissions", "/last"})


def _orientation_command(chat: ChatSession, name: str, rest: str) -> LineOutcome:
    """/status, /cost, /model, /permissions, /last (seri.commands.chat_info)."""
    from seri.commands import chat_info

    if name == "/status":
        return chat_info.show_status(chat)
    if name == "/cost":
        return chat_info.show_cost(chat)
    if name == "/model":
        return chat_info.switch_model(chat, rest)
    if name == "/permissions":
        return chat_info.show_permissions(chat)
    return chat_info.show_last(chat, rest)


def _compact(chat: ChatSession, focus: str) -> LineOutcome:
    # Here, not at the top: the prompt reads COMMAND_NAMES before the agent is loaded.
    from seri.pure.compaction import NOT_ENOUGH_HISTORY

    why_not = chat.compact(focus)
    if why_not == NOT_ENOUGH_HISTORY:
        print(NOT_ENOUGH_HISTORY)
        return None
    if why_not:
        _say(f"compaction failed: {why_not}")
        return 1
    # The chat's view has said "compacted: 84k → 21k tokens (...)".
    return None


def _max_turns(chat: ChatSession, text: str) -> LineOutcome:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        _say(f"/max-turns needs a whole number of at least 1, not {text!r}")
        return EXIT_USAGE
    chat.set_max_turns(value)
    _say(f"Turn budget: {value} model turns per task for the rest of this session.")
    return None
