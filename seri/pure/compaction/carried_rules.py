"""The rules and skills a recap carries in force: a glob rule or an activated skill arrives as a
message, and evicting that message must not take it out of force."""

from __future__ import annotations

from collections.abc import Sequence

from seri.pure.compaction.recap import Recap
from seri.pure.session.records import Message

# A glob rule arrives as a message when it fires. Evicting that message must not
# take the rule out of force, so the recap carries the text of every rule that fired
# (``Recap.rules``), and its message shows them under this heading. An activated skill
# (``seri.pure.extensions.skills``) is carried the same way, verbatim.
RULES_HEADING = "\n\n## Project rules in force\n\n"


def rules_in_force(evicted: Sequence[Message], previous: Recap | None) -> tuple[str, ...]:
    """The rules the previous recap carried, then those whose messages are being evicted.

    A previous recap stored before seri kept its rules as a field (``rules`` is None) has
    them in its text only: that recap's message, evicted now, is read for them this once.
    """
    carried = previous.rules if previous is not None else None
    found = list(carried or ())
    for message in evicted:
        if message.kind in ("rule", "skill") or is_skill_activation(message):
            found.append(message.text)
        elif message.kind == "recap" and carried is None:
            found.extend(_rules_in_text(message.text))
    texts: dict[str, str] = {}
    for text in found:
        texts.setdefault(text.split("]", 1)[0], text.strip())
    return tuple(texts.values())


def is_skill_activation(message: Message) -> bool:
    """An activated skill's content (``activate_skill``'s answer): carried like a rule."""
    from seri.pure.extensions.skills import ACTIVATE_SKILL, SKILL_MESSAGE_PREFIX

    return (
        message.role == "tool"
        and message.tool_name == ACTIVATE_SKILL
        and not message.is_error
        and message.text.startswith(SKILL_MESSAGE_PREFIX)
    )


def _rules_in_text(text: str) -> list[str]:
    """The rules section of a recap message written before the rules were a field."""
    if RULES_HEADING not in text:
        return []
    section = text.split(RULES_HEADING, 1)[1]
    found = ["[rule " + part for part in section.split("\n[rule ") if part]
    found[0] = found[0].removeprefix("[rule ")
    return found


def rules_section(rules: Sequence[str]) -> str:
    return RULES_HEADING + "\n".join(rules) if rules else ""
