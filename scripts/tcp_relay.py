"""A loopback TCP relay in front of a server, for tests and benchmarks.

Each connection it accepts is piped both ways to the target port. ``wrap`` turns the accepted
socket into another first (a TLS server socket: the relay then terminates TLS in front of a
plain server); ``on_data`` sees every piece the client sends (the bench notes when a request's
first bytes arrive).
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Callable


class Relay:
    def __init__(
        self,
        target_port: int,
        *,
        wrap: Callable[[socket.socket], socket.socket] | None = None,
        on_data: Callable[[bytes], None] | None = None,
    ) -> None:
        self.target = target_port
        self.wrap = wrap
        self.on_data = on_data
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                raw, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._relay, args=(raw,), daemon=True).start()

    def _relay(self, raw: socket.socket) -> None:
        try:
            client = self.wrap(raw) if self.wrap is not None else raw
        except OSError:  # ssl.SSLError is one: a handshake that failed
            raw.close()
            return
        upstream = socket.create_connection(("127.0.0.1", self.target))
        threading.Thread(target=_pipe, args=(upstream, client, None), daemon=True).start()
        _pipe(client, upstream, self.on_data)

    def close(self) -> None:
        self.listener.close()


def _pipe(
    source: socket.socket, sink: socket.socket, on_data: Callable[[bytes], None] | None
) -> None:
    try:
        while data := source.recv(65536):
            if on_data is not None:
                on_data(data)
            sink.sendall(data)
    except OSError:
        pass
    finally:
        for end in (source, sink):
            with contextlib.suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)
            end.close()
