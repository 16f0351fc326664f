"""Command rules: whether a bash command may run, judged per simple command.

A shell command is decided per simple command (see ``shell_split``): one denied part denies
the whole, one part needing approval makes the whole ask. A command seri cannot analyse asks,
and since a run with no one to ask turns "ask" into "deny", such a command can never slip
through unattended. A write target inside a protected path (``protected_paths``) is denied
whatever the rules say.
"""

from __future__ import annotations

import posixpath
import re

from seri.pure.permissions.permission_policy import (
    ANY_TOOL,
    PROTECTED_RULE,
    Decision,
    Policy,
    Rule,
    by_rules,
)
from seri.pure.permissions.protected_paths import RC_FILES, is_within, protected_dir
from seri.pure.tools.glob_match import glob_matches
from seri.pure.tools.shell_split import Segment, split_command

MAX_SEGMENTS = 50


def decide_command(policy: Policy, command: str, project: str = "") -> Decision:
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
    return by_rules(policy, "bash", shown, any_form, as_written)


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
        if root and is_within(norm, root):
            named = posixpath.relpath(norm, root)
        found = protected_dir(named)
        if found is not None:
            part, why = found
            return f"bash writes {target}, {part}, which is never allowed: {why}"
        if named.split("/")[-1] in RC_FILES:
            return f"bash writes {target}, a shell start-up file, which is never allowed"
        if norm.startswith("/"):
            for guarded in policy.protected:
                if is_within(norm, guarded):
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
