"""Reading one answer of the chat-completions API: an SSE stream, or a whole JSON body.

The bytes go to the pure SSE parser (``seri.pure.provider.sse``) and assembler
(``seri.pure.provider.stream_assembly``); what goes wrong is named by
``seri.pure.provider.provider_errors``. What this owns is the part only I/O can do: the watchdog
over the signs of life (``seri.pure.provider.answer_wait``: an event or a keep-alive comment must
come within the silence limit, and the attempt must end by its deadline, since a server dripping
bytes resets httpx's read timeout forever), keeping the connection once the stream has ended, and
reading no body past its limit. ``seri.io.provider.provider`` decides what an outcome means for a
retry.

Those pure modules are imported once there is an answer to read: the request goes out first
(``seri.io.provider.provider``).
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING

import httpx

from seri.pure.inputs import json_text
from seri.pure.inputs.bounded_input import (
    PROVIDER_ANSWER,
    PROVIDER_STREAM,
    BoundedInputError,
    message_too_big,
)
from seri.pure.provider.answer_wait import AnswerWait
from seri.pure.provider.provider_failure import ProviderFailure

if TYPE_CHECKING:
    from seri.pure.provider.sse import SSEDone, SSEEvent
    from seri.pure.provider.stream_assembly import StreamAssembler, StreamResult

# What is read of a stream after its end ([DONE]) so that its connection can be kept, as
# openai-python does; a server that sends more than this after the end loses the connection.
_AFTER_END_LIMIT = 64 * 1024
# ... and how long it is waited for: a server that holds the body open after [DONE] costs the
# connection, not the turn (the request's read timeout would let it hold the answer for minutes).
AFTER_END_SECONDS = 1.0

# What the server's events tell the client (progress, which server it is), as they arrive.
EventsNote = Callable[["list[SSEEvent | SSEDone]", AnswerWait, float], None]


def read_whole(
    response: httpx.Response, on_text: Callable[[str], None] | None
) -> StreamResult | ProviderFailure:
    """A 200 with a JSON body: a non-streaming request, or a server that ignored ``stream``."""
    from seri.pure.provider.provider_errors import malformed_response
    from seri.pure.provider.stream_assembly import assemble_completion

    try:
        parsed = json_text.loads_lenient_numbers(bounded_body(response))
    except BoundedInputError as exc:
        return malformed_response(f"a 200 answer with {exc.reason}")
    except ValueError:
        return malformed_response("a 200 answer whose body is neither SSE nor JSON")
    if not isinstance(parsed, Mapping):
        return malformed_response("a 200 answer whose JSON body is not an object")
    result = assemble_completion(parsed)
    if result.failure is not None and not _answered(result):
        # `{"error": {"code": 500, ...}}` with status 200: nothing was answered, so it is
        # retried (or refused) like the same status over HTTP.
        return result.failure
    if on_text is not None and result.message.text:
        on_text(result.message.text)
    return result


def read_stream(
    response: httpx.Response,
    wait: AnswerWait,
    on_text: Callable[[str], None] | None,
    on_reasoning: Callable[[str], None] | None,
    *,
    clock: Callable[[], float],
    said: Callable[[Exception], str],
    note_server: EventsNote,
) -> StreamResult | ProviderFailure:
    """The streamed answer, assembled; a failure instead when nothing of it arrived (so that
    sending the request again cannot repeat anything). ``said`` words a transport error
    (scrubbed of the key), ``note_server`` hears every batch of events with the time."""
    from seri.pure.provider.provider_errors import (
        connection_failure,
        malformed_response,
        stream_interrupted,
        stream_overdue,
        stream_stalled,
    )
    from seri.pure.provider.sse import SSEParser
    from seri.pure.provider.stream_assembly import StreamAssembler

    parser = SSEParser(PROVIDER_STREAM)
    assembler = StreamAssembler()
    failure: ProviderFailure | None = None
    ended = False
    after_end = 0
    cut_off: threading.Timer | None = None
    try:
        for chunk in response.iter_bytes():
            if cut_off is not None:  # the stream has finished
                # The rest of the body (the chunked end) is read so that the connection
                # is kept for the next call; it arrives with [DONE] or just after.
                after_end += len(chunk)
                if after_end > _AFTER_END_LIMIT:
                    break
                continue
            now = clock()
            comments = parser.comments
            events = parser.feed(chunk)
            _take_events(assembler, events, on_text, on_reasoning)
            if assembler.finished:
                cut_off = _hang_up_after(response, AFTER_END_SECONDS)
            if events or parser.comments != comments:
                wait.alive(now)
                note_server(events, wait, now)
            # Checked on every arrival: bytes that never complete an event (a drip)
            # keep the read timeout from ever firing.
            if not assembler.finished and wait.silent_too_long(now):
                failure = stream_stalled(wait.silence_limit())
                break
            if not assembler.finished and wait.overdue(now):
                failure = stream_overdue(wait.deadline)
                break
        else:
            ended = not assembler.finished
    except httpx.TimeoutException:
        if not assembler.finished:
            failure = stream_stalled(wait.silence_limit())
    except BoundedInputError as exc:
        # Over a limit: the rest of the stream is not read (a line that never ends would
        # grow for as long as the provider kept sending it), and it is not asked again.
        failure = malformed_response(f"a stream with {exc.reason}")
    except (httpx.TransportError, httpx.DecodingError) as exc:
        if not assembler.finished:
            failure = stream_interrupted(said(exc))
    finally:
        if cut_off is not None:
            cut_off.cancel()
    if ended:
        _take_events(assembler, parser.finish(), on_text, on_reasoning)
    nothing_arrived = assembler.data_events == 0 and not assembler.finished
    if nothing_arrived and (failure is None or failure.kind == "interrupted"):
        # Nothing of the answer arrived, so sending the request again cannot repeat anything.
        return connection_failure("the connection closed before the answer started")
    result = assembler.result(failure)
    if assembler.failed and not assembler.delivered and result.failure is not None:
        # An error as the first event (the status was already 200): nothing was shown or
        # acted on, so it is retried like the same status over HTTP.
        return result.failure
    return result


def _hang_up_after(response: httpx.Response, seconds: float) -> threading.Timer:
    """Shut the answer's connection down in ``seconds`` unless cancelled first: a read blocked
    on it then ends (the connection is dropped, not kept)."""

    def hang_up() -> None:
        stream = response.extensions.get("network_stream")
        sock = stream.get_extra_info("socket") if stream is not None else None
        if isinstance(sock, socket.socket):
            # Already closed: nothing is waiting on it.
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    timer = threading.Timer(seconds, hang_up)
    timer.daemon = True
    timer.start()
    return timer


def read_at_most(pieces: Iterator[bytes], limit: int) -> bytes:
    """The body's first ``limit`` bytes and a little more: what arrives past them is not read."""
    body = bytearray()
    for piece in pieces:
        body += piece
        if len(body) >= limit:
            break
    return bytes(body)


def bounded_body(response: httpx.Response) -> bytes:
    """A whole JSON answer, read no further than its limit (``BoundedInputError`` past it)."""
    body = read_at_most(response.iter_bytes(), PROVIDER_ANSWER.max_message_bytes + 1)
    if len(body) > PROVIDER_ANSWER.max_message_bytes:
        raise message_too_big(PROVIDER_ANSWER)
    return body


def _take_events(
    assembler: StreamAssembler,
    events: list[SSEEvent | SSEDone],
    on_text: Callable[[str], None] | None,
    on_reasoning: Callable[[str], None] | None,
) -> None:
    for event in events:
        delta = assembler.feed_event(event)
        if delta.reasoning and on_reasoning is not None:
            on_reasoning(delta.reasoning)
        if delta.text and on_text is not None:
            on_text(delta.text)


def _answered(result: StreamResult) -> bool:
    message = result.message
    return bool(message.text or message.reasoning or message.tool_calls)
