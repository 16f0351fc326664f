"""seri.runtime.session.rewind_files: a rewind through an editor's buffers (seri acp) reads
and writes the editor, stops in words when it fails, and sends bytes no buffer can hold to
the disk."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from seri.pure.inputs.errors import SeriError
from seri.runtime.session.rewind_files import held_now, put_back
from tests.unit.tools.test_file_port import Buffers


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return Path(os.path.realpath(tmp_path))


def test_a_checkpoint_goes_back_into_the_buffer_and_not_onto_the_disk(root: Path) -> None:
    port = Buffers({str(root / "a.md"): "seri's write\n"})
    put_back(root, "a.md", b"before\n", port, [])
    assert port.texts[str(root / "a.md")] == "before\n" and not (root / "a.md").exists()
    assert held_now(root, "a.md", port) == b"before\n"
    assert held_now(root, "gone.md", port) is None  # neither the editor nor the disk


def test_bytes_that_are_not_text_go_to_the_disk_without_asking_the_editor(root: Path) -> None:
    port = Buffers({})
    put_back(root, "logo.bin", b"\x89PNG\xff\x00", port, [])
    assert (root / "logo.bin").read_bytes() == b"\x89PNG\xff\x00" and port.asked == []


def test_an_editor_that_fails_stops_the_rewind_in_words(root: Path) -> None:
    port = Buffers({})
    port.broken = True
    with pytest.raises(SeriError, match=r"did not take b\.md back: .* before it: a\.md;"):
        put_back(root, "b.md", b"text\n", port, ["a.md"])
    with pytest.raises(SeriError, match=r"b\.md: the editor did not read it.*Nothing was"):
        held_now(root, "b.md", port)
    assert not (root / "b.md").exists()
