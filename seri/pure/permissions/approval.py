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

from seri.pure.agent.effects import Answer
from seri.pure.inputs.lazy_pattern import LazyPattern
from seri.pure.permissions.permission_policy import Policy, with_allowed
from seri.pure.permissions.permissions import decide
from seri.pure.tools.shell_split import split_command
from seri.pure.tools.tool_specs import ToolSpec, spec_of

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
# Programs whose every use can destroy something: "always" is offered for the exact command.
_EXACT_ONLY = frozenset(
    ("rm", "rmdir", "mv", "dd", "shred", "truncate", "chmod", "chown", "kill", "pkill", "sudo")
)
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
    if program in _EXACT_ONLY:
        # `bash(rm *)` would allow every deletion: "always" covers this very command only.
        exact = " ".join(words)
        return f"bash({exact})" if all(_PLAIN.fullmatch(w) for w in words) else ""
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


# What people type at a yes/no question, as Claude Code, Codex and a shell have taught them.
_YES = frozenset(
    [
        "y",
        "yes",
        "ok",
        "okay",
        "k",
        "sure",
        "yep",
        "yeah",
        "yup",
        "go",
        "allow",
        "approve",
        "approved",
        "fine",
        "proceed",
    ]
)
_ALWAYS = frozenset(["a", "always"])
_NO = frozenset(
    ["n", "no", "nope", "nah", "deny", "denied", "cancel", "stop", "skip", "don't", "dont"]
)
# Words that open a reply saying what to do instead: the reply is then a reason, not noise.
_REASON_OPENERS = frozenset(
    [
        "no",
        "not",
        "don't",
        "dont",
        "do",
        "never",
        "instead",
        "rather",
        "stop",
        "skip",
        "wait",
        "use",
        "try",
        "keep",
        "leave",
        "please",
        "rename",
        "change",
        "put",
        "write",
        "make",
        "run",
        "call",
    ]
)
_YES_PHRASES = frozenset(("go ahead", "do it", "yes please", "ok go", "sounds good", "lgtm"))
_ALWAYS_PHRASES = frozenset(("yes always", "always allow", "don't ask again", "yes, always"))


def menu(offered: tuple[str, ...]) -> tuple[str, ...]:
    """The numbered choices, in order: yes, always (when a rule is offered), no."""
    choices = ["yes"]
    if offered:
        choices.append(f"always: {', '.join(offered)} for this session")
    choices.append("no (type what to do instead)")
    return tuple(choices)


def read_answer(text: str, offered: tuple[str, ...]) -> Answer | None:
    """The person's reply, or None when it is neither a choice nor clearly a reason (then
    seri asks again rather than guess).

    A choice is its number in ``menu``, Enter (the default: yes), a word people use for
    it (``y``, ``ok``, ``sure``, ``always``, ``n``, ``nope``) or a short phrase (``go
    ahead``, ``don't ask again``). ``no, <what to do>`` (or ``3 <what to do>``) is no with
    a reason for the model, and so is a reply that opens like an instruction (``not now,
    keep the notes in README``, ``use pytest -x instead``).
    """
    reply = text.strip()
    bare = _bare(reply)
    numbers = {str(n): choice for n, choice in enumerate(_choices(offered), 1)}
    if bare in ("", *_YES, *_YES_PHRASES) or numbers.get(bare) == "yes":
        return Answer(True)
    if offered and (bare in _ALWAYS or bare in _ALWAYS_PHRASES or numbers.get(bare) == "always"):
        return Answer(True, offered)
    if bare in _NO or numbers.get(bare) == "no":
        return Answer(False)
    first, _, rest = reply.partition(" ")
    head = _bare(first)
    if (head in _NO or numbers.get(head) == "no") and rest.strip(" ,:;-"):
        return Answer(False, reason=rest.strip(" ,:;-\t"))
    for separator in (",", ":"):
        word, found, after = reply.partition(separator)
        if found and _bare(word) in _NO and after.strip():
            return Answer(False, reason=after.strip())
    if head in _REASON_OPENERS and len(reply.split()) >= 3:
        return Answer(False, reason=reply)
    return None


def _choices(offered: tuple[str, ...]) -> tuple[str, ...]:
    return ("yes", "always", "no") if offered else ("yes", "no")


def _bare(text: str) -> str:
    """Lower case, trailing punctuation and a trailing "please" off: ``OK!`` is ``ok``."""
    word = text.strip().lower().rstrip(".!")
    word = word.removesuffix(" please").removesuffix(",").strip()
    return word.replace("’", "'")
