"""The side-by-side first-byte benchmark's measuring parts (scripts/bench/first_byte.py),
against a real child process: it burns CPU, connects to the loopback server and sends a
request line, then would sleep; the bench notes the first byte, the CPU spent by then, and
stops it."""

from __future__ import annotations

import socket
import sys
import time
from pathlib import Path

from scripts.bench.first_byte import Contender, FirstByte, _floor, _once, ahead_of_every_peer

_CHILD = """
import socket, sys, time
spent = time.process_time() + float(sys.argv[2])
while time.process_time() < spent:
    pass
with socket.create_connection(("127.0.0.1", int(sys.argv[1]))) as out:
    out.sendall(b"POST /v1/chat/completions HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n")
    time.sleep(60)
"""
_ENV = {"PATH": "/usr/bin:/bin"}


def test_the_first_byte_and_the_cpu_by_then_and_the_program_stopped(tmp_path: Path) -> None:
    server = FirstByte()
    burn = 0.2
    argv = (sys.executable, "-c", _CHILD, str(server.port), str(burn))
    who = Contender("child", argv, _ENV, tmp_path)
    began = time.perf_counter()
    got = _once(who, server, timeout=30)
    took = time.perf_counter() - began
    server.close()
    assert not isinstance(got, str), got
    first, cpu = got
    assert burn <= cpu < burn + 1.0
    assert burn <= first < took
    assert took < 30  # stopped at its first byte, not left to sleep
    assert who.heads == {b"POST /v1/chat/completions HTTP/1.1"}


def test_a_program_that_sends_nothing_says_why_and_a_late_piece_is_not_taken(
    tmp_path: Path,
) -> None:
    server = FirstByte()
    # A connection from an earlier run whose bytes arrive during this one.
    earlier = socket.create_connection(("127.0.0.1", server.port))
    time.sleep(0.2)
    argv = (sys.executable, "-c", "import sys, time; time.sleep(0.3); sys.exit('no key given')")
    who = Contender("quitter", argv, _ENV, tmp_path)
    server.reset()  # what _once does first; the earlier connection belongs to the run before
    earlier.sendall(b"GET /late HTTP/1.1\r\n\r\n")
    got = _once(who, server, timeout=30)
    earlier.close()
    server.close()
    assert got == "no request reached the server (exit 1): no key given"


def test_the_libraries_floor_sends_a_chat_request_and_is_never_counted_as_a_peer(
    tmp_path: Path,
) -> None:
    server = FirstByte()
    floor = _floor(tmp_path, f"http://127.0.0.1:{server.port}")
    got = _once(floor, server, timeout=30)
    server.close()
    assert not isinstance(got, str), got
    assert floor.heads == {b"POST /v1/chat/completions HTTP/1.1"}
    # seri behind the floor alone, but ahead of the one peer: ahead of every peer.
    seri = Contender("seri", (), {}, tmp_path, first=[0.3])
    peer = Contender("peer", (), {}, tmp_path, first=[0.4])
    floor.first = [0.1]
    assert ahead_of_every_peer([seri, floor, peer]) is True
    peer.first = [0.2]
    assert ahead_of_every_peer([seri, floor, peer]) is False
