"""What a person can answer when seri asks whether a tool call may run.

Three answers: yes (this call), always (this call and every later one the offered allow
rules cover, for the rest of the session), no (with an optional reason that the model
reads as the call's result). The "always" rules are chosen here and checked against the
policy: a rule is offered only if adding it really lets this very call through, so an
offer can never be a no-op (a command seri cannot analyse, for one, asks every time).

For a file tool the rule is the tool itself (``edit``: every edit in the project, protected
paths still refused). For a shell command it is the command's leading words and a ``*``:
``bash(pytest *)``, ``bash(git commit *)``, ``bash(npm run test *)``, one rule per part of a
compound command that needed approval.
"""

from __future__ import annotations

from collections.abc import Mapping

from seri.pure.effects import Answer
from seri.pure.lazy_pattern import LazyPattern
from seri.pure.permission_policy import Policy, with_allowed
from seri.pure.permissions import decide
from seri.pure.shell_split import split_command
from seri.pure.tool_specs import ToolSpec, spec_of

# Programs whose first argument says what they do (``git commit``), and those whose first
# two do (``npm run test``, ``python -m pytest``).
_SUBCOMMANDS = frozenset(
    {
        "apt",
        "apt-get",
        "brew",
        "bundle",
        "cargo",
        "composer",
        "conda",
        "dnf",
        "docker",
        "dotnet",
        "gh",
        "git",
        "go",
        "gradle",
        "helm",
        "just",
        "kubectl",
        "make",
        "mvn",
        "nix",
        "pip",
        "pip3",
        "pipx",
        "poetry",
        "rake",
        "ruff",
        "rustup",
        "swift",
        "systemctl",
        "terraform",
        "uv",
        "yarn",
    }
)
_TWO_WORDS = {
    "npm": ("run", "exec", "x"),
    "pnpm": ("run", "exec", "dlx"),
    "yarn": ("run", "dlx"),
    "uv": ("run", "tool"),
    "poetry": ("run",),
    "bundle": ("exec",),
    "python": ("-m",),
    "python3": ("-m",),
    "npx": (),
}
# A word that can go into a rule as it is (no glob characters, no quoting needed) ...
_PLAIN = LazyPattern(r"[^\s*?\[\]{}\\()]+")
# ... and one that names a subcommand rather than an option or a file.
_SUBWORD = LazyPattern(r"[A-Za-z0-9_][A-Za-z0-9_:@+-]*")


def always_rules(
    policy: Policy,
    tool: str,
    arguments: Mapping[str, object],
    *,
    relative_path: str | None = None,
    absolute_path: str | None = None,
    spec: ToolSpec | None = None,
) -> tuple[str, ...]:
    """The allow rules "always" would add, or () when no rule could let this call through.

    A command gets rules for its commands (``bash(git commit *)``); any other tool gets its
    name (``write_file``, ``mcp__git__git_commit``)."""
    spec = spec_of(tool) if spec is None else spec
    if spec is None:
        return ()
    if spec.runner == "shell":
        rules = _bash_rules(policy, str(arguments.get(spec.subject, "")))
    else:
        rules = (tool,)
    if not rules:
        return ()
    widened = with_allowed(policy, rules)
    verdict = decide(
        widened,
        tool,
        arguments,
        project_relative_path=relative_path,
        resolved_path=absolute_path,
        spec=spec,
    )
    return rules if verdict.action == "allow" else ()


def _bash_rules(policy: Policy, command: str) -> tuple[str, ...]:
    parsed = split_command(command)
    if parsed.error or not parsed.segments:
        return ()
    rules: list[str] = []
    for segment in parsed.segments:
        verdict = decide(policy, "bash", {"command": segment.written_text})
        if verdict.action != "ask":
            continue
        words = segment.words if segment.written is None else segment.written
        rule = command_rule(words)
        if not rule:
            return ()
        if rule not in rules:
            rules.append(rule)
    return tuple(rules)


def command_rule(words: tuple[str, ...]) -> str:
    """``bash(<leading words> *)`` for one simple command, "" when no safe rule can be made.

    A program with subcommands keeps its subcommand (``git commit``); when an option comes
    first (``git -C dir status``), the rule is the exact command rather than all of ``git``.
    """
    if not words or not _PLAIN.fullmatch(words[0]):
        return ""
    program = words[0].rsplit("/", 1)[-1]
    kept = [words[0]]
    rest = list(words[1:])
    if program in _SUBCOMMANDS or program in _TWO_WORDS:
        if not rest:
            return f"bash({words[0]} *)"
        follows = _TWO_WORDS.get(program, ())
        if not _SUBWORD.fullmatch(rest[0]) and rest[0] not in follows:
            exact = " ".join(words)
            return f"bash({exact})" if all(_PLAIN.fullmatch(w) for w in words) else ""
        kept.append(rest.pop(0))
        if kept[-1] in follows and rest and _SUBWORD.fullmatch(rest[0]):
            kept.append(rest.pop(0))
    return f"bash({' '.join(kept)} *)"


def read_answer(text: str, offered: tuple[str, ...]) -> Answer:
    """The person's reply: ``y``/``yes``, ``a``/``always`` (when offered), ``n``/``no`` or
    Enter (no), or anything else: no, with those words as the reason for the model."""
    reply = text.strip()
    word = reply.lower()
    if word in ("y", "yes"):
        return Answer(True)
    if word in ("a", "always") and offered:
        return Answer(True, offered)
    if word in ("", "n", "no"):
        return Answer(False)
    for prefix in ("no,", "no:", "n,", "n:", "no ", "n "):
        if word.startswith(prefix):
            return Answer(False, reason=reply[len(prefix) :].strip())
    return Answer(False, reason=reply)
