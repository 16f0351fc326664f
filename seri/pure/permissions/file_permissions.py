"""File rules: whether a file tool (read_file, write_file, edit, grep, glob) may touch a path.

A rule's pattern matches the path the way a .gitignore line does; a write into a protected
path (``protected_paths``) is denied before any rule is looked at.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping

from seri.pure.permissions.permission_policy import (
    PROTECTED_RULE,
    SUBJECT_ARGUMENT,
    WRITE_TOOLS,
    Decision,
    Policy,
    Rule,
    by_rules,
)
from seri.pure.permissions.protected_paths import is_within, protected_dir
from seri.pure.tools.glob_match import glob_matches


def decide_file(
    policy: Policy,
    tool_name: str,
    args: Mapping[str, object],
    *,
    project_relative_path: str | None,
    resolved_path: str | None,
    project: str,
) -> Decision:
    """Decide one file tool call (see ``permissions.decide`` for the arguments)."""
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

    return by_rules(policy, tool_name, shown, matches, matches)


def _locate(raw: str, project: str) -> tuple[str | None, str | None]:
    """A raw path argument, lexically: (relative to the project, absolute).

    Either is None when it cannot be known without the filesystem.
    """
    if raw.startswith("~"):
        return None, None
    root = posixpath.normpath(project) if project else ""
    if raw.startswith("/"):
        absolute = posixpath.normpath(raw)
        if root and is_within(absolute, root):
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
        named = protected_dir(path)
        if named is not None:
            part, why = named
            return f"writing {path} is never allowed: it is {part}, and {why}"
    if absolute is not None:
        for root in policy.protected:
            if is_within(absolute, root):
                return f"writing {absolute} is never allowed: it is protected ({root})"
    return ""
