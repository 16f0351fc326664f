"""``seri chat``: its usage (below, with the slash commands from their registry) and run."""

from __future__ import annotations

import gc
import os
import sys
import textwrap
from typing import TYPE_CHECKING, Any

from seri.pure.inputs.errors import SeriError
from seri.pure.inputs.number_ranges import TURNS
from seri.runtime.agent.running import parse_usage, positive_number
from seri.runtime.session.profile import current_project, open_profile
from seri.runtime.terminal.chat_options import OUTPUT_FORMATS
from seri.runtime.terminal.slash import command_lines

if TYPE_CHECKING:
    from seri.runtime.agent.ports import EventObserver
    from seri.runtime.session.controller import SessionController
    from seri.runtime.terminal.chat_options import ChatOptions

_USAGE = """Work on a task with a model.

Usage:
  seri chat [--continue | --resume ID] [--fork] [--model M] [--max-turns N] [--allow RULE]...
            [--max-budget-usd X] [--tag KEY=VALUE]... [-p PROMPT [--output-format FORMAT]]
            [--until CMD [--max-checks N] [--max-wall TIME]]
  seri chat (-h | --help)

`seri` alone is `seri chat`; so is `seri` followed by chat's options (`seri -p TEXT`).

Options:
  -p PROMPT, --prompt PROMPT  Run this one task to its end, print the final answer on stdout
                              and exit (0 done, 1 not finished). `-p -` reads the task from
                              the whole of stdin. Tools that need approval are denied unless
                              the policy (or --allow) allows them.
  --output-format FORMAT      With -p: `text` (the answer), `json` (one result record) or
                              `stream-json` (the run's events as JSON Lines while it works,
                              then the result record) [default: text].
  --max-budget-usd X          Start no model call once the run's reported cost has reached
                              X USD (else config `max_budget_usd`): status budget, exit 1.
  --until CMD                 A goal: after each task run CMD (as bash runs it: sandbox,
                              rules, environment) and go on, its failing output as the
                              next task, until it exits 0 (exit 0). Kept with the session
                              and in every recap; --continue goes on toward it. Other ends:
                              stalled (same failure, no file changed, 3 times; exit 3),
                              max_checks (exit 4), wall (exit 5), max_turns and budget
                              (exit 1). --max-turns then caps the whole run.
  --max-checks N              With --until: stop after N failing checks.
  --max-wall TIME             With --until: stop after TIME (90, 90s, 30m, 2h), a task
                              under way included.
  --continue                  Open the most recent session of this project directory.
  --resume ID                 Open a given session (a unique prefix of its id is enough);
                              on a terminal, --resume alone offers the recent ones.
  --fork                      With --continue or --resume: go on in a copy of the session
                              (a new session with the same history, which records where
                              it came from), e.g. while another seri is still running it.
  --model M                   The model id (else SERI_MODEL, else config.json `model`).
  --max-turns N               Cap the model turns of each task (else config `max_turns`, 500).
  --allow RULE                Allow a tool for this run: `write_file`, `bash(git status*)`...
  --tag KEY=VALUE             Label this run (repeatable), over SERI_RUN_TAGS=K=V,K=V: kept
                              with the session, its recording and every exported span
                              (attribute seri.tag.KEY), so a fleet's runs can be grouped.
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

With --output-format json or stream-json, stdout holds JSON only and its last line is
always the result record, whatever ended the run (Ctrl-C and SIGTERM too): type "result",
session, run, status (done, max_turns, budget, length, overflow, error, interrupted,
stalled, max_checks, wall, context_exhausted), exit_status (the status seri exits with: 0,
1, 2, 3 stalled, 4 max_checks, 5 wall, 6 context_exhausted, 130 for Ctrl-C, 143 for
SIGTERM), turns, usage, cost, cached_share (every call of the run, subagents' and the
summarizer's included), duration_ms, answer, error, goal (text, command, status, last_end,
checks; null without one), compactions (this run's: count, summarizer tokens and cost,
tokens written to the cache again; null when none ran). The events are those of `seri
trajectory export` (README: Trajectory export schema).

A cost budget needs a provider that reports what each call cost (OpenRouter does): seri
cannot know that before the first call answers, so a budget with a provider that reports
none ends the run after its first call, with status error (exit 1), instead of running
on unbounded.

An answer cut at the output limit (finish_reason length) is not finished: exit 1, its cut
tool calls dropped. When only the output budget is too big (or a 402 names what the credit
can pay for), max_tokens is lowered and the call retried once. A spent quota is not retried.
At the end of a run, the share of input read from the prompt cache is printed.
With OTEL_EXPORTER_OTLP_ENDPOINT (or config.json telemetry.otlp) set, the run is sent live
as OpenTelemetry traces and metrics; a collector that is down costs one warning line.
A prompt too big for the model's window is refused before it is stored (exit 2): put
it in a file.

Slash commands:
@SLASH@

Colour is off with NO_COLOR or when the output is not a terminal. Text from the model,
tools and the store is shown with its escape sequences made inert.
"""


# The slash commands are listed from their registry, as /help lists them.
__doc__ = _USAGE.replace("@SLASH@", textwrap.indent(command_lines(), "  "))


def run(argv: list[str]) -> int:
    from seri.pure.session.resume_choice import resume_without_id

    missing_id = resume_without_id(argv)
    if missing_id is not None:
        from seri.runtime.terminal.resume_picker import with_chosen_session

        argv = with_chosen_session(argv, missing_id, open_profile())
    options = parse_usage(__doc__ or "", argv)
    if options["--prompt"] is not None:
        from seri.io.provider.http_client import load_in_background

        _opening_without_collector()
        load_in_background()  # httpx (~55 ms of imports) loads while the session opens
    output_format = options["--output-format"] or "text"
    if output_format not in OUTPUT_FORMATS:
        raise SeriError(f"--output-format must be text, json or stream-json, not {output_format!r}")
    if output_format != "text" and options["--prompt"] is None:
        raise SeriError(f"--output-format {output_format} is for a -p run: add -p PROMPT")
    if output_format != "text":
        from seri.runtime.agent.headless import run_headless

        return run_headless(
            output_format,
            lambda observers: _open_session(options, observers),
            lambda: _prompt_text(options["--prompt"]),
        )
    chat_options = _chat_options(options)
    profile = open_profile()
    if chat_options.prompt is None and sys.stdin.isatty():
        from seri.runtime.terminal.repl import interactive

        gc.disable()  # until the prompt is drawn (seri.runtime.terminal.repl turns it back on)
        return interactive(profile, current_project(), chat_options)
    from seri.runtime.terminal.chat_lines import scripted
    from seri.runtime.terminal.chat_session import ChatSession

    chat = ChatSession.open(profile, current_project(), chat_options)
    _opened()
    try:
        if chat_options.prompt is not None:
            text = _prompt_text(chat_options.prompt)
            if not text.strip():
                raise SeriError("the prompt is empty; give a task with -p TEXT or on stdin")
            from seri.runtime.agent.goal_session import chat_task

            return chat.report(chat_task(chat, text), print_answer=True)
        return scripted(chat)
    finally:
        chat.close()


def _chat_options(options: dict[str, Any]) -> ChatOptions:
    from seri.pure.inputs.settings import budget_usd
    from seri.runtime.terminal.chat_options import ChatOptions, tags_asked

    max_turns = options["--max-turns"]
    budget = options["--max-budget-usd"]
    chat_options = ChatOptions(
        continue_last=bool(options["--continue"]),
        resume=options["--resume"] or "",
        model=options["--model"] or "",
        max_turns=positive_number(max_turns, "--max-turns", TURNS) if max_turns else None,
        allow=tuple(options["--allow"]),
        prompt=options["--prompt"],
        fork=bool(options["--fork"]),
        output_format=options["--output-format"] or "text",
        max_budget_usd=None if budget is None else budget_usd(budget, "--max-budget-usd"),
        tags=tags_asked(os.environ, options["--tag"]),
        **_goal_options(options),
    )
    if chat_options.fork and not (chat_options.continue_last or chat_options.resume):
        raise SeriError("--fork copies a session: give it with --resume ID or --continue")
    return chat_options


def _goal_options(options: dict[str, Any]) -> dict[str, Any]:
    """--until and its limits (each limit only with --until)."""
    until, checks, wall = options["--until"], options["--max-checks"], options["--max-wall"]
    if until is None:
        if checks is not None or wall is not None:
            raise SeriError("--max-checks and --max-wall limit a goal: add --until CMD")
        return {}
    if not until.strip():
        raise SeriError("--until needs a check command, e.g. --until 'python -m pytest -q'")
    found: dict[str, Any] = {"until": until}
    if checks is not None:
        found["max_checks"] = positive_number(checks, "--max-checks", TURNS)
    if wall is not None:
        from seri.pure.agent.goals import wall_seconds

        seconds = wall_seconds(wall)
        if seconds is None:
            raise SeriError(
                f"--max-wall must be a time above zero and at most a week (90, 90s, 30m, 2h), "
                f"not {wall!r}"
            )
        found["max_wall"] = seconds
    return found


def _open_session(
    options: dict[str, Any], observers: tuple[EventObserver, ...]
) -> SessionController:
    """The session of a -p run whose output is JSON (see seri.runtime.agent.headless): opened as
    the chat opens it (its notes said on stderr), driven by the headless run."""
    from seri.runtime.terminal.chat_session import ChatSession

    chat_options = _chat_options(options)
    profile = open_profile()
    opened = ChatSession.open(profile, current_project(), chat_options, observers=observers)
    _opened()
    return opened.session


def _opening_without_collector() -> None:
    """A -p run opens its session with Python's cycle collector off: the imports and the
    opening make tens of thousands of objects that live as long as the process (modules,
    classes, attrs' generated methods), and collecting among them found almost nothing while
    it cost ~10% of the CPU before the request's first byte (70-odd collections)."""
    gc.disable()


def _opened() -> None:
    """The session is open: what start-up made is set aside for good (``gc.freeze``: later
    collections do not walk it again) and the collector runs as usual from here on."""
    gc.freeze()
    gc.enable()


def _prompt_text(prompt: str) -> str:
    """-p's task: its text, or the whole of stdin for `-p -`."""
    return sys.stdin.read() if prompt == "-" else prompt
