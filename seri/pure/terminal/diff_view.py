"""What a write or an edit would change, shown before a person approves it.

An existing file gets a unified diff (three lines of context); a new file its size, its
line count and its first lines. Long diffs are cut with a note of how much was left out.
``line_changes`` gives the ``+N −M`` of a tool line.
"""

from __future__ import annotations

import difflib

from seri.pure.terminal.human_units import bytes_short, plural
from seri.pure.terminal.terminal_style import Span

MAX_DIFF_LINES = 80
# Lines of a diff shown under the tool line of a change no one was asked about.
PREVIEW_LINES = 12
NEW_FILE_HEAD_LINES = 12
# Above this many lines a side, difflib's matching gets slow; the counts are estimated.
MAX_DIFF_INPUT_LINES = 20_000


def _lines(text: str) -> list[str]:
    return text.splitlines()


def diff_spans(path: str, before: str | None, after: str) -> list[Span]:
    """The change to ``path`` as styled lines, each ending in a newline."""
    if before is None:
        return _new_file(path, after)
    if before == after:
        return [("notice", f"{path}: no change\n")]
    old, new = _lines(before), _lines(after)
    if max(len(old), len(new)) > MAX_DIFF_INPUT_LINES:
        return [("notice", f"{path}: {len(old)} → {len(new)} lines (too long to diff here)\n")]
    diff = list(difflib.unified_diff(old, new, f"a/{path}", f"b/{path}", n=3, lineterm=""))
    spans: list[Span] = [(_diff_style(line), line + "\n") for line in diff[:MAX_DIFF_LINES]]
    if len(diff) > MAX_DIFF_LINES:
        spans.append(("notice", f"… {plural(len(diff) - MAX_DIFF_LINES, 'more diff line')}\n"))
    if before.endswith("\n") != after.endswith("\n"):
        spans.append(("notice", "(the newline at the end of the file changes)\n"))
    return spans


def collapsed(spans: list[Span], keep: int = PREVIEW_LINES) -> list[Span]:
    """The first ``keep`` lines of a diff, and a note of how many more ``/diff`` shows
    (a change made under an "always" rule, shown under its tool line)."""
    if len(spans) <= keep + 1:
        return spans
    hidden = sum(1 for style, _ in spans[keep:] if style != "notice") or len(spans) - keep
    more = f"… {plural(hidden, 'more diff line')} (/diff shows the session's changes)\n"
    return [*spans[:keep], ("notice", more)]


def _diff_style(line: str) -> str:
    if line.startswith(("+++", "---")):
        return "bold"
    if line.startswith("@@"):
        return "hunk"
    if line.startswith("+"):
        return "add"
    if line.startswith("-"):
        return "delete"
    return ""


def _new_file(path: str, text: str) -> list[Span]:
    lines = _lines(text)
    size = len(text.encode("utf-8", "surrogatepass"))
    summary = f"new file {path}: {bytes_short(size)}, {plural(len(lines), 'line')}\n"
    spans: list[Span] = [("bold", summary)]
    spans += [("add", f"+{line}\n") for line in lines[:NEW_FILE_HEAD_LINES]]
    if len(lines) > NEW_FILE_HEAD_LINES:
        spans.append(("notice", f"… {plural(len(lines) - NEW_FILE_HEAD_LINES, 'more line')}\n"))
    return spans


def line_changes(before: str | None, after: str) -> tuple[int, int]:
    """Lines added and removed between two versions of a file (a new file: all added)."""
    if before is None:
        return len(_lines(after)), 0
    old, new = _lines(before), _lines(after)
    if max(len(old), len(new)) > MAX_DIFF_INPUT_LINES:
        return max(0, len(new) - len(old)), max(0, len(old) - len(new))
    added = removed = 0
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag in ("replace", "delete"):
            removed += i2 - i1
        if tag in ("replace", "insert"):
            added += j2 - j1
    return added, removed
