"""How long seri waits on a model server that has not finished answering: what counts as life,
and how long a server on this machine (or this network) may take to read a long prompt.

A provider in the cloud reads a prompt of any size in seconds. A local server on a CPU does
not: llama.cpp was measured reading 2,048 tokens of a 2,641-token prompt in 153 s (~13 tokens
a second), and it sends no content while it reads. What it does send is a sign of life: an SSE
comment (``:``) every 30 s by default (``--sse-ping-interval``), and, when the request asks
with ``return_progress``, a ``prompt_progress`` chunk after every batch it reads. So:

* every complete SSE event, a comment included, is life: the silence limit (``idle``, 90 s by
  default) is counted from the last one;
* a local server's attempt may last its whole-request deadline plus the time its prompt
  could take at ``LOCAL_PROMPT_TOKENS_PER_SECOND`` (counted from the body's bytes, a generous
  over-estimate of its tokens); a progress chunk replaces that estimate by the server's own
  count and pace;
* until a local server has sent anything at all (some answer their headers only once the
  prompt is read), the silence limit grows by the same prompt allowance.

Nothing here waits longer than the deadline: a server that only ever sends comments is ended
there, as before.
"""

from __future__ import annotations

import attrs

from seri.pure.inputs import json_text
from seri.pure.provider.local_hosts import is_loopback, normal_host

# The slowest prompt reading seri plans for on a local server (tokens a second): under the
# ~13 a second measured on a CPU above, so a prompt read at that pace is never cut short.
LOCAL_PROMPT_TOKENS_PER_SECOND = 10.0
# Bytes of request body per token counted: JSON and prose run 3-4 bytes a token, so 3
# over-counts tokens for most bodies, which only lengthens the wait.
BODY_BYTES_PER_TOKEN = 3
# How many times the pace seen so far the rest of a prompt may take (the next batch may be
# slower than the last: a longer context costs more per token).
PACE_SLACK = 3.0

# Host names of machines on the person's own network.
_LOCAL_NAMES = frozenset({"host.docker.internal", "host.containers.internal"})


@attrs.frozen
class PromptProgress:
    """llama.cpp's ``prompt_progress``: of ``total`` prompt tokens, ``processed`` are read
    (``cache`` of them were already in its cache)."""

    total: int
    processed: int
    cache: int = 0

    @property
    def remaining(self) -> int:
        return max(0, self.total - self.processed)


def is_local_server(base_url: str) -> bool:
    """The server runs on this machine or a private network (llama.cpp, Ollama, vLLM at
    home): loopback, private (RFC 1918, IPv6 unique-local, 0.0.0.0) and link-local
    addresses, ``*.local``. Such a server is given time to read a long prompt, and needs no
    API key."""
    import ipaddress

    host = url_host(base_url)
    if not host:
        return False
    if is_loopback(host) or host in _LOCAL_NAMES or host.endswith(".local"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_private or address.is_link_local


def url_host(url: str) -> str:
    """The host of ``scheme://[user@]host[:port]/path``, lower case, without brackets or a
    final dot; "" when there is none (urllib is not pure here)."""
    _scheme, found, rest = url.strip().partition("://")
    if not found:
        return ""
    authority = rest.split("/", 1)[0].split("?", 1)[0].rpartition("@")[2]
    if authority.startswith("["):
        return normal_host(authority[1:].partition("]")[0])
    return normal_host(authority.partition(":")[0])


def prompt_seconds(body_bytes: int) -> float:
    """How long a local server may take to read a prompt of this many request bytes."""
    tokens = max(0, body_bytes) / BODY_BYTES_PER_TOKEN
    return tokens / LOCAL_PROMPT_TOKENS_PER_SECOND


def prompt_progress(data: str) -> PromptProgress | None:
    """The ``prompt_progress`` of a stream chunk's JSON text, if it carries one."""
    if "prompt_progress" not in data:
        return None
    try:
        chunk = json_text.loads_lenient_numbers(data)
    except ValueError:
        return None
    raw = chunk.get("prompt_progress") if isinstance(chunk, dict) else None
    if not isinstance(raw, dict):
        return None
    numbers = [raw.get(key, 0) for key in ("total", "processed", "cache")]
    if not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in numbers):
        return None
    return PromptProgress(total=numbers[0], processed=numbers[1], cache=numbers[2])


def speaks_llama_cpp(data: str) -> bool:
    """A chunk only llama.cpp's server writes: its ``timings`` (prompt and generation speed)
    ride on the last chunk of every answer. Such a server is asked for progress."""
    return '"timings"' in data and '"prompt_n"' in data


@attrs.define
class AnswerWait:
    """The limits of one attempt, as what has arrived so far moves them.

    ``idle`` is the silence allowed between signs of life and ``total`` the attempt's whole
    deadline, both from the person's settings; ``prompt`` is the extra time a local server may
    take to read the prompt (0 for a remote one). Times are seconds on the caller's clock.
    """

    idle: float
    total: float
    started: float
    prompt: float = 0.0
    last_life: float = 0.0
    heard: bool = False
    progress: PromptProgress | None = None
    progress_at: float = 0.0

    def __attrs_post_init__(self) -> None:
        self.last_life = self.started

    @property
    def first_wait(self) -> float:
        """The silence allowed before a local server has sent anything, headers included."""
        return self.idle + self.prompt

    def alive(self, now: float) -> None:
        """An SSE event or comment arrived."""
        self.heard = True
        self.last_life = now

    def progressed(self, progress: PromptProgress, now: float) -> None:
        """A progress chunk: the rest of the prompt is given time at the pace seen so far
        (or at the planned floor before a pace is known), never less than was planned."""
        previous, previous_at = self.progress, self.progress_at
        self.progress, self.progress_at = progress, now
        if self.prompt <= 0:
            return  # a remote server: its deadline stays the person's
        rest = progress.remaining / LOCAL_PROMPT_TOKENS_PER_SECOND
        if previous is not None and now > previous_at and progress.processed > previous.processed:
            pace = (progress.processed - previous.processed) / (now - previous_at)
            rest = PACE_SLACK * progress.remaining / pace
        self.prompt = max(self.prompt, (now - self.started) + rest)

    def silence_limit(self) -> float:
        return self.idle if self.heard else self.first_wait

    def silent_too_long(self, now: float) -> bool:
        return now - self.last_life > self.silence_limit()

    @property
    def deadline(self) -> float:
        return self.total + self.prompt

    def overdue(self, now: float) -> bool:
        return now - self.started > self.deadline
