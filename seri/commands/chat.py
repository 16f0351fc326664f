"""``seri chat``: its usage (below, with the slash commands from their registry) and run."""

from __future__ import annotations

import sys
import textwrap

from seri.pure.errors import SeriError
from seri.runtime.profile import current_project, open_profile
from seri.runtime.running import parse_usage, positive_number
from seri.runtime.slash import command_lines

_USAGE = """Work on a task with a model.

Usage:
  seri chat [--continue | --resume ID] [--fork] [--model M] [--max-turns N] [--allow RULE]...
            [-p PROMPT]
  seri chat (-h | --help)

Options:
  -p PROMPT, --prompt PROMPT  Run this one task to its end, print the final answer on stdout
                              and exit (0 done, 1 not finished). `-p -` reads the task from
                              the whole of stdin. Tools that need approval are denied unless
                              the policy (or --allow) allows them.
  --continue                  Open the most recent session of this project directory.
  --resume ID                 Open a given session (a unique prefix of its id is enough);
                              on a terminal, --resume alone offers the recent ones.
  --fork                      With --continue or --resume: go on in a copy of the session
                              (a new session with the same history, which records where
                              it came from), e.g. while another seri is still running it.
  --model M                   The model id (else SERI_MODEL, else config.json `model`).
  --max-turns N               Cap the model turns of each task (else config `max_turns`, 500).
  --allow RULE                Allow a tool for this run: `write_file`, `bash(git status*)`...
  -h --help                   Show this help.

A session is written by one seri at a time: a second --continue or --resume of a session
that a running seri (chat, compact or rewind) holds is refused with its pid (exit 1);
add --fork to go on in a copy. A seri that was killed holds nothing: its session is taken
over by the next one.

On a terminal, seri chat is interactive: type a task, watch it stream, approve what it
wants to do (y, n or a reason why not, a for always this session), press Ctrl-C to cancel
the task (not the program), Ctrl-D to leave. Enter sends; Alt-Enter (or a line ending in
a backslash) starts a new line; a paste stays one message. With stdin not a terminal and
no -p, each line is read as if typed, so a session can be scripted:
printf '/compact\\n' | seri chat --resume ID

An answer cut at the output limit (finish_reason length) is not finished: exit 1, its cut
tool calls dropped. When only the output budget is too big (or a 402 names what the credit
can pay for), max_tokens is lowered and the call retried once. A spent quota is not retried.
At the end of a run, the share of input read from the prompt cache is printed.

Slash commands:
@SLASH@

Colour is off with NO_COLOR or when the output is not a terminal. Text from the model,
tools and the store is shown with its escape sequences made inert.
"""


# The slash commands are listed from their registry, as /help lists them.
__doc__ = _USAGE.replace("@SLASH@", textwrap.indent(command_lines(), "  "))


def run(argv: list[str]) -> int:
    from seri.pure.resume_choice import resume_without_id

    missing_id = resume_without_id(argv)
    if missing_id is not None:
        from seri.runtime.resume_picker import with_chosen_session

        argv = with_chosen_session(argv, missing_id, open_profile())
    options = parse_usage(__doc__ or "", argv)
    from seri.runtime.chat_options import ChatOptions

    max_turns = options["--max-turns"]
    chat_options = ChatOptions(
        continue_last=bool(options["--continue"]),
        resume=options["--resume"] or "",
        model=options["--model"] or "",
        max_turns=positive_number(max_turns, "--max-turns") if max_turns else None,
        allow=tuple(options["--allow"]),
        prompt=options["--prompt"],
        fork=bool(options["--fork"]),
    )
    if chat_options.fork and not (chat_options.continue_last or chat_options.resume):
        raise SeriError("--fork copies a session: give it with --resume ID or --continue")
    profile = open_profile()
    if chat_options.prompt is None and sys.stdin.isatty():
        from seri.runtime.repl import interactive

        return interactive(profile, current_project(), chat_options)
    from seri.runtime.chat_lines import scripted
    from seri.runtime.chat_session import ChatSession

    chat = ChatSession.open(profile, current_project(), chat_options)
    try:
        if chat_options.prompt is not None:
            text = sys.stdin.read() if chat_options.prompt == "-" else chat_options.prompt
            if not text.strip():
                raise SeriError("the prompt is empty; give a task with -p TEXT or on stdin")
            return chat.one_shot(text)
        return scripted(chat)
    finally:
        chat.close()
