"""Images and files of the older release's messages become placeholders that keep their media
type and size, never their data (seri.pure.session.legacy_media)."""

from __future__ import annotations

import base64

from hypothesis import given
from hypothesis import strategies as st

from seri.pure.session.legacy_media import base64_size, content_output_text, placeholder

kinds = st.sampled_from(["image", "image-data", "file", "file-data", "media"])
media = st.sampled_from(["image/png", "image/jpeg", "application/pdf", ""])


@given(st.binary(max_size=3000), st.booleans())
def test_the_size_is_what_the_base64_decodes_to(data: bytes, as_url: bool) -> None:
    text = base64.b64encode(data).decode()
    if as_url:
        text = f"data:image/png;base64,{text}"
    assert base64_size(text) == (len(data) if data else None)


@given(st.text(max_size=50))
def test_any_text_has_a_size_only_if_it_decodes(text: str) -> None:
    size = base64_size(text)
    if size is not None:
        assert len(base64.b64decode("".join(text.split()), altchars=b"-_")) == size


@given(kinds, media, st.binary(min_size=12, max_size=2000))
def test_a_placeholder_keeps_type_and_size_never_the_data(
    kind: str, media_type: str, data: bytes
) -> None:
    encoded = base64.b64encode(data).decode()
    part = {"type": kind, "mediaType": media_type, "data": encoded, "image": encoded}
    text = placeholder(part)
    assert encoded not in text and "\n" not in text
    assert f"{len(data):,} bytes" in text and media_type in text
    warnings: list[str] = []
    output = content_output_text("f:3", [{"type": "text", "text": "before"}, part], warnings)
    assert output.splitlines() == ["before", text] and len(warnings) == 1
