"""The pieces a spill file is paged in (review-1 N1): the marker's count and read_file's agree.

``pieces_before`` (pure: where a cut result's marker says to page on) and ``iter_pieces`` (what
read_file numbers) must number the same pieces, or the offset would point elsewhere.
"""

from __future__ import annotations

import io

from hypothesis import given
from hypothesis import strategies as st

from seri.io.tools.files import iter_pieces
from seri.pure.compaction.result_cap import PIECE_CHARS, pieces_before

runs = st.tuples(st.sampled_from(["a", "é", "\n", "\r", "😀"]), st.integers(1, 2 * PIECE_CHARS + 3))
texts = st.lists(runs, max_size=8).map(lambda rs: "".join(c * n for c, n in rs))


@given(texts, st.data())
def test_the_marker_offset_names_the_piece_that_holds_the_position(
    text: str, data: st.DataObject
) -> None:
    pieces = list(iter_pieces(io.BytesIO(text.encode("utf-8")), PIECE_CHARS))
    assert all(len(p) <= PIECE_CHARS for p in pieces)
    # Where each piece starts in the text.
    starts, position = [], 0
    for n, piece in enumerate(pieces):
        starts.append(position)
        position += len(piece)
        if position < len(text) and text[position] == "\n":
            position += 1
        elif n + 1 < len(pieces) and len(piece) < PIECE_CHARS:
            raise AssertionError("a short piece that does not end a line")
    assert position == len(text)
    if not text:
        return
    at = data.draw(st.integers(0, len(text) - 1))
    number = pieces_before(text, at)
    assert starts[number] <= at <= starts[number] + len(pieces[number])
