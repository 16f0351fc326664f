"""Text that seri did not write, made safe to put on a terminal.

Whatever comes from the model, a tool, a file or the store may hold escape sequences:
``\\x1b[2J`` clears the screen, ``\\x1b]0;…\\x07`` retitles the window, ``\\x1b]52;…``
writes the clipboard, a bare ``\\r`` or backspace overwrites what was shown, and the
bidirectional overrides reorder a line (Trojan Source). ``neutralise`` turns every such
character into a visible stand-in, one character at a time, so text cut into stream chunks
anywhere comes out the same as when it arrives whole, and a second pass changes nothing.

Only the terminal gets this: ``--json`` output and the store keep the exact text.
"""

from __future__ import annotations

from seri.pure.inputs.lazy_pattern import LazyPattern

# C0 controls (but tab and newline) and DEL become their Unicode control pictures
# (ESC shows as ␛); a carriage return is dropped: it only ever moves the cursor back over
# text already shown (a CRLF file loses nothing, its newline stays).
_KEPT = {0x09, 0x0A}
_TABLE: dict[int, str] = {code: chr(0x2400 + code) for code in range(0x20) if code not in _KEPT}
_TABLE[0x0D] = ""
_TABLE[0x7F] = "\u2421"
# C1 controls: 0x9b is CSI on terminals that honour 8-bit controls.
_TABLE.update({code: f"\\x{code:02x}" for code in range(0x80, 0xA0)})
# Bidirectional embeddings, overrides and isolates.
_BIDI = (*range(0x202A, 0x202F), *range(0x2066, 0x206A))
_TABLE.update({code: f"<U+{code:04X}>" for code in _BIDI})

_SURROGATE = LazyPattern("[\ud800-\udfff]")


# Any character that neutralise would change: most text has none, and searching for one
# is many times faster than translating (a 1,000-row table has 7,000 cells). None of them
# is special inside a character class, so no escaping (and no `re` at import) is needed.
_UNSAFE = LazyPattern("[" + "".join(chr(code) for code in sorted(_TABLE)) + "\ud800-\udfff]")


# The ASCII characters neutralise keeps: deleting them from ASCII text leaves only what it
# would change, and bytes.translate does that several times faster than the search below.
_KEPT_ASCII = bytes([*range(0x20, 0x7F), *_KEPT])


def neutralise(text: str) -> str:
    """``text`` with every control character replaced by a visible, inert stand-in."""
    if text.isascii():
        if not text.encode("ascii").translate(None, _KEPT_ASCII):
            return text
    elif text.isprintable() or not _UNSAFE.search(text):
        # Every character neutralise changes is unprintable (a control, a format character,
        # a surrogate): printable text (a title cut with "…") needs no regex, nor `re`.
        return text
    safe = text.translate(_TABLE)
    if _SURROGATE.search(safe):
        # A lone surrogate cannot be encoded for the terminal at all.
        safe = _SURROGATE.sub("\ufffd", safe)
    return safe


# The bytes of UTF-8 text that may begin something neutralise changes: C0 controls but tab
# and newline, DEL, and the lead bytes of C1 controls (C2), of the bidirectional controls
# (E2) and of surrogates (ED). Deleting every other byte leaves these to look at.
_MAYBE_UNSAFE = bytes([*range(0x09), *range(0x0B, 0x20), 0x7F, 0xC2, 0xE2, 0xED])
_OTHER_BYTES = bytes(code for code in range(256) if code not in _MAYBE_UNSAFE)
_LEAD_BYTES = b"\xc2\xe2\xed"
# Lead bytes are looked at one by one while there is at most one in so many bytes (a cut
# part's "…"); text full of them (curly quotes, say) is left to the regex at once.
_BYTES_PER_LEAD = 256


def inert_utf8(text: str) -> bytes | None:
    """``text`` in UTF-8 when neutralise would leave it as it is, else None.

    For output written as bytes: the check runs on the encoding the output needs anyway,
    which is several times quicker than neutralise's regex over text that is not ASCII
    (every cut part ends in "…")."""
    data = text.encode("utf-8", "surrogatepass")
    suspects = data.translate(None, _OTHER_BYTES)
    if not suspects:
        return data
    if suspects.translate(None, _LEAD_BYTES) or len(suspects) > 64 + len(data) // _BYTES_PER_LEAD:
        # A control character, or too many lead bytes to look at one by one.
        return data if neutralise(text) == text else None
    for lead in set(suspects):
        start = data.find(lead)
        while start >= 0:
            if _changed_at(data, start):
                return None
            start = data.find(lead, start + 1)
    return data


def _changed_at(data: bytes, start: int) -> bool:
    """Whether the UTF-8 character at ``start`` (a C2, E2 or ED lead byte) is one neutralise
    changes: a C1 control, a bidirectional control, a surrogate."""
    lead, second = data[start], data[start + 1]
    if lead == 0xC2:
        return 0x80 <= second <= 0x9F
    if lead == 0xED:
        return second >= 0xA0
    # E2: every character from it has three bytes.
    third = data[start + 2]
    return (second == 0x80 and 0xAA <= third <= 0xAE) or (second == 0x81 and 0xA6 <= third <= 0xA9)


def one_line(text: str) -> str:
    """``text`` neutralised, and on one line: a newline shows as ␤ and a tab as a space, so
    that a stored name or note cannot start a line of its own (forge a table row, a numbered
    item, a prompt) wherever one line is expected."""
    return neutralise(text).replace("\n", "\u2424").replace("\t", " ")


def is_inert(text: str) -> bool:
    """Whether ``text`` holds nothing a terminal would act on (tab and newline aside)."""
    return neutralise(text) == text
