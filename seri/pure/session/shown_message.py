"""One stored message as `seri sessions show` prints it for people.

This is the definition of the human form, rendered here for every message. (Rendering it
in SQLite, as `--json` builds its lines there, was measured 1.7-5x slower: json_extract
parses a body again for each field it takes out.)
"""

from __future__ import annotations

from typing import Any

# A part (reasoning, text, one tool call) longer than this is cut, saying how much is left.
SHOWN_WIDTH = 2000


def render_message(seq: int, message: dict[str, Any]) -> str:
    """One stored message (its JSON body, defaults left out): a head line, then each part
    indented, every line ending in a newline. The caller neutralises it for the terminal."""
    get = message.get
    role = get("role", "?")
    kind = get("kind")
    head = f"[{seq}] {role} ({kind})" if kind else f"[{seq}] {role}"
    if role == "tool":
        head += f" {get('tool_name', '')} [{get('tool_call_id', '')}]"
    lines = [head]
    reasoning = get("reasoning")
    if reasoning:
        lines.append(indent("(thinking) " + reasoning))
    text = get("text")
    if text:
        lines.append(indent("(error) " + text if get("is_error") else text))
    calls = get("tool_calls")
    if calls:
        lines.extend(
            [
                indent(f"-> {call.get('name')}({call.get('arguments')})  [{call.get('id')}]")
                for call in calls
            ]
        )
    lines.append("")
    return "\n".join(lines)


def indent(text: str, width: int = SHOWN_WIDTH) -> str:
    """``text`` cut at ``width`` characters (saying how many are left) and indented by four
    spaces. When some line ends in a blank (space, tab, carriage return) or is empty, each
    line is stripped of trailing whitespace; otherwise only the end of the whole is."""
    if "\n" not in text and len(text) <= width:
        return ("    " + text).rstrip()  # one short line: what the general case gives, sooner
    shown = text if len(text) <= width else text[:width] + f"… ({len(text) - width} more chars)"
    # Lines end at "\n" only: a carriage return is not a line (the terminal text drops it).
    shown = shown.removesuffix("\n")
    indented = "    " + shown.replace("\n", "\n    ")
    if _has_blank_line_end(indented):
        return "\n".join(("    " + line).rstrip() for line in shown.split("\n"))
    return indented.rstrip()


# Tab and carriage return as spaces, so that one search finds a line ending in any blank.
_BLANKS_AS_SPACE = bytes.maketrans(b"\t\r", b"  ")


def _has_blank_line_end(indented: str) -> bool:
    """Whether a line of the text ends in a space, tab or carriage return, or is empty
    (indented, an empty line is four spaces); the four spaces before the first line are not
    a line end. One search instead of four: of the text itself when it holds no tab or
    carriage return (most), else of its bytes with those made spaces (none of the three is
    part of another character's UTF-8)."""
    if "\t" not in indented and "\r" not in indented:
        return indented.find(" \n", 4) >= 0
    data = indented.encode("utf-8", "surrogatepass").translate(_BLANKS_AS_SPACE)
    return data.find(b" \n", 4) >= 0
