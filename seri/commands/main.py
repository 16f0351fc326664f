"""seri: a terminal coding agent whose sessions live in SQLite.

Usage:
  seri <command> [<args>...]
  seri (-h | --help)
  seri --version

Commands:
  chat        work on a task with a model: interactive, scripted stdin, or -p PROMPT
  sessions    list, show, search, export, rename, delete sessions; import older files
  compact     compact a stored session from the shell
  handoff     start a new session from another's recap and pins
  pin         pin notes to a session: carried verbatim in every recap
  rewind      list a session's turns, or restore its conversation and files
  trajectory  export run recordings (JSON Lines, OTLP, ATIF), toggle recording, prune
  memory      list, approve or reject staged memory writes
  mcp         list MCP servers and their tools; approve a project's servers
  skills      list, validate and approve Agent Skills (SKILL.md)
  hooks       list hooks (Claude Code's format) and approve a project's
  completion  print a completion script for bash, zsh or fish
  acp         serve seri to an editor over the Agent Client Protocol (stdio)

Run `seri COMMAND --help` for a command's options. `seri` alone starts `seri chat`, and so
do chat's own options without a command: `seri -p TEXT`, `seri --continue`.

Exit status: 0 done, 1 the task did not finish (turn budget spent, turn failed),
2 usage or input error, 130 interrupted (143 SIGTERM with -p --output-format json).

Environment: SERI_HOME (profile root, default ~/.seri), SERI_BASE_URL, SERI_MODEL,
OPENROUTER_API_KEY or SERI_API_KEY, SERI_TRAJECTORY (on/off), SERI_RUN_TAGS (K=V,K=V),
SERI_DEBUG=1 (tracebacks). With OTEL_EXPORTER_OTLP_ENDPOINT set, seri chat sends
OpenTelemetry traces and metrics live (README: OpenTelemetry).
"""

from __future__ import annotations

import sys

from seri import __version__

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

# Commands are imported only when run: `seri --version` and `seri sessions` must
# not pay for the HTTP client or the agent loop.
COMMANDS = {
    "chat": "seri.commands.chat",
    "sessions": "seri.commands.sessions",
    "compact": "seri.commands.compact",
    "handoff": "seri.commands.handoff",
    "pin": "seri.commands.pin",
    "rewind": "seri.commands.rewind",
    "trajectory": "seri.commands.trajectory",
    "memory": "seri.commands.memory",
    "mcp": "seri.commands.mcp",
    "skills": "seri.commands.skills",
    "hooks": "seri.commands.hooks",
    "completion": "seri.commands.completion",
    "acp": "seri.commands.acp",
}

# The options of seri chat that start a chat without its name (`seri -p TEXT`).
CHAT_OPTIONS = frozenset(
    ("-p", "--prompt", "--continue", "--resume", "--fork", "--model", "--max-turns", "--allow")
)
CHAT_OPTIONS_WITH_VALUE = ("-p", "--prompt=", "--resume=", "--model=", "--max-turns=", "--allow=")


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args == ["--version"]:
        print(f"seri {__version__}")
        return 0
    from seri.runtime.agent.running import run_guarded

    _without_httpx_command_line()
    _tolerant_stdio()
    return run_guarded(lambda: _dispatch(args))


def _without_httpx_command_line() -> None:
    """httpx's package imports its own command-line client whenever click is installed, and
    that client imports rich and pygments (~100 ms): seri never runs it, so it is marked as
    not importable and httpx keeps the stand-in it defines for that case."""
    if "httpx._main" not in sys.modules:
        sys.modules["httpx._main"] = None  # type: ignore[assignment]


def _tolerant_stdio() -> None:
    """Text that the terminal's encoding cannot show (PYTHONIOENCODING=ascii, a lone
    surrogate from a model) is escaped on the way out and replaced on the way in, instead of
    ending the run with an encoding error."""
    import io

    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")
    if isinstance(sys.stdin, io.TextIOWrapper):
        sys.stdin.reconfigure(errors="replace")


def _dispatch(args: list[str]) -> int:
    from seri.pure.inputs.argv_text import undecodable_argument
    from seri.pure.inputs.errors import EXIT_USAGE
    from seri.pure.terminal.terminal_text import neutralise

    undecodable = undecodable_argument(args)
    if undecodable:
        print(f"seri: {undecodable}", file=sys.stderr)
        return EXIT_USAGE
    if not args or args[0] in CHAT_OPTIONS or args[0].startswith(CHAT_OPTIONS_WITH_VALUE):
        args = ["chat", *args]  # as every other coding agent: the program alone is a chat
    name, rest = command_words(args)
    if name not in COMMANDS:
        shown = neutralise(repr(name))
        print(f"seri: unknown command {shown}; `seri --help` lists the commands", file=sys.stderr)
        return EXIT_USAGE
    import importlib

    module = importlib.import_module(COMMANDS[name])
    run: Callable[[list[str]], int] = module.run
    return run([name, *rest])


def command_words(args: list[str]) -> tuple[str, list[str]]:
    """The command's name and the words after it, as docopt (options first) reads them;
    --help, --version among other words, or a bad line are docopt's to answer."""
    from docopt import DocoptExit, docopt

    from seri.runtime.agent.running import usage_error

    try:
        options = docopt(__doc__, args, version=f"seri {__version__}", options_first=True)
    except DocoptExit:
        usage_error(__doc__ or "", args, "seri")
    return options["<command>"], options["<args>"]


if __name__ == "__main__":
    sys.exit(main())
