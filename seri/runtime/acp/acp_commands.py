"""The slash commands ``seri acp`` offers a client as ACP available commands (``/compact``,
``/pin``, ``/rewind``), and running one sent as a prompt: the controller does the work, the
client is told what was done as an agent message."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from seri.pure.acp.acp_wire import AcpError
from seri.pure.mcp import jsonrpc

if TYPE_CHECKING:
    from seri.runtime.acp.acp_front import AcpFront
    from seri.runtime.acp.acp_session import AcpSession


# The slash commands a client offers as ACP available commands.
COMMANDS = (
    ("compact", "compact the session now: older messages become a recap", "focus (optional)"),
    ("pin", "pin a note that every recap carries verbatim", "the note"),
    (
        "rewind",
        "put files and/or the conversation back to before user message N",
        "N [files|conversation|both] [--yes]",
    ),
)


def available_commands() -> dict[str, Any]:

    return {
        "sessionUpdate": "available_commands_update",
        "availableCommands": [
            {"name": name, "description": about, "input": {"hint": hint}}
            for name, about, hint in COMMANDS
        ],
    }


def slash_command(controller: AcpSession, front: AcpFront, text: str) -> dict[str, Any]:
    from seri.pure.acp import acp_updates

    name, _, rest = text[1:].partition(" ")
    if name == "compact":
        why_not = controller.compact(rest.strip())
        said = "compacted" if why_not is None else f"not compacted: {why_not.detail}"
    elif name == "pin":
        if not rest.strip():
            raise AcpError(jsonrpc.INVALID_PARAMS, "/pin needs the note to pin")
        said = f"pinned note {controller.pin(rest.strip())}"
    elif name == "rewind":
        said = _rewind(controller, rest.split())
    else:
        raise AcpError(
            jsonrpc.INVALID_PARAMS, f"no command /{name} here (try /compact, /pin, /rewind)"
        )
    front.update(acp_updates.chunk("agent_message_chunk", said))
    return {"stopReason": "end_turn"}


def _rewind(controller: AcpSession, words: list[str]) -> str:
    """/rewind N [files|conversation|both] [--yes]: without N, the points it can go back to."""
    yes = "--yes" in words
    words = [w for w in words if w != "--yes"]
    if not words:
        turns, _gone = controller.rewind_points()
        return "\n".join(f"{t.n}: {t.text[:80]}" for t in turns) or "nothing to rewind to"
    mode = words[1] if len(words) > 1 else "both"
    if not words[0].isdigit() or mode not in ("files", "conversation", "both"):
        raise AcpError(jsonrpc.INVALID_PARAMS, "/rewind N [files|conversation|both] [--yes]")
    done = controller.rewind(int(words[0]), mode, yes=yes)
    return "; ".join(done or ()) or "nothing was changed"
