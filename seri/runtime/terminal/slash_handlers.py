"""What each of the chat's slash commands does, given the terminal's seat (``ChatSession``).

A handler acts on the session only through the controller's interface (``chat.session``:
``compact``, ``pin``, ``rewind``, ``set_model`` ... each answering with a value) and says what
happened on the terminal; it answers with a ``LineOutcome``. The registry that names them,
with their help text, is ``seri.runtime.terminal.slash``.

Light on purpose, like the registry that imports it: each handler imports what it needs when
it runs.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Literal

from seri.pure.inputs.errors import EXIT_UNFINISHED, EXIT_USAGE, SeriError
from seri.pure.terminal.terminal_text import neutralise, one_line

if TYPE_CHECKING:
    from seri.runtime.terminal.chat_session import ChatSession

# What a line did: "exit" ends the chat, a number is the exit status so far, None changes
# nothing (a typo is not a failed task).
LineOutcome = Literal["exit"] | int | None

REWIND_USAGE = "usage: /rewind [N [files|conversation|both] [--yes]]"
_YES_WORDS = ("--yes", "yes", "-y")


def say(text: str) -> None:
    print(neutralise(text), file=sys.stderr)


def on_compact(chat: ChatSession, focus: str) -> LineOutcome:
    from seri.pure.compaction.compaction_outcome import Why

    why_not = chat.session.compact(focus)
    if why_not is not None and why_not.reason is Why.NO_CUT:
        print(why_not.detail)
        return None
    if why_not is not None:
        say(f"compaction failed: {why_not.detail}")
        return 1
    # The chat's view has said "compacted: 84k → 21k tokens (...)".
    return None


def on_clear(chat: ChatSession, _: str) -> LineOutcome:
    old = chat.session.clear()
    if old:
        say(f"Started a new session. The previous one is kept: seri chat --resume {old}")
        if not chat.view.screen.out_tty:
            print(old)  # the id as data, for a script; on a terminal the line above has it
    else:
        say("Started a new session.")
    return None


def on_rewind(chat: ChatSession, rest: str) -> LineOutcome:
    """/rewind lists; /rewind N [files|conversation|both] [--yes] restores.

    Files changed outside seri since its checkpoint are overwritten only once confirmed:
    asked on a terminal, or with --yes on the line when the lines are scripted (no one
    can be asked then, just as tools that need approval are denied).
    """
    from seri.runtime.session.rewind import listing, message_number

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
    from seri.io.terminal.terminal import confirm

    return confirm(
        "changed outside seri since its checkpoint: " + ", ".join(changed) + ". Overwrite?"
    )


def on_max_turns(chat: ChatSession, text: str) -> LineOutcome:
    from seri.pure.inputs.number_ranges import TURNS, shown, whole_number_in, words

    value = whole_number_in(text, TURNS)
    if value is None:
        say(f"/max-turns needs a whole number {words(TURNS)}, not {shown(text)}")
        return EXIT_USAGE
    chat.session.set_max_turns(value)
    say(f"Turn budget: {value} model turns per task for the rest of this session.")
    return None


def on_trajectory(chat: ChatSession, rest: str) -> LineOutcome:
    from seri.runtime.trajectories.trajectory_toggle import toggle_trajectory

    say(toggle_trajectory(chat.profile.root, rest or None, os.environ))
    if rest in ("on", "off") and not os.environ.get("SERI_TRAJECTORY"):
        chat.session.set_recording(rest == "on")
    return None


def on_memory(chat: ChatSession, rest: str) -> LineOutcome:
    from seri.runtime.tools.memory_review import decide, entry_number, show_pending

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
            say(f"seri: {exc}")
            return EXIT_UNFINISHED
        return None
    print("usage: /memory pending | approve N | reject N", file=sys.stderr)
    return EXIT_USAGE


def on_goal(chat: ChatSession, rest: str) -> LineOutcome:
    from seri.runtime.agent.goal_session import goal_command

    def tell(line: str) -> None:
        text = neutralise(chat.session.redact(line))
        if chat.interactive:
            chat.view.screen.say(text)
        else:
            print(text, file=sys.stderr)

    return goal_command(chat.session, rest, tell)


def on_pin(chat: ChatSession, text: str) -> LineOutcome:
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


def on_status(chat: ChatSession, _: str) -> LineOutcome:
    from seri.runtime.terminal.chat_info import show_status

    return show_status(chat)


def on_cost(chat: ChatSession, _: str) -> LineOutcome:
    from seri.runtime.terminal.chat_info import show_cost

    return show_cost(chat)


def on_model(chat: ChatSession, rest: str) -> LineOutcome:
    from seri.runtime.terminal.chat_info import switch_model

    return switch_model(chat, rest)


def on_permissions(chat: ChatSession, _: str) -> LineOutcome:
    from seri.runtime.terminal.chat_info import show_permissions

    return show_permissions(chat)


def on_mcp(chat: ChatSession, _: str) -> LineOutcome:
    from seri.runtime.terminal.chat_info import show_mcp

    return show_mcp(chat)


INIT_TASK = """\
Write AGENTS.md at the root of this project: what a coding agent needs to know to work here.
Look first (README, build and package files such as pyproject.toml, package.json, Makefile,
Cargo.toml, go.mod, the CI configuration, the layout of the source and the tests), then
write, briefly and only from what the files say: what the project is; the exact commands
to install, build, test and lint; where things are; the conventions you can see (style,
naming, tests, commit messages). Under 60 lines.{existing}"""


def on_init(chat: ChatSession, rest: str) -> LineOutcome:
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
        say("AGENTS.md is read when a session starts: /clear (or the next seri) uses it")
    return status


def on_diff(chat: ChatSession, rest: str) -> LineOutcome:
    from seri.runtime.terminal.chat_info import show_diff

    return show_diff(chat, rest)


def on_last(chat: ChatSession, rest: str) -> LineOutcome:
    from seri.runtime.terminal.chat_info import show_last

    return show_last(chat, rest)


def on_skill(chat: ChatSession, name: str, rest: str) -> LineOutcome:
    """``/skill-name args``: the skill's content and the person's words, as one message (a
    custom slash command is a skill: one mechanism, not two)."""
    from seri.pure.extensions.skills import activation_text

    skill = chat.skills.find(name)
    assert skill is not None
    end = chat.run_task(activation_text(skill, rest), kind="skill")
    return chat.report(end, print_answer=not chat.interactive)
