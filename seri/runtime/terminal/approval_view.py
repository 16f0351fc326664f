"""What a person sees before answering an approval: the call, its diff or whole command,
and why seri asks."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from seri.pure.agent.effects import AskPerson
from seri.pure.terminal.terminal_style import Span
from seri.pure.terminal.tool_lines import call_subject
from seri.pure.tools.tool_specs import shown_as

# How a file reads now, by its path as the call names it (None: no such file to show).
FileReader = Callable[[str], "str | None"]


def approval_spans(effect: AskPerson, read_file: FileReader) -> list[Span]:
    """The call as a person must see it to decide: the diff, the whole command."""
    call, arguments = effect.call, effect.arguments
    shown = shown_as(call.name)
    subject = "" if shown == "command" else f"  {call_subject(arguments)}"
    spans: list[Span] = [("warning", "? "), ("tool", call.name), ("", f"{subject}\n")]
    body: list[Span] = []
    if shown == "diff" and effect.path is not None:
        before = read_file(effect.path)
        after = _after(call.name, arguments, before)
        if isinstance(after, str):
            from seri.pure.terminal.diff_view import diff_spans

            body = diff_spans(effect.path, before, after)
        else:
            body = [("error", f"{after[1]}\n")]
    elif shown == "command":
        command = str(arguments.get("command", "")).rstrip("\n")
        body = [("dim", "$ "), ("bold", command + "\n")]
    elif shown == "task":
        body = [("", f"{arguments.get('description', '')}: {arguments.get('prompt', '')}\n")]
    elif shown == "memory":
        body = [("", f"{arguments.get('scope', 'project')}: {arguments.get('text', '')}\n")]
    elif arguments:
        # A server's tool: every argument, as the server will get them.
        body = [("", json.dumps(dict(arguments), ensure_ascii=False, indent=1) + "\n")]
    spans += indented(body)
    spans.append(("notice", f"  {effect.reason}\n"))
    return spans


def indented(spans: list[Span], prefix: str = "  ") -> list[Span]:
    """``spans`` with every line started by ``prefix`` (in no style)."""
    out: list[Span] = []
    at_start = True
    for style, text in spans:
        # Only a newline starts a line (splitlines would also cut at \r and \x1c-\x1e).
        for piece in re.split(r"(?<=\n)", text):
            if not piece:
                continue
            if at_start:
                out.append(("", prefix))
            out.append((style, piece))
            at_start = piece.endswith("\n")
    return out


def _after(tool: str, arguments: Mapping[str, Any], before: str | None) -> str | tuple[None, str]:
    """The file's text if the call runs, or why it would fail."""
    if tool == "write_file":
        return str(arguments.get("content", ""))
    from seri.pure.tools.edit_match import plan_edit
    from seri.pure.tools.tool_specs import FILE_CAP_BYTES

    if before is None:
        return None, "the file does not exist or cannot be read: this edit will fail"
    plan = plan_edit(
        before,
        str(arguments.get("old_string", "")),
        str(arguments.get("new_string", "")),
        replace_all=bool(arguments.get("replace_all", False)),
        cap=FILE_CAP_BYTES,
    )
    if plan.outcome != "applied":
        why = {
            "not_found": "old_string is not in the file",
            "ambiguous": f"old_string occurs {plan.occurrences} times",
            "unchanged": "old_string and new_string are the same",
            "too_large": f"the edited file would be {plan.size} bytes, over seri's cap",
        }[plan.outcome]
        return None, f"{why}: this edit will fail"
    return plan.updated
