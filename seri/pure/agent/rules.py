"""Project rules, ``.seri/rules/*.md``: always-on ones and ones that fire on a glob.

A rule file may start with front matter between ``---`` lines. With a ``globs:``
entry (a list, or comma-separated patterns) the rule fires the first time in a
session that a tool touches a matching project-relative path; its text then
arrives as a user message, so the frozen system prompt never changes. Without
``globs:`` the rule is always on and is frozen into the prompt at session start.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from seri.pure.inputs import json_text
from seri.pure.session.records import Message
from seri.pure.tools.glob_match import GlobError, glob_matches

RULE_MESSAGE_PREFIX = "[rule "
# The key, in a session's stored recap object, of the rules whose messages compaction evicted.
RULES_FIRED_KEY = "rules_fired"


def _glob_matches(pattern: str, path: str) -> bool:
    """A glob from a project's rule file; one that means nothing (``[9-0]``) matches nothing."""
    try:
        return glob_matches(pattern, path, paths=True)
    except GlobError:
        return False


@attrs.frozen
class GlobRule:
    name: str
    globs: tuple[str, ...]
    text: str

    def matches(self, path: str) -> bool:
        return any(_glob_matches(pattern, path) for pattern in self.globs)

    def message_text(self) -> str:
        lead = "This project rule applies to the files you touched:"
        return f"{RULE_MESSAGE_PREFIX}{self.name}] {lead}\n\n{self.text}"


@attrs.frozen
class RuleFile:
    name: str
    text: str
    globs: tuple[str, ...] = ()


def parse_rule(name: str, source: str) -> RuleFile:
    """Split front matter from body; ``globs:`` may be a JSON/YAML-ish list or a CSV line."""
    lines = source.splitlines()
    if not lines or lines[0].strip() != "---":
        return RuleFile(name, source.strip())
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        return RuleFile(name, source.strip())
    globs: list[str] = []
    front = lines[1:end]
    for i, line in enumerate(front):
        key, _, value = line.partition(":")
        if key.strip() != "globs":
            continue
        value = value.strip()
        if value:
            globs.extend(_glob_list(value))
        else:  # a YAML block list on the following lines
            for item in front[i + 1 :]:
                if not item.strip().startswith("-"):
                    break
                globs.append(_unquote(item.strip()[1:].strip()))
    body = "\n".join(lines[end + 1 :]).strip()
    return RuleFile(name, body, tuple(g for g in globs if g))


def _glob_list(value: str) -> list[str]:
    if value.startswith("["):
        try:
            parsed = json_text.loads(value)
        except (ValueError, RecursionError):
            parsed = value.strip("[]").split(",")
        return [_unquote(str(item).strip()) for item in parsed]
    return [_unquote(part.strip()) for part in value.split(",")]


def _unquote(text: str) -> str:
    return text.strip().strip("'\"")


def glob_rules(rules: Iterable[RuleFile]) -> tuple[GlobRule, ...]:
    return tuple(GlobRule(r.name, r.globs, r.text) for r in rules if r.globs)


def always_on(rules: Iterable[RuleFile]) -> tuple[RuleFile, ...]:
    return tuple(r for r in rules if not r.globs)


def rules_fired_by(
    rules: Iterable[GlobRule], touched: Iterable[str], already: frozenset[str]
) -> tuple[GlobRule, ...]:
    """Rules not yet fired in this session that match any touched path."""
    paths = tuple(touched)
    return tuple(
        rule for rule in rules if rule.name not in already and any(rule.matches(p) for p in paths)
    )


def fired_rule_names(
    history: Iterable[Message], recap: Mapping[str, Any] | None = None
) -> frozenset[str]:
    """Which rules already fired, read back from the rule messages in a resumed history.

    A compaction can evict a rule message; the names it carried then live on in the stored
    recap under ``RULES_FIRED_KEY`` (``seri.io.session.session_log`` writes them there when it
    applies the compaction), so pass the session's stored recap too, or the rule would fire again.
    """
    names = set()
    for message in history:
        text = message.text
        if message.kind == "rule" and text.startswith(RULE_MESSAGE_PREFIX):
            names.add(text[len(RULE_MESSAGE_PREFIX) :].split("]", 1)[0])
    stored = (recap or {}).get(RULES_FIRED_KEY, ())
    if isinstance(stored, list | tuple):
        names.update(name for name in stored if isinstance(name, str))
    return frozenset(names)
