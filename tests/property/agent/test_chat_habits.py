"""`@path` mentions and `/model` names: what is attached, what is refused."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from seri.pure.agent.attachments import Attachment, mentioned_paths, with_attachments
from seri.pure.provider.model_list import check_model, listed_model_ids

PATHS = st.from_regex(r"[a-z][a-z0-9_/.-]{0,12}[a-z0-9]", fullmatch=True)
WORDS = st.lists(st.from_regex(r"[a-zA-Z,.?]{1,8}", fullmatch=True), max_size=5)


@given(WORDS, PATHS, WORDS)
def test_a_mention_anywhere_is_found_and_the_message_is_kept_as_typed(
    before: list[str], path: str, after: list[str]
) -> None:
    message = " ".join([*before, f"@{path}", *after])
    assert mentioned_paths(message) == (path.rstrip(".,;:!?)]}'\""),)
    attached = with_attachments(message, (Attachment(path, "x\n"),))
    assert attached.startswith(message + "\n\n")
    assert attached.endswith(f'<file path="{path}">\nx\n</file>')


def test_an_address_is_not_a_mention() -> None:
    assert mentioned_paths("mail ana@example.com about it") == ()
    assert with_attachments("no files", ()) == "no files"


@given(st.lists(st.from_regex(r"[a-z]{1,6}/[a-z0-9-]{1,10}", fullmatch=True), min_size=1))
def test_a_listed_model_is_known_and_a_typo_is_not(ids: list[str]) -> None:
    listed = listed_model_ids({"data": [{"id": i} for i in ids]})
    assert listed == tuple(sorted(set(ids)))
    assert all(check_model(i, listed).known for i in ids)
    typo = ids[0] + "x"
    if typo not in ids:
        assert not check_model(typo, listed).known
    assert check_model("anything", None).known  # a server that lists none decides itself
