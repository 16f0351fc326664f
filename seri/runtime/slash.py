"""The chat's slash commands, the same whether typed or piped: one registry, one help text.

Each command is one ``SlashCommand`` record: its name, the forms it is written in with what
each does (the help text is made from them, for ``/help`` and for ``seri chat --help``),
and the function that runs it. Adding a command is adding a record here.

A handler is given the terminal's seat (``ChatSession``): it acts on the session only
through the controller's interface (``chat.session``: ``compact``, ``pin``, ``rewind``,
``set_model`` ... each answering with a value) and says what happened on the terminal.

This module is light on purpose: the prompt reads the names for Tab completion before the
agent's machinery is loaded, so each command imports what it needs when it runs.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Literal

import attrs

from seri.pure.errors import EXIT_UNFINISHED, EXIT_USAGE, SeriError
from seri.pure.terminal_text import neutralise, one_line

if TYPE_CHECKING:
    from seri.runtime.chat_session import ChatSession

# What a line did: "exit" ends the chat, a number is the exit status so far, None changes
# nothing (a typo is not a failed task).
LineOutcome = Literal["exit"] | int | None
Handler = Callable[["ChatSession", str], LineOutcome]

REWIND_USAGE = "usage: /rewind [N [files|conversation|both] [--yes]]"
_YES_WORDS = ("--yes", "yes", "-y")
# The column where a form's description starts in the help text.
_DESCRIPTION_COLUMN = 25


@attrs.frozen
class SlashCommand:
    """One slash command: ``forms`` are (how it is written, what it does), for the help."""

    name: str
    forms: tuple[tuple[str, str], ...]
    run: Handler
    aliases: tuple[str, ...] = ()


def _say(text: str) -> None:
    print(neutralise(text), file=sys.stderr)


# -- the commands ------------------------------------------------------------------------------


def _compact(chat: ChatSession, focus: str) -> LineOutcome:
    from seri.pure.compaction_outcome import Why

    why_not = chat.session.compact(focus)
    if why_not is not None and why_not.reason is Why.NO_CUT:
        print(why_not.detail)
        return None
    if why_not is not None:
        _say(f"compaction failed: {why_not.detail}")
        return 1
    # The chat's view has said "compacted: 84k → 21k tokens (...)".
    return None


def _clear(chat: ChatSession, _: str) -> LineOutcome:
    old = chat.session.clear()
    if old:
        _say(f"Started a new session. The previous one is kept: seri chat --resume {old}")
        if not chat.view.screen.out_tty:
            print(old)  # the id as data, for a script; on a terminal the line above has it
    else:
        _say("Started a new session.")
    return None


def _rewind(chat: ChatSession, rest: str) -> LineOutcome:
    """/rewind lists; /rewind N [files|conversation|both] [--yes] restores.

    Files changed outside seri since its checkpoint are overwritten only once confirmed:
    asked on a terminal, or with --yes on the line when the lines are scripted (no one
    can be asked then, just as tools that need approval are denied).
    """
    from seri.runtime.rewind import listing, message_number

    session = chat.session
    if not session.session_id:
        print("Nothing to rewind yet.", file=sys.stderr)
        return None
    words = rest.split()
    if not words:
        listed, gone = session.rewind_points()
        print(neutralise(listing(list(listed), history_gone=gone)), file=sys.stderr)
        return None
    yes = any(word in _YES_WORDS for word in words[1:])
    modes = [word for word in words[1:] if word not in _YES_WORDS]
    mode = modes[0] if modes else "both"
    if len(modes) > 1 or mode not in ("files", "conversation", "both"):
        print(REWIND_USAGE, file=sys.stderr)
        return EXIT_USAGE
    try:
        n = message_number(words[0])
        ask = _ask_to_overwrite if chat.interactive else None
        lines = session.rewind(n, mode, yes=yes, confirm=ask)
    except SeriError as exc:
        print(neutralise(f"seri: {exc}"), file=sys.stderr)
        return EXIT_UNFINISHED
    if lines is None:
        # The person chose: nothing failed, nothing changed.
        print("Not overwritten. Nothing was changed.", file=sys.stderr)
        return None
    for line in lines:
        print(neutralise(line), file=sys.stderr)
    return None


def _ask_to_overwrite(changed: tuple[str, ...]) -> bool:
    from seri.io.terminal import confirm

    return confirm(
        "changed outside seri since its checkpoint: " + ", ".join(changed) + ". Overwrite?"
    )


def _max_turns(chat: ChatSession, text: str) -> LineOutcome:
    from seri.pure.number_ranges import TURNS, shown, whole_number_in, words

    value = whole_number_in(text, TURNS)
    if value is None:
        _say(f"/max-turns needs a whole number {words(TURNS)}, not {shown(text)}")
        return EXIT_USAGE
    chat.session.set_max_turns(value)
    _say(f"Turn budget: {value} model turns per task for the rest of this session.")
    return None


def _trajectory(chat: ChatSession, rest: str) -> LineOutcome:
    from seri.runtime.trajectory_toggle import toggle_trajectory

    _say(toggle_trajectory(chat.profile.root, rest or None, os.environ))
    if rest in ("on", "off") and not os.environ.get("SERI_TRAJECTORY"):
        chat.session.set_recording(rest == "on")
    return None


def _memory(chat: ChatSession, rest: str) -> LineOutcome:
    from seri.runtime.memory_review import decide, entry_number, show_pending

    words = rest.split()
    if not words or words[0] in ("pending", "list"):
        show_pending(chat.profile.store, as_json=False)
        return None
    if words[0] in ("approve", "reject") and len(words) == 2:
        try:
            n = entry_number(words[1])
            print(
                decide(chat.profile.store, chat.profile.root, n, approve=words[0] == "approve"),
                file=sys.stderr,
            )
        except SeriError as exc:
            _say(f"seri: {exc}")
            return EXIT_UNFINISHED
        return None
    print("usage: /memory pending | approve N | reject N", file=sys.stderr)
    return EXIT_USAGE


def _goal(chat: ChatSession, rest: str) -> LineOutcome:
    from seri.runtime.goal_session import goal_command

    def say(line: str) -> None:
        text = neutralise(chat.session.redact(line))
        if chat.interactive:
            chat.view.screen.say(text)
        else:
            print(text, file=sys.stderr)

    return goal_command(chat.session, rest, say)


def _pin(chat: ChatSession, text: str) -> LineOutcome:
    if not text:
        pins = chat.session.pins()
        for n, pin in enumerate(pins, 1):
            print(f"{n}. {one_line(pin)}", file=sys.stderr)
        if not pins:
            print("No pins yet: /pin TEXT adds one.", file=sys.stderr)
        return None
    n = chat.session.pin(text)
    print(f"Pinned as note {n}: every recap carries it.", file=sys.stderr)
    return None


def _status(chat: ChatSession, _: str) -> LineOutcome:
    from seri.runtime.chat_info import show_status

    return show_status(chat)


def _cost(chat: ChatSession, _: str) -> LineOutcome:
    from seri.runtime.chat_info import show_cost

    return show_cost(chat)


def _model(chat: ChatSession, rest: str) -> LineOutcome:
    from seri.runtime.chat_info import switch_model

    return switch_model(chat, rest)


def _permissions(chat: ChatSession, _: str) -> LineOutcome:
    from seri.runtime.chat_info import show_permissions

    return show_permissions(chat)


def _mcp(chat: ChatSession, _: str) -> LineOutcome:
    from seri.runtime.chat_info import show_mcp

    return show_mcp(chat)


INIT_TASK = """\
Write AGENTS.md at the root of this project: what a coding agent needs to know to work here.
Look first (README, build and package files such as pyproject.toml, package.json, Makefile,
Cargo.toml, go.mod, the CI configuration, the layout of the source and the tests), then
write, briefly and only from what the files say: what the project is; the exact commands
to install, build, test and lint; where things are; the conventions you can see (style,
naming, tests, commit messages). Under 60 lines.{existing}"""


def _init(chat: ChatSession, rest: str) -> LineOutcome:
    import os

    existing = os.path.exists(os.path.join(chat.project, "AGENTS.md"))
    task = INIT_TASK.format(
        existing=" AGENTS.md exists already: read it, keep what is still right, improve the rest."
        if existing
        else ""
    )
    if rest.strip():
        task += f"\nAlso: {rest.strip()}"
    end = chat.run_task(task)
    status = chat.report(end, print_answer=not chat.interactive)
    if end.status == "done":
        _say("AGENTS.md is read when a session starts: /clear (or the next seri) uses it")
    return status


def _diff(chat: ChatSession, rest: str) -> LineOutcome:
    from seri.runtime.chat_info import show_diff

    return show_diff(chat, rest)


def _last(chat: ChatSession, rest: str) -> LineOutcome:
    from seri.runtime.chat_info import show_last

    return show_last(chat, rest)


def _skill(chat: ChatSession, name: str, rest: str) -> LineOutcome:
    """``/skill-name args``: the skill's content and the person's words, as one message (a
    custom slash command is a skill: one mechanism, not two)."""
    from seri.pure.skills import activation_text

    skill = chat.skills.find(name)
    assert skill is not None
    end = chat.run_task(activation_text(skill, rest), kind="skill")
    return chat.report(end, print_answer=not chat.interactive)


def _help(chat: ChatSession, _: str) -> LineOutcome:
    _say(HELP)
    return None


def _exit(chat: ChatSession, _: str) -> LineOutcome:
    return "exit"


COMMANDS: tuple[SlashCommand, ...] = (
    SlashCommand(
        "/compact",
        (("/compact [focus words]", "compact the conversation now; the words steer the recap"),),
        _compact,
    ),
    SlashCommand(
        "/clear",
        (("/clear", "start a new session here (the old one stays, resumable)"),),
        _clear,
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
        _rewind,
    ),
    SlashCommand(
        "/max-turns",
        (("/max-turns N", "change the turn budget for the rest of the session"),),
        _max_turns,
    ),
    SlashCommand(
        "/trajectory",
        (("/trajectory [on|off]", "show or store the recording toggle (SERI_TRAJECTORY wins)"),),
        _trajectory,
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
        _memory,
    ),
    SlashCommand(
        "/pin",
        (("/pin [TEXT]", "pin a note every recap carries verbatim; alone, list the pins"),),
        _pin,
    ),
    SlashCommand(
        "/status",
        (("/status", "model, how full the window is, turn budget, cost so far"),),
        _status,
    ),
    SlashCommand(
        "/goal",
        (
            ("/goal CMD", "check each task that follows with CMD until it exits 0"),
            ("/goal [clear]", "show the goal; clear ends it"),
        ),
        _goal,
    ),
    SlashCommand(
        "/cost", (("/cost", "tokens and cost of this run and of the whole session"),), _cost
    ),
    SlashCommand(
        "/model",
        (("/model [NAME]", "show the model, or talk to NAME for the rest of this run"),),
        _model,
    ),
    SlashCommand(
        "/permissions",
        (("/permissions", "the rules in force and where each comes from"),),
        _permissions,
    ),
    SlashCommand(
        "/mcp", (("/mcp", "this chat's MCP servers: state and tools (see seri mcp)"),), _mcp
    ),
    SlashCommand(
        "/last",
        (("/last [N|#K]", "a tool call's whole output: the last cut one, Nth from the end, #K"),),
        _last,
    ),
    SlashCommand(
        "/init", (("/init", "write AGENTS.md for this project (the model looks first)"),), _init
    ),
    SlashCommand("/diff", (("/diff [PATH]", "what this session changed in the files"),), _diff),
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
        return _skill(chat, name[1:], rest.strip())
    if command is None:
        # A typo is not a failed task: the session's exit status stays as it was.
        _say(f"unknown command {name}; /help lists them")
        return None
    return command.run(chat, rest.strip())
