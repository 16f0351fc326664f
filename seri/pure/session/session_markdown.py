"""A stored session as Markdown, to read or to share: one piece per message, in order.

Text is written as it was (it is Markdown already, most of it); tool arguments and results
go in fenced blocks whose fence is longer than any run of backticks inside, so no stored
text can close its block early or turn into markup around it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from seri.pure.inputs import json_text
from seri.pure.session.records import Message

_BACKTICKS = re.compile(r"`+")


def fenced(text: str, info: str = "") -> str:
    """``text`` in a code block that nothing inside it can close."""
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    fence = "`" * max(3, longest + 1)
    body = text if text.endswith("\n") else text + "\n"
    return f"{fence}{info}\n{body}{fence}\n"


def _inline(text: str) -> str:
    """A short value as inline code, whatever backticks it holds."""
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def session_header(title: str, fields: Sequence[tuple[str, str]]) -> str:
    lines = [f"# {' '.join(title.split()) or 'Untitled session'}", ""]
    lines += [f"- {name}: {value}" for name, value in fields]
    return "\n".join(lines) + "\n"


def _arguments(text: str) -> str:
    """Arguments pretty-printed when they are JSON, as sent otherwise."""
    try:
        return json.dumps(json_text.loads(text), indent=2, ensure_ascii=False)
    except ValueError:
        return text


_HEADINGS = {
    ("user", ""): "User",
    ("user", "recap"): "Recap (earlier history, compacted)",
    ("user", "rule"): "Project rule",
    ("user", "skill"): "Skill (started by the user)",
    ("user", "hook"): "Hook (added for the model)",
    ("assistant", ""): "Assistant",
    ("assistant", "partial"): "Assistant (cut off: not finished)",
    ("system", ""): "System",
}


def message_markdown(seq: int, when: str, message: Message) -> str:
    """One message: a heading naming who and when, then its content."""
    if message.role == "tool":
        status = " (error)" if message.is_error else ""
        heading = f"Tool result {_inline(message.tool_name)} {_inline(message.tool_call_id)}"
        return f"\n### {heading}{status}\n\n<!-- {seq} · {when} -->\n\n{fenced(message.text)}"
    name = _HEADINGS.get((message.role, message.kind), f"{message.role} ({message.kind})")
    parts = [f"\n## {name}\n\n<!-- {seq} · {when} -->\n"]
    if message.reasoning:
        quoted = "\n".join(f"> {line}" if line else ">" for line in message.reasoning.split("\n"))
        parts.append(f"\n> **Thinking**\n>\n{quoted}\n")
    if message.text:
        parts.append("\n" + message.text.rstrip("\n") + "\n")
    parts.extend(
        f"\n**Tool call** {_inline(call.name)} {_inline(call.id)}\n\n"
        + fenced(_arguments(call.arguments), "json")
        for call in message.tool_calls
    )
    return "".join(parts)
