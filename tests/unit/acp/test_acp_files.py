"""seri.runtime.acp.acp_files over a real Connection on pipes: a client that never answers a
file read fails the read in words after the timeout (the tool then fails; nothing reads the
disk instead)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from seri.io.tools.file_port import FilePortError
from seri.runtime.acp.acp_connection import Connection
from seri.runtime.acp.acp_files import ClientFiles


def test_a_client_that_does_not_answer_fails_the_read_after_the_timeout() -> None:
    to_seri_r, to_seri_w = os.pipe()
    from_seri_r, from_seri_w = os.pipe()
    with os.fdopen(to_seri_r, "rb") as incoming, os.fdopen(from_seri_w, "wb") as outgoing:
        conn = Connection(incoming, outgoing)
        conn.start(lambda params: None, lambda: None)
        files = ClientFiles(conn, "s1", reads=True, writes=True, timeout=0.3)
        started = time.monotonic()
        with pytest.raises(FilePortError, match=r"did not answer fs/read_text_file within 0\.3 s"):
            files.read_text(Path("/p/a.txt"))
        assert 0.3 <= time.monotonic() - started < 2
        asked = json.loads(os.read(from_seri_r, 4096).decode().splitlines()[0])
        assert asked["method"] == "fs/read_text_file"
        assert asked["params"] == {"sessionId": "s1", "path": "/p/a.txt"}
        os.close(to_seri_w)  # the client leaves: a read now says so at once
        time.sleep(0.1)
        with pytest.raises(FilePortError, match="went away"):
            files.write_text(Path("/p/a.txt"), "x")
    os.close(from_seri_r)
