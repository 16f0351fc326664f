"""Session ids of imported files are plain ids, whatever the file's header said."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from seri.pure.session.legacy import PLAIN_ID, imported_id, is_plain_id

names = st.text(min_size=1, max_size=40)
header_ids = st.text(min_size=1, max_size=60) | st.from_regex(PLAIN_ID, fullmatch=True)


@given(names, header_ids)
def test_an_imported_id_is_plain_and_the_same_every_time(name: str, header_id: str) -> None:
    found = imported_id(name, header_id)
    assert is_plain_id(found)
    assert found == imported_id(name, header_id)
    assert (found == header_id) == is_plain_id(header_id)


@given(names, header_ids, header_ids)
def test_two_headers_of_one_file_get_their_own_ids(name: str, one: str, other: str) -> None:
    if one != other and not is_plain_id(one) and not is_plain_id(other):
        assert imported_id(name, one) != imported_id(name, other)
