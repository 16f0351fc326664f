"""Glob patterns as regular expressions, in the two flavours seri needs.

Path globs (the ``glob`` tool, file permission rules) treat ``/`` as special:
``*`` and ``?`` stay inside one path segment and ``**`` spans whole segments.
Text globs (``bash(git status*)`` rules) have no segments: ``*`` matches
anything, slashes and spaces included, because a command is not a path.

We translate ourselves rather than use ``fnmatch``, whose ``*`` crosses ``/``,
so that ``src/*.py`` does not quietly match ``src/deep/x.py``.
"""

from __future__ import annotations

import re
from functools import lru_cache


def glob_matches(pattern: str, text: str, *, paths: bool) -> bool:
    """Whether the whole of ``text`` matches ``pattern``."""
    return compile_glob(pattern, paths=paths).fullmatch(text) is not None


class GlobError(ValueError):
    """A glob that means nothing, such as the range ``[9-0]``."""


@lru_cache(maxsize=512)
def compile_glob(pattern: str, *, paths: bool) -> re.Pattern[str]:
    # DOTALL: a quoted argument in a command can hold a newline, and ``*`` must
    # still cover it, or a deny rule could be dodged with a multi-line string.
    try:
        return re.compile(_translate(pattern, paths=paths), re.DOTALL)
    except (re.error, RecursionError, OverflowError) as exc:
        reason = getattr(exc, "msg", None) or str(exc)
        raise GlobError(f"invalid glob pattern {pattern!r}: {reason}") from None


def _translate(pattern: str, *, paths: bool) -> str:
    out: list[str] = []
    i = 0
    n = len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            if paths and _is_double_star(pattern, i):
                if i + 2 < n:  # "**/": zero or more whole directories
                    out.append("(?:.*/)?")
                    i += 3
                else:  # trailing "**": everything below
                    out.append(".*")
                    i += 2
                continue
            while i < n and pattern[i] == "*":
                i += 1
            out.append("[^/]*" if paths else ".*")
            continue
        if c == "?":
            out.append("[^/]" if paths else ".")
        elif c == "[":
            cls, i = _char_class(pattern, i, paths=paths)
            out.append(cls)
            continue
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def _is_double_star(pattern: str, i: int) -> bool:
    """A ``**`` that is a whole segment: ``**``, ``a/**``, ``**/b``, ``a/**/b``."""
    if pattern[i : i + 2] != "**":
        return False
    starts_segment = i == 0 or pattern[i - 1] == "/"
    ends_segment = i + 2 == len(pattern) or pattern[i + 2] == "/"
    return starts_segment and ends_segment


def _char_class(pattern: str, i: int, *, paths: bool) -> tuple[str, int]:
    """Translate ``[...]`` starting at ``i``; a ``[`` with no ``]`` is literal."""
    j = i + 1
    negate = j < len(pattern) and pattern[j] in "!^"
    if negate:
        j += 1
    if j < len(pattern) and pattern[j] == "]":  # "[]x]" holds a literal "]"
        j += 1
    end = pattern.find("]", j)
    if end < 0:
        return re.escape("["), i + 1
    body = pattern[i + 1 + (1 if negate else 0) : end].replace("\\", "\\\\").replace("^", "\\^")
    if negate:
        # A negated class must not match "/" either, or "[!a]" would cross segments.
        return f"[^{body}/]" if paths else f"[^{body}]", end + 1
    return f"[{body}]", end + 1
