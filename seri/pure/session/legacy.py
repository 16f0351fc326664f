"""Reading the older release's ``sessions/<id>.jsonl`` files into our records.

Line 1 is a header (``id``, ``cwd``, ``systemPrompt``, ...); every later line is
one AI SDK ModelMessage. Policy, so that every imported session yields a valid
request:

- a torn last line (a killed writer) is dropped with a warning;
- a bad line anywhere else rejects the whole file (it is corruption);
- blank lines, a UTF-8 BOM and CRLF endings are tolerated; unknown fields ignored;
- the header needs ``id`` and ``cwd``; ``systemPrompt`` and the rest are optional;
- lone UTF-16 surrogates (``"\\ud800"`` escapes, which no database can store
  as UTF-8) become U+FFFD, with a warning;
- an unanswered tool call gets a synthetic result, "result lost before import";
- a tool result that answers no pending call is dropped, and so is a second call
  with the same id in one message; every repair is listed with file and line.

What the older release's own code (lzvxck/seri-agent, TypeScript) really wrote, and how each
shape comes in:

- a denied or cancelled call's result is ``{"type": "execution-denied", "reason"?}``: an error
  result saying so, with the reason (never the text "null", which would tell the model the
  tool ran);
- ``{"type": "json", "value": ...}`` is often a bare string (taken as the text) or null;
- a tool-call ``input`` that is a string is the model's malformed JSON: kept as the call's raw
  arguments in the store, sent to providers as ``{}`` (``seri.pure.provider.wire``);
- image parts, in user content or in a tool result's ``content`` output, become a placeholder
  that keeps their media type and size, with a warning (``seri.pure.session.legacy_media``);
- a compaction recap is a user message starting ``[Compacted history``: imported as a recap;
- a header-only file (opened and quit, or ``/clear``) has nothing to import;
- a header ``id`` that is not a plain id (``$(touch /tmp/x)``, a newline, a quote) is never
  used as one: the session gets an id made from the file's name and that text, the same on
  every import, and the original is kept as its ``legacy_id`` tag (``imported_id``).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from typing import Any

import attrs

from seri.pure.inputs import json_text
from seri.pure.inputs.bounded_input import LEGACY_SESSION_FILE, BoundedInputError
from seri.pure.inputs.lone_surrogates import replace_lone_surrogates
from seri.pure.session.legacy_media import content_output_text, is_image, placeholder
from seri.pure.session.records import Message, MessageKind, ToolCall

LOST_RESULT = "result lost before import"
DENIED_RESULT = "denied: the older release did not run this tool call"
NO_OUTPUT = "(the tool returned nothing)"
RECAP_PREFIX = "[Compacted history"

# What a session id may be: what seri's own ids (32 hex digits) and the older release's file
# stems are made of. Anything else is data, never an id (shell completion, paths, prefixes).
PLAIN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
LEGACY_ID_TAG = "legacy_id"

# Only a \uD800-\uDFFF escape can put a lone surrogate into a decoded JSON string.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


@attrs.frozen
class LegacyHeader:
    id: str
    cwd: str
    system_prompt: str
    model: str
    permission_mode: str


@attrs.frozen
class LegacySession:
    header: LegacyHeader
    messages: tuple[Message, ...]
    warnings: tuple[str, ...]


class LegacyFileError(ValueError):
    """The file is rejected whole; the message names the file and line."""


def parse_legacy_file(name: str, data: bytes) -> LegacySession:
    """Parse a whole file's bytes. ``name`` is only used in messages."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    lines = data.split(b"\n")
    numbered = [(n, line.rstrip(b"\r")) for n, line in enumerate(lines, start=1)]
    numbered = [(n, line) for n, line in numbered if line.strip()]
    if not numbered:
        raise LegacyFileError(f"{name}: empty file, no header line")
    last_number = numbered[-1][0]
    warnings: list[str] = []
    values: list[tuple[int, Any]] = []
    for number, raw in numbered:
        try:
            value = json_text.loads_bounded(raw.decode("utf-8"), LEGACY_SESSION_FILE)
            cleaned = _scrub(value) if _SURROGATE_ESCAPE.search(raw) else value
        # ValueError covers bad JSON, bad UTF-8 and an integer of more than 4300
        # digits; RecursionError a nesting deeper than Python's stack.
        except (ValueError, RecursionError) as exc:
            if number == last_number and number != numbered[0][0]:
                warnings.append(f"{name}:{number}: torn last line dropped ({_reason(exc)})")
                continue
            raise LegacyFileError(f"{name}:{number}: not valid JSON ({_reason(exc)})") from exc
        if cleaned is not value:
            warnings.append(f"{name}:{number}: invalid unicode escapes replaced with U+FFFD")
        values.append((number, cleaned))
    header_number, header_value = values[0]
    header = _header(name, header_number, header_value)
    messages: list[Message] = []
    origins: list[int] = []
    for number, value in values[1:]:
        parsed = _messages(name, number, value, warnings)
        messages.extend(parsed)
        origins.extend([number] * len(parsed))
    if messages and messages[0].role == "system" and messages[0].text == header.system_prompt:
        messages, origins = messages[1:], origins[1:]
    repaired, repairs = _repair(messages, [f"{name}:{line}" for line in origins])
    return LegacySession(header, tuple(repaired), tuple(warnings) + repairs)


def is_plain_id(text: str) -> bool:
    return PLAIN_ID.fullmatch(text) is not None


def imported_id(file_name: str, header_id: str) -> str:
    """The id the session of ``file_name`` is stored under: its header's id when that is a
    plain id, else 32 hex digits of a digest of the file's name and that id (so importing the
    same file again finds the same id)."""
    if is_plain_id(header_id):
        return header_id
    digest = hashlib.sha256(f"legacy:{file_name}\0{header_id}".encode("utf-8", "surrogatepass"))
    return digest.hexdigest()[:32]


def _scrub(value: Any) -> Any:
    """The value with every lone surrogate replaced by U+FFFD (pairs are kept).

    Returns the very same object when there was nothing to replace.
    """
    if isinstance(value, str):
        return replace_lone_surrogates(value)
    if isinstance(value, list):
        items = [_scrub(item) for item in value]
        changed = any(new is not old for new, old in zip(items, value, strict=True))
        return items if changed else value
    if isinstance(value, dict):
        pairs = [(_scrub(key), _scrub(item)) for key, item in value.items()]
        changed = any(
            k is not old_k or v is not old_v
            for (k, v), (old_k, old_v) in zip(pairs, value.items(), strict=True)
        )
        return dict(pairs) if changed else value
    return value


def _reason(exc: Exception) -> str:
    if isinstance(exc, UnicodeDecodeError):
        return "invalid UTF-8"
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    if isinstance(exc, BoundedInputError):
        return exc.reason
    if isinstance(exc, json.JSONDecodeError):
        # Each line is one document: its own line number is always 1, the column tells.
        joiner = " " if exc.msg.endswith(" at") else " at "
        return f"{exc.msg}{joiner}column {exc.colno}"
    return str(exc).split(":")[0]


def _header(name: str, number: int, value: Any) -> LegacyHeader:
    if not isinstance(value, dict):
        raise LegacyFileError(f"{name}:{number}: the header is not a JSON object")
    for key in ("id", "cwd"):
        if not isinstance(value.get(key), str) or not value[key]:
            raise LegacyFileError(f"{name}:{number}: the header has no '{key}'")
    return LegacyHeader(
        id=value["id"],
        cwd=value["cwd"],
        system_prompt=_string(value.get("systemPrompt")),
        model=_string(value.get("model")),
        permission_mode=_string(value.get("permissionMode")),
    )


def _string(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _messages(name: str, number: int, value: Any, warnings: list[str]) -> list[Message]:
    where = f"{name}:{number}"
    if not isinstance(value, dict):
        raise LegacyFileError(f"{where}: a message must be a JSON object")
    role = value.get("role")
    content = value.get("content")
    if role in ("system", "user"):
        text = _text_of(where, content, warnings)
        kind: MessageKind = "recap" if role == "user" and text.startswith(RECAP_PREFIX) else ""
        return [Message(role=role, text=text, kind=kind)]
    if role == "assistant":
        return [_assistant(where, content)]
    if role == "tool":
        return _tool_results(where, content, warnings)
    raise LegacyFileError(f"{where}: unknown role {role!r}")


def _parts(where: str, content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list) and all(isinstance(part, dict) for part in content):
        return content
    raise LegacyFileError(f"{where}: 'content' must be text or a list of parts")


def _text_of(where: str, content: Any, warnings: list[str] | None = None) -> str:
    texts: list[str] = []
    for part in _parts(where, content):
        kind = part.get("type")
        if kind == "text" and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif is_image(part):
            texts.append(placeholder(part))
            if warnings is not None:
                warnings.append(f"{where}: an image part was replaced by a placeholder")
    return "".join(texts)


def _assistant(where: str, content: Any) -> Message:
    text: list[str] = []
    reasoning: list[str] = []
    calls: list[ToolCall] = []
    for part in _parts(where, content):
        kind = part.get("type")
        if kind == "text" and isinstance(part.get("text"), str):
            text.append(part["text"])
        elif kind == "reasoning" and isinstance(part.get("text"), str):
            reasoning.append(part["text"])
        elif kind == "tool-call":
            call_id, tool = part.get("toolCallId"), part.get("toolName")
            if not (isinstance(call_id, str) and call_id and isinstance(tool, str) and tool):
                raise LegacyFileError(f"{where}: a tool-call part needs toolCallId and toolName")
            calls.append(ToolCall(call_id, tool, _arguments(part.get("input", {}))))
    return Message(
        role="assistant", text="".join(text), reasoning="".join(reasoning), tool_calls=tuple(calls)
    )


def _arguments(value: Any) -> str:
    """A tool call's input as arguments text. A string is what the model sent when it was not
    valid JSON (the AI SDK keeps it raw): kept as it is, unless it is JSON text after all."""
    if isinstance(value, str):
        try:
            parsed = json_text.loads(value)
        except ValueError:
            return value
        return json.dumps(parsed, ensure_ascii=False) if isinstance(parsed, dict) else value
    return json.dumps(value, ensure_ascii=False)


def _tool_results(where: str, content: Any, warnings: list[str]) -> list[Message]:
    results: list[Message] = []
    for part in _parts(where, content):
        if part.get("type") != "tool-result":
            continue
        call_id = part.get("toolCallId")
        if not isinstance(call_id, str) or not call_id:
            raise LegacyFileError(f"{where}: a tool-result part needs toolCallId")
        text, is_error = _output_text(where, part.get("output"), warnings)
        results.append(
            Message(
                role="tool",
                text=text,
                tool_call_id=call_id,
                tool_name=_string(part.get("toolName")),
                is_error=is_error,
            )
        )
    return results


def _output_text(where: str, output: Any, warnings: list[str]) -> tuple[str, bool]:
    if not isinstance(output, dict):
        return json.dumps(output, ensure_ascii=False), False
    kind = output.get("type")
    if kind == "execution-denied":
        reason = output.get("reason")
        return (
            f"{DENIED_RESULT}: {reason}" if isinstance(reason, str) and reason else (DENIED_RESULT)
        ), True
    value = output.get("value")
    is_error = kind in ("error-text", "error-json")
    if kind in ("text", "error-text", "json") and isinstance(value, str):
        return value, is_error
    if value is None and kind in ("json", "text"):
        return NO_OUTPUT, False
    if kind == "content":
        return content_output_text(where, value, warnings), False
    return json.dumps(value, ensure_ascii=False), is_error


def _repair(
    messages: Sequence[Message], where: Sequence[str]
) -> tuple[list[Message], tuple[str, ...]]:
    """``where[i]`` names message i (file and line) in the repairs listed."""
    repaired: list[Message] = []
    repairs: list[str] = []
    pending: dict[str, ToolCall] = {}
    called_at = ""

    def close_pending() -> None:
        for call in pending.values():
            repaired.append(
                Message(
                    role="tool",
                    text=LOST_RESULT,
                    tool_call_id=call.id,
                    tool_name=call.name,
                    is_error=True,
                    kind="synthetic",
                )
            )
            repairs.append(
                f"{called_at}: tool call {call.id} ({call.name}) had no result: {LOST_RESULT}"
            )
        pending.clear()

    for original, place in zip(messages, where, strict=True):
        if original.role == "tool":
            answered = pending.pop(original.tool_call_id, None)
            if answered is None:
                repairs.append(
                    f"{place}: dropped a tool result for unknown call {original.tool_call_id}"
                )
            elif original.tool_name:
                repaired.append(original)
            else:
                repaired.append(attrs.evolve(original, tool_name=answered.name))
            continue
        close_pending()
        calls: dict[str, ToolCall] = {}
        for call in original.tool_calls:
            if call.id in calls:
                repairs.append(f"{place}: dropped a second tool call with id {call.id}")
            else:
                calls[call.id] = call
        if len(calls) == len(original.tool_calls):
            repaired.append(original)
        else:
            repaired.append(attrs.evolve(original, tool_calls=tuple(calls.values())))
        pending, called_at = calls, place
    close_pending()
    return repaired, tuple(repairs)
