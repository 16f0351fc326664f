"""Keys pressed while a task runs: Esc is taken out, everything else kept in order."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from seri.pure.terminal.busy_keys import ESC, PASTE_END, PASTE_START, KeysSoFar, scan_burst

# Typed keys: letters, Enter, arrows (ESC [ A), Alt-Enter (ESC CR); never a lone ESC.
typed = st.lists(st.sampled_from([b"a", b"b", b"\r", b"\x1b[A", b"\x1b\r", b"\x7f"])).map(b"".join)
pasted = st.binary(max_size=40).map(lambda b: b.replace(b"\x1b[201~", b""))


def scan_all(bursts: list[bytes]) -> tuple[bytes, int]:
    state, kept, escapes = KeysSoFar(), b"", 0
    for burst in bursts:
        scanned = scan_burst(state, burst)
        state, kept, escapes = scanned.state, kept + scanned.kept, escapes + scanned.escapes
    return kept + state.tail, escapes


@given(typed, pasted, typed)
def test_nothing_typed_or_pasted_is_lost_and_a_paste_never_stops_the_task(
    before: bytes, paste: bytes, after: bytes
) -> None:
    keys = before + PASTE_START + paste + PASTE_END + after
    assert scan_all([keys]) == (keys, 0)


@given(typed, pasted, typed, st.lists(st.integers(min_value=1, max_value=60), max_size=6))
def test_however_the_terminal_cuts_a_paste_into_bursts_it_is_read_the_same(
    before: bytes, paste: bytes, after: bytes, cuts: list[int]
) -> None:
    """Cut anywhere inside the paste (a slow terminal), the paste is still kept whole."""
    inner = PASTE_START + paste + PASTE_END
    # Not right after the start marker's ESC: a bare ESC ending a burst is the Esc key.
    points = sorted({min(c, len(inner) - 1) for c in cuts} - {1})
    pieces = [inner[a:b] for a, b in zip([0, *points], [*points, len(inner)], strict=True)]
    kept, escapes = scan_all([before, *pieces, after])
    assert (kept, escapes) == (before + inner + after, 0)


@given(typed, typed)
def test_a_lone_esc_stops_the_task_and_is_not_kept(before: bytes, after: bytes) -> None:
    assert scan_all([before + ESC, after]) == (before + after, 1)
    assert scan_all([before + ESC + ESC]) == (before, 2)
