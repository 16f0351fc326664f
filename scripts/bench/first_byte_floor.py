"""The floor under seri's first request byte: what Python and the design card's libraries cost
before any of seri's own code runs. `first_byte` runs this beside seri and the peers.

It does the least a session-keeping agent built on those libraries must do before its first
request: import httpx (without its command-line client, as seri does), attrs, apsw and
docopt-ng; read one usage line with docopt; write one row in an SQLite transaction; make an
httpx client with seri's settings for a loopback server and post one chat request. No
program built on CPython and these libraries reaches the first byte sooner, so seri's own
start is what lies between this line and seri's.

Usage: python -m scripts.bench.first_byte_floor BASE_URL DATABASE
"""

from __future__ import annotations

import sys

# As seri.commands.main does: httpx's package would import its CLI client (rich, pygments).
sys.modules["httpx._main"] = None  # type: ignore[assignment]

import apsw  # noqa: E402
import attrs  # noqa: E402
import docopt  # noqa: E402
import httpx  # noqa: E402

USAGE = "Usage: floor -p PROMPT"


@attrs.frozen
class Message:
    role: str
    content: str


def main(base_url: str, database: str) -> int:
    prompt = docopt.docopt(USAGE, ["-p", "say ok"])["PROMPT"]
    message = Message("user", prompt)
    connection = apsw.Connection(database)
    with connection:
        connection.execute("CREATE TABLE IF NOT EXISTS messages (role TEXT, content TEXT)")
        connection.execute("INSERT INTO messages VALUES (?, ?)", (message.role, message.content))
    client = httpx.Client(trust_env=True, verify=False, limits=httpx.Limits(keepalive_expiry=60))
    body = {"model": "fake/model", "stream": True, "messages": [attrs.asdict(message)]}
    client.post(f"{base_url}/chat/completions", json=body, timeout=30)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
