"""Whether a command line is text seri can take: checked before anything else runs.

Its own module, with nothing but the standard library, because every command (`seri
--version` and `seri sessions` too) pays for what this imports.
"""

from __future__ import annotations

from collections.abc import Sequence


def undecodable_argument(argv: Sequence[str]) -> str:
    """Why a command line whose arguments are not all UTF-8 text is refused, or "".

    Python hands bytes that are not UTF-8 over as lone surrogates (``\\udcff`` for ``0xff``).
    seri takes no file names on its command line, only ids, numbers and text (a prompt, a
    pin, a search): none can be stored, matched or sent as such, so the command is refused
    naming the argument (its bytes shown escaped) instead of failing deep inside.
    """
    for position, arg in enumerate(argv, start=1):
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            raw = arg.encode("utf-8", "surrogateescape") if _escaped_bytes(arg) else None
            shown = repr(raw)[1:] if raw is not None else ascii(arg)
            return (
                f"argument {position} ({shown}) is not UTF-8 text; seri reads its command "
                "line as UTF-8: check the encoding of the terminal or script that wrote it "
                "(e.g. `iconv -f latin1 -t utf-8`)"
            )
    return ""


def _escaped_bytes(arg: str) -> bool:
    """Whether every surrogate in ``arg`` is one Python made from a byte (U+DC80-U+DCFF)."""
    return all(not 0xD800 <= ord(c) <= 0xDFFF or 0xDC80 <= ord(c) <= 0xDCFF for c in arg)
