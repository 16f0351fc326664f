"""The file tools through a file port (an editor's buffers, seri.io.tools.file_port): seri's own
rules refuse before the port is asked (outside the project, a protected path, over the size
cap, a directory), and what passes reads and writes the port, never the disk."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from seri.io.tools.file_port import AnsweredWithError, FilePortError, ReadOnce, held_bytes
from seri.io.tools.tools import ToolContext, run_tool
from seri.pure.tools.tool_specs import FILE_CAP_BYTES


class Buffers:
    """A port over a dict of texts; records every path it was asked about."""

    reads = True
    writes = True

    def __init__(self, texts: dict[str, str]) -> None:
        self.texts = texts
        self.asked: list[str] = []
        self.kinds: list[str] = []
        # A broken port fails every request (an editor that errs).
        self.broken = False

    def read_text(self, path: Path) -> str:
        self._asked("read", path)
        if str(path) not in self.texts:
            raise AnsweredWithError("no such buffer")  # how a client says so
        return self.texts[str(path)]

    def write_text(self, path: Path, text: str) -> None:
        self._asked("write", path)
        self.texts[str(path)] = text

    def _asked(self, kind: str, path: Path) -> None:
        self.asked.append(str(path))
        self.kinds.append(kind)
        if self.broken:
            raise FilePortError("the editor did not answer")


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / ".seri").mkdir(parents=True)
    (root / "a.txt").write_text("disk\n")
    return Path(os.path.realpath(root))


def test_rules_refuse_before_the_port_is_asked(ws: Path) -> None:
    port = Buffers({})
    ctx = ToolContext(ws, protected=(ws / ".seri",), files=port)
    refused = [
        run_tool("write_file", {"path": "../x.txt", "content": "x"}, ctx),
        run_tool("read_file", {"path": "../x.txt"}, ctx),
        run_tool("write_file", {"path": ".seri/config.json", "content": "{}"}, ctx),
        run_tool("edit", {"path": ".seri/c", "old_string": "a", "new_string": "b"}, ctx),
        run_tool("write_file", {"path": "big.txt", "content": "x" * (FILE_CAP_BYTES + 1)}, ctx),
        run_tool("read_file", {"path": "."}, ctx),
    ]
    assert all(r.is_error for r in refused), [r.text for r in refused]
    assert port.asked == []
    assert not (ws / "big.txt").exists() and not (ws.parent / "x.txt").exists()


def test_reads_and_writes_go_to_the_port_not_the_disk(ws: Path) -> None:
    port = Buffers({str(ws / "a.txt"): "buffer\n"})
    ctx = ToolContext(ws, files=port)
    assert "buffer" in run_tool("read_file", {"path": "a.txt"}, ctx).text
    edited = run_tool("edit", {"path": "a.txt", "old_string": "buffer", "new_string": "ed"}, ctx)
    assert not edited.is_error and port.texts[str(ws / "a.txt")] == "ed\n"
    assert (ws / "a.txt").read_text() == "disk\n"


def test_a_port_that_fails_fails_the_tool_and_the_disk_is_untouched(ws: Path) -> None:
    port = Buffers({})
    ctx = ToolContext(ws, files=port)
    read = run_tool("read_file", {"path": "a.txt"}, ctx)
    edit = run_tool("edit", {"path": "a.txt", "old_string": "disk", "new_string": "x"}, ctx)
    assert read.is_error and "the editor did not read a.txt: no such buffer" in read.text
    assert edit.is_error and "the editor did not read a.txt" in edit.text
    assert (ws / "a.txt").read_text() == "disk\n"


def test_read_once_asks_each_file_once_and_knows_what_it_wrote() -> None:
    a, b = Path("/p/a.txt"), Path("/p/b.txt")
    port = Buffers({str(a): "a\n"})
    once = ReadOnce(port)
    assert [once.read_text(a), once.read_text(a)] == ["a\n", "a\n"]
    once.write_text(a, "new\n")
    assert once.read_text(a) == "new\n"
    for _ in range(2):  # a failure is kept too: a silent editor is waited for once
        with pytest.raises(FilePortError, match="no such buffer"):
            once.read_text(b)
    assert port.asked == [str(a), str(a), str(b)]  # read, write, read: nothing more
    once.forget()
    assert once.read_text(a) == "new\n" and port.asked[-1] == str(a)


def test_read_once_asks_again_after_a_failed_write() -> None:
    a = Path("/p/a.txt")
    port = Buffers({str(a): "a\n"})
    once = ReadOnce(port)
    once.read_text(a)
    port.broken = True
    with pytest.raises(FilePortError):
        once.write_text(a, "lost\n")
    port.broken = False
    assert once.read_text(a) == "a\n"  # the editor's text, not what was not written
    assert port.asked == [str(a), str(a), str(a)]


# Steps on three files: ("read", i), ("write", i, text).
_steps = st.lists(
    st.one_of(
        st.tuples(st.just("read"), st.integers(0, 2)),
        st.tuples(st.just("write"), st.integers(0, 2), st.text(max_size=5)),
    ),
    max_size=30,
)


@given(
    start=st.dictionaries(st.integers(0, 2), st.text(max_size=5)),
    steps=_steps,
)
def test_read_once_answers_as_the_port_does_and_reads_each_file_at_most_once(
    start: dict[int, str], steps: list[tuple[Any, ...]]
) -> None:
    """With nobody else changing the buffers, every read through ReadOnce gives what the
    port itself would, and no file is read of the port twice."""
    paths = [Path(f"/p/{n}.txt") for n in range(3)]
    port = Buffers({str(paths[n]): text for n, text in start.items()})
    once = ReadOnce(port)
    for step in steps:
        path = paths[step[1]]
        if step[0] == "write":
            once.write_text(path, step[2])
            continue
        expected = port.texts.get(str(path))
        if expected is None:
            with pytest.raises(FilePortError):
                once.read_text(path)
        else:
            assert once.read_text(path) == expected
    reads = [p for p, kind in zip(port.asked, port.kinds, strict=True) if kind == "read"]
    assert len(reads) == len(set(reads))


def test_what_a_checkpoint_keeps_through_the_editor(ws: Path) -> None:
    """The editor's text of a file it alone holds (not "absent", which a rewind would
    delete); None only when neither the editor nor the disk has it."""
    only_here = ws / "draft.md"
    port = Buffers({str(only_here): "in the editor\n", str(ws / "a.txt"): "buffer\n"})
    assert held_bytes(only_here, FILE_CAP_BYTES, port) == b"in the editor\n"
    assert held_bytes(ws / "a.txt", FILE_CAP_BYTES, port) == b"buffer\n"
    assert held_bytes(ws / "new.md", FILE_CAP_BYTES, port) is None
    assert held_bytes(ws / "new.md", FILE_CAP_BYTES, None) is None
    with pytest.raises(OSError, match="too large"):
        held_bytes(only_here, 3, port)


def test_a_checkpoint_the_editor_cannot_give_stops_the_write(ws: Path) -> None:
    """On the disk but the editor answers with an error, or an editor that does not answer
    at all: an OSError (the write is not run), never the disk's bytes or "absent"."""
    refusing = Buffers({})
    with pytest.raises(OSError, match="the editor did not read it: no such buffer"):
        held_bytes(ws / "a.txt", FILE_CAP_BYTES, refusing)
    silent = Buffers({})
    silent.broken = True
    for path in (ws / "a.txt", ws / "new.md"):
        with pytest.raises(OSError, match="did not answer"):
            held_bytes(path, FILE_CAP_BYTES, silent)
    with pytest.raises(IsADirectoryError):
        held_bytes(ws / ".seri", FILE_CAP_BYTES, refusing)  # the disk says what it is
    assert refusing.asked == [str(ws / "a.txt")]
