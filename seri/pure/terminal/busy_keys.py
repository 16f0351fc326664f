"""Keys pressed while a task runs: which are Esc (stop the task), which wait for the prompt.

While a task runs seri reads the keyboard itself (see ``seri.io.terminal.busy_keys``): the terminal
delivers bursts of bytes, a burst ending after a short quiet gap. A lone Esc (an ESC byte
that nothing follows in its burst, or that another ESC follows) outside a bracketed paste
asks to stop the task; every other byte is kept, in order, for the next prompt, which reads
it as typed (a bracketed paste stays one paste there, an Enter sends what came before).

A burst may end in the middle of a paste's start or end marker (a slow terminal); that
tail is carried into the next burst, so the same bytes give the same answer however the
terminal cut them; the one exception is a burst that ends in a bare ESC outside a paste,
which is the Esc key (a terminal does not pause for 30 ms after the first byte of a marker).
"""

from __future__ import annotations

import attrs

ESC = b"\x1b"
PASTE_START = b"\x1b[200~"
PASTE_END = b"\x1b[201~"


@attrs.frozen
class KeysSoFar:
    """Where the scan stands between bursts."""

    in_paste: bool = False
    # The start of a paste marker the last burst ended with, to be completed by the next.
    tail: bytes = b""


@attrs.frozen
class ScannedBurst:
    kept: bytes
    escapes: int
    state: KeysSoFar


def scan_burst(state: KeysSoFar, burst: bytes) -> ScannedBurst:
    """The burst's lone Escs counted and taken out; everything else kept as it came."""
    data = state.tail + burst
    kept = bytearray()
    escapes = 0
    in_paste = state.in_paste
    i = 0
    while i < len(data):
        marker = PASTE_END if in_paste else PASTE_START
        if data.startswith(marker, i):
            kept += marker
            in_paste = not in_paste
            i += len(marker)
            continue
        rest = data[i:]
        if (len(rest) > 1 or in_paste) and marker.startswith(rest):
            # A marker cut by the end of the burst: finish it with the next one.
            return ScannedBurst(bytes(kept), escapes, KeysSoFar(in_paste, bytes(rest)))
        byte = data[i : i + 1]
        if byte == ESC and not in_paste and (i + 1 == len(data) or data[i + 1 : i + 2] == ESC):
            escapes += 1
        else:
            kept += byte
        i += 1
    return ScannedBurst(bytes(kept), escapes, KeysSoFar(in_paste, b""))
