"""``!command`` at the chat's prompt: a shell command a person runs without the model.

It runs as the bash tool's commands do: in the project, under the same OS sandbox and with
the same environment (no API key, no secrets), and the permission rules still hold: a
command a deny rule covers is refused, naming the rule. (An ask rule is answered by the
typing: the person asked for it.) The output shows live while it runs, then whole (as
capped for the model); it is not sent to the model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from seri.runtime.terminal.chat_session import ChatSession
    from seri.runtime.terminal.slash_handlers import LineOutcome


def run_shell_line(chat: ChatSession, command: str) -> LineOutcome:
    from seri.pure.permissions.permissions import decide

    view, screen = chat.view, chat.view.screen
    if not command.strip():
        screen.say("! runs a shell command in the project: !git status")
        return None
    verdict = decide(chat.session.policy, "bash", {"command": command}, project=chat.project)
    if verdict.action == "deny":
        why = f"rule {verdict.rule}" if verdict.rule else verdict.reason
        screen.say(f"seri: not run: denied by {why}", "warning")
        return None
    view.tool_started_plain(f"$ {' '.join(command.split())}")
    try:
        output = chat.session.shell_command(command, on_output=view.command_output)
    finally:
        view.close()
    screen.say(f"$ {command}", "bold")
    screen.say(output.rstrip("\n"))
    return None
