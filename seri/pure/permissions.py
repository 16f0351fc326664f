"""Whether a tool call may run: allow, ask the person, or deny.

The policy comes from ``config.json`` ``permissions`` (plus ``--allow`` rules
for one run) and from nothing else: no text the model writes can change a
decision. Order of precedence, whatever the order rules were written in:

1. protected writes are denied, even under an allow rule or ``*``: ``.git/``
   (hooks run code), seri's profile directory (its config, rules and db), shell
   start-up files and ``~/.ssh``;
2. a matching deny rule denies, then an ask rule asks, then an allow rule allows;
3. with no matching rule, ``read_file``, ``glob`` and ``grep`` are allowed and
   everything else asks.

A shell command is decided per simple command (see ``shell_split``): one
denied part denies the whole, one part needing approval makes the whole ask.
A command seri cannot analyse asks, and since a run with no one to ask turns
"ask" into "deny", such a command can never slip through unattended.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Literal

import attrs

from seri.pure.glob_match import GlobError, compile_glob, glob_matches
from seri.pure.shell_split import Segment, split_command
from seri.pure.tool_specs import READ_ONLY, SPEC_BY_NAME, TOOL_NAMES

Action = Literal["allow", "ask", "deny"]

MAX_SEGMENTS = 50
PROTECTED_RULE = "(protected)"
ANY_TOOL = "*"

# What a file rule's pattern is matched against, per tool.
SUBJECT_ARGUMENT = {
    "read_file": "path",
    "write_file": "path",
    "edit": "path",
    "grep": "path",
    "glob": "pattern",
    "bash": "command",
}
WRITE_TOOLS = frozenset({"write_file", "edit"})

# Shell start-up files: writing one runs code in every later shell.
RC_FILES = (
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".zlogout",
    ".kshrc",
    ".mkshrc",
    ".cshrc",
    ".tcshrc",
    ".login",
    "config.fish",
)
# Directories no tool may write into, by name, wherever they are.
_PROTECTED_DIR_NAMES = {
    ".git": "it holds git's hooks and config, which run code",
    ".ssh": "it holds SSH keys and authorized_keys",
}
# Under the home directory, besides the rc files.
_HOME_PROTECTED = (".ssh", ".gitconfig", ".config/git", ".config/fish")

_RULE = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*|\*)\s*(?:\((.*)\))?\s*", re.DOTALL)


class PolicyError(ValueError):
    """A permission rule or the permissions object is malformed."""


@attrs.frozen
class Rule:
    """One permission rule: a tool (or ``*``) and an optional glob pattern."""

    text: str
    tool: str
    pattern: str | None = None


@attrs.frozen
class Policy:
    """The parsed permission rules, and the absolute paths never written.

    ``protected`` holds absolute paths (the profile directory, the home rc
    files; see ``protected_paths``), which the caller computes from the
    environment. ``home`` expands ``~`` and ``$HOME`` in shell write targets,
    ``project`` anchors relative ones.
    """

    allow: tuple[Rule, ...] = ()
    ask: tuple[Rule, ...] = ()
    deny: tuple[Rule, ...] = ()
    protected: tuple[str, ...] = ()
    home: str = ""
    # The project directory (where tools run), when the caller knows it: relative shell
    # write targets are then checked against ``protected`` too.
    project: str = ""


@attrs.frozen
class Decision:
    """The verdict on one call, with the rule that settled it and why.

    ``rule`` is the rule's text as written, ``PROTECTED_RULE`` for a protected
    path, or "" for a default.
    """

    action: Action
    rule: str
    reason: str


# -- parsing --------------------------------------------------------------


def parse_rule(text: str) -> Rule:
    """Parse ``tool`` or ``tool(pattern)``; raise ValueError naming the rule."""
    if not isinstance(text, str):
        raise PolicyError(f"permission rule {text!r} is not a string")
    m = _RULE.fullmatch(text)
    if m is None:
        raise PolicyError(f"permission rule {text!r} is not `tool` or `tool(pattern)`")
    tool, pattern = m.group(1).lower(), m.group(2)
    if tool != ANY_TOOL and tool not in SPEC_BY_NAME:
        raise PolicyError(
            f"permission rule {text!r} names unknown tool {tool!r}; "
            f"tools are {', '.join(TOOL_NAMES)}"
        )
    if pattern is not None:
        pattern = pattern.strip()
        if not pattern:
            raise PolicyError(f"permission rule {text!r} has an empty pattern; drop the ()")
        if tool not in SUBJECT_ARGUMENT:
            raise PolicyError(f"permission rule {text!r}: {tool} takes no pattern")
        try:
            compile_glob(pattern, paths=tool != "bash")
            compile_glob(pattern, paths=False)
        except GlobError as exc:
            raise PolicyError(f"permission rule {text!r}: {exc}") from None
    return Rule(text=text.strip(), tool=tool, pattern=pattern)


def parse_policy(
    mapping: Mapping[str, object] | None,
    *,
    protected: Iterable[str] = (),
    home: str = "",
    project: str = "",
) -> Policy:
    """Build a Policy from the ``permissions`` object of config.json.

    Raises ValueError naming the bad key or rule; a config error must stop seri
    rather than leave it running with rules the person did not mean.
    """
    mapping = {} if mapping is None else mapping
    if not isinstance(mapping, Mapping):
        raise PolicyError("permissions must be an object with allow, ask and deny lists")
    unknown = sorted(set(mapping) - {"allow", "ask", "deny"})
    if unknown:
        raise PolicyError(
            f"unknown key(s) in permissions: {', '.join(map(str, unknown))}; "
            "expected allow, ask, deny"
        )
    lists: dict[str, tuple[Rule, ...]] = {}
    for key in ("allow", "ask", "deny"):
        value = mapping.get(key, [])
        if isinstance(value, str) or not isinstance(value, list | tuple):
            raise PolicyError(f"permissions.{key} must be a list of rules, not {value!r}")
        lists[key] = tuple(_parse_listed_rule(key, item) for item in value)
    return Policy(
        allow=lists["allow"],
        ask=lists["ask"],
        deny=lists["deny"],
        protected=tuple(protected),
        home=home,
        project=project,
    )


def _parse_listed_rule(key: str, item: object) -> Rule:
    try:
        return parse_rule(item)  # type: ignore[arg-type]  # checked inside
    except PolicyError as exc:
        raise PolicyError(f"permissions.{key}: {exc}") from None


def with_allowed(policy: Policy, rules: Iterable[str]) -> Policy:
    """The policy plus allow rules for this run only (``--allow``)."""
    extra = tuple(parse_rule(text) for text in rules)
    return attrs.evolve(policy, allow=policy.allow + extra)


def protected_paths(profile_dir: str, home: str) -> tuple[str, ...]:
    """The absolute paths no tool may write, for ``Policy.protected``.

    The caller should pass resolved (real) paths, and may add the resolved
    form as well when it differs.
    """
    paths = [profile_dir] if profile_dir else []
    if home:
        paths += [posixpath.join(home, name) for name in (*RC_FILES, *_HOME_PROTECTED)]
    return tuple(posixpath.normpath(p) for p in paths)


# -- deciding -------------------------------------------------------------


def decide(
    policy: Policy,
    tool_name: str,
    args: Mapping[str, object],
    *,
    project_relative_path: str | None = None,
    resolved_path: str | None = None,
    project: str = "",
    protected: Iterable[str] = (),
) -> Decision:
    """Decide one call with already validated arguments.

    For file tools, pass the path as the io layer resolved it (symlinks
    followed): ``project_relative_path`` (POSIX, relative to the project root)
    for rule matching and the ``.git`` check, ``resolved_path`` (absolute) for
    the protected-path check. Without them the raw argument is used, joined to
    ``project`` when given, which is only right when it crosses no symlink;
    rules must see the real path, or a link could lead past a deny rule.
    ``protected`` adds absolute paths to ``policy.protected`` for this call.
    """
    extra = tuple(protected)
    if extra:
        policy = attrs.evolve(policy, protected=policy.protected + extra)
    if tool_name not in SPEC_BY_NAME:
        return Decision("deny", "", f"{tool_name!r} is not a tool")
    if tool_name == "bash":
        return _decide_bash(policy, str(args.get("command", "")), project or policy.project)

    raw = args.get(SUBJECT_ARGUMENT.get(tool_name, ""))
    raw_text = raw if isinstance(raw, str) else ("." if tool_name == "grep" else None)
    rel, absolute = project_relative_path, resolved_path
    guessed_rel = guessed_abs = None
    if raw_text is not None and tool_name != "glob":
        guessed_rel, guessed_abs = _locate(raw_text, project)
        rel = guessed_rel if rel is None else rel
        absolute = guessed_abs if absolute is None else absolute

    if tool_name in WRITE_TOOLS:
        # Both the path as given and as resolved: ".git" may itself be a link.
        why = _protected_file(policy, rel, absolute) or _protected_file(
            policy, guessed_rel, guessed_abs
        )
        if why:
            return Decision("deny", PROTECTED_RULE, why)

    subject = raw_text if tool_name == "glob" else rel
    shown = f"{tool_name}({subject or absolute})" if (subject or absolute) else tool_name

    def matches(rule: Rule) -> bool:
        if rule.pattern is None:
            return True
        if tool_name == "glob":
            return subject is not None and _path_matches(rule.pattern, subject.removeprefix("./"))
        return _file_rule_matches(rule.pattern, rel, absolute)

    return _by_rules(policy, tool_name, shown, matches, matches)


def _by_rules(
    policy: Policy,
    tool_name: str,
    shown: str,
    matches: Callable[[Rule], bool],
    allow_matches: Callable[[Rule], bool],
) -> Decision:
    """Deny, then ask, then allow, then the default, for one tool and subject."""
    tiers: tuple[tuple[Action, str, tuple[Rule, ...], Callable[[Rule], bool]], ...] = (
        ("deny", "denied", policy.deny, matches),
        ("ask", "needs approval", policy.ask, matches),
        ("allow", "allowed", policy.allow, allow_matches),
    )
    for action, verb, rules, check in tiers:
        for rule in rules:
            if rule.tool in (tool_name, ANY_TOOL) and check(rule):
                return Decision(action, rule.text, f"{shown} {verb} by rule {rule.text}")
    if tool_name in READ_ONLY:
        return Decision("allow", "", f"{tool_name} is allowed by default")
    return Decision("ask", "", f"{shown} needs approval (no rule allows it)")


# -- file tools -----------------------------------------------------------


def _locate(raw: str, project: str) -> tuple[str | None, str | None]:
    """A raw path argument, lexically: (relative to the project, absolute).

    Either is None when it cannot be known without the filesystem.
    """
    if raw.startswith("~"):
        return None, None
    root = posixpath.normpath(project) if project else ""
    if raw.startswith("/"):
        absolute = posixpath.normpath(raw)
        if root and _is_within(absolute, root):
            return absolute[len(root) :].lstrip("/") or ".", absolute
        return None, absolute
    rel = posixpath.normpath(raw)
    joined = posixpath.normpath(posixpath.join(root, rel)) if root else None
    if rel == ".." or rel.startswith("../"):
        return None, joined
    return rel, joined


def _file_rule_matches(pattern: str, rel: str | None, absolute: str | None) -> bool:
    if pattern.startswith("/"):
        return absolute is not None and _path_matches(pattern, absolute)
    return rel is not None and _path_matches(pattern, rel)


def _path_matches(pattern: str, path: str) -> bool:
    """Gitignore-like: a rule naming a directory covers what is inside it.

    A pattern without ``/`` (``.env``, ``*.pem``) matches a file or directory
    of that name at any depth; one with ``/`` is anchored at the root.
    """
    pattern = pattern.removeprefix("./")
    if len(pattern) > 1:
        pattern = pattern.rstrip("/")
    root = "/" if path.startswith("/") else ""
    parts = [p for p in path.split("/") if p and p != "."]
    if not parts:
        return glob_matches(pattern, root or ".", paths=True)
    if "/" not in pattern:
        return any(glob_matches(pattern, part, paths=True) for part in parts)
    prefixes = (root + "/".join(parts[: i + 1]) for i in range(len(parts)))
    return any(glob_matches(pattern, p, paths=True) for p in prefixes)


def _protected_file(policy: Policy, rel: str | None, absolute: str | None) -> str:
    """Why writing this file is never allowed, or "" if it may be."""
    for path in (rel, absolute):
        if path is None:
            continue
        for part in path.split("/"):
            why = _PROTECTED_DIR_NAMES.get(part.lower())
            if why:
                return f"writing {path} is never allowed: it is inside {part}/, and {why}"
    if absolute is not None:
        for root in policy.protected:
            if _is_within(absolute, root):
                return f"writing {absolute} is never allowed: it is protected ({root})"
    return ""


def _is_within(path: str, root: str) -> bool:
    path, root = posixpath.normpath(path), posixpath.normpath(root)
    return path == root or path.startswith(root.rstrip("/") + "/")


# -- bash -----------------------------------------------------------------


def _decide_bash(policy: Policy, command: str, project: str = "") -> Decision:
    """``project`` (the directory the command runs in) lets relative write targets be
    checked against the protected absolute paths too: a profile directory inside the
    project is written as ``.seri/config.json``, not by its absolute name."""
    parsed = split_command(command)
    if parsed.error:
        return _decide_unparseable(policy, command, parsed.error)
    start = posixpath.normpath(project) if project else ""
    if not parsed.segments:
        # Only assignments or comments: still judged, as one piece of text.
        segment = Segment((command.strip(),))
        return _decide_segment(policy, segment, cwd=start, root=start)

    decisions: list[tuple[Segment, Decision]] = []
    cwd: str | None = start  # where relative write targets land; None once unknown
    for segment in parsed.segments:
        decisions.append((segment, _decide_segment(policy, segment, cwd=cwd, root=start)))
        cwd = _next_cwd(cwd, segment, policy.home)

    for _, decision in decisions:
        if decision.action == "deny":
            return decision
    if len(parsed.segments) > MAX_SEGMENTS:
        return Decision(
            "ask",
            "",
            f"the command has {len(parsed.segments)} parts, more than seri checks "
            f"({MAX_SEGMENTS}); it needs approval, and is denied when no one can approve",
        )
    for _, decision in decisions:
        if decision.action == "ask":
            return decision
    rules = list(dict.fromkeys(d.rule for _, d in decisions if d.rule))
    return Decision(
        "allow", ", ".join(rules), f"every part of the command is allowed ({', '.join(rules)})"
    )


def _decide_segment(
    policy: Policy, segment: Segment, *, cwd: str | None, root: str = ""
) -> Decision:
    texts = segment.texts
    shown = f"bash({segment.written_text})" if segment.words else "bash(redirection)"

    def any_form(rule: Rule) -> bool:
        return any(_command_matches(rule, t) for t in texts)

    def as_written(rule: Rule) -> bool:
        return _command_matches(rule, segment.written_text)

    for rule in policy.deny:
        if rule.tool in ("bash", ANY_TOOL) and any_form(rule):
            return Decision("deny", rule.text, f"{shown} denied by rule {rule.text}")
    why = _protected_write(policy, segment, cwd, root)
    if why:
        return Decision("deny", PROTECTED_RULE, why)
    unsure = _unknowable(segment, cwd)
    if unsure:
        return Decision(
            "ask",
            "",
            f"{shown}: {unsure}; it needs approval, and is denied when no one can approve",
        )
    return _by_rules(policy, "bash", shown, any_form, as_written)


def _command_matches(rule: Rule, command: str) -> bool:
    """Match a command against a rule; ``git status *`` also matches bare ``git status``."""
    if rule.pattern is None:
        return True
    if glob_matches(rule.pattern, command, paths=False):
        return True
    return rule.pattern.endswith(" *") and glob_matches(rule.pattern[:-2], command, paths=False)


def _unknowable(segment: Segment, cwd: str | None) -> str:
    if segment.opaque:
        return segment.opaque
    if segment.computed_writes:
        return f"it writes to {segment.computed_writes[0]}, a path known only at run time"
    if cwd is None and any(not t.startswith(("/", "~", "$")) for t in segment.writes):
        return "it writes a relative path after changing to a directory known only at run time"
    return ""


def _protected_write(policy: Policy, segment: Segment, cwd: str | None, root: str = "") -> str:
    """Why a write target of this segment is protected, or "".

    ``root`` is the absolute directory the command starts in, when known: the names
    (``.git``, rc files) are judged on the path below it, the protected absolute paths on
    the whole path.
    """
    for target in (*segment.writes, *segment.computed_writes):
        path = _expand_home(target, policy.home)
        if cwd and not path.startswith(("/", "~", "$")):
            path = posixpath.join(cwd, path)
        norm = posixpath.normpath(path)
        named = norm
        if root and _is_within(norm, root):
            named = posixpath.relpath(norm, root)
        parts = named.split("/")
        for part in parts:
            why = _PROTECTED_DIR_NAMES.get(part.lower())
            if why:
                return f"bash writes {target}, inside {part}/, which is never allowed: {why}"
        if parts[-1] in RC_FILES:
            return f"bash writes {target}, a shell start-up file, which is never allowed"
        if norm.startswith("/"):
            for guarded in policy.protected:
                if _is_within(norm, guarded):
                    return f"bash writes {target}, which is protected ({guarded})"
    return ""


def _expand_home(path: str, home: str) -> str:
    if not home:
        return path
    for prefix in ("~", "$HOME", "${HOME}"):
        if path == prefix or path.startswith(prefix + "/"):
            return home + path[len(prefix) :]
    return path


def _next_cwd(cwd: str | None, segment: Segment, home: str) -> str | None:
    """Follow ``cd`` so ``cd .git && echo x > hooks/h`` is seen for what it writes."""
    if not segment.words or segment.words[0] not in {"cd", "pushd", "popd"}:
        return cwd
    args = [w for w in segment.words[1:] if not w.startswith("-")]
    if segment.words[0] == "popd" or "-" in segment.words[1:]:
        return None  # back to a directory this command does not name
    target = _expand_home(args[0] if args else (home or "~"), home)
    if "$" in target or "`" in target:
        return None
    if target.startswith(("/", "~")):
        return posixpath.normpath(target)
    if cwd is None:
        return None
    return posixpath.normpath(posixpath.join(cwd, target))


def _decide_unparseable(policy: Policy, command: str, error: str) -> Decision:
    """A command seri cannot split is asked about, unless a piece of it is denied.

    The pieces come from a crude split on shell punctuation; it can only add
    denials, never allow anything.
    """
    pieces = [p.strip() for p in re.split(r"[;&|\n()`]|\$\(", command)]
    for piece in (command.strip(), *pieces):
        if not piece:
            continue
        for rule in policy.deny:
            if rule.tool in ("bash", ANY_TOOL) and _command_matches(rule, piece):
                return Decision("deny", rule.text, f"bash({piece}) denied by rule {rule.text}")
    return Decision(
        "ask",
        "",
        f"seri cannot analyse this command ({error}); it needs approval, "
        "and is denied when no one can approve",
    )
