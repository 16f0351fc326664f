"""Orientation in the chat: the banner, the replayed last exchange, the status toolbar,
and the slash commands that answer "where am I": /status, /cost, /permissions, /last,
/model."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

from seri import __version__
from seri.pure.inputs.errors import EXIT_USAGE
from seri.pure.inputs.settings import DEFAULT_CONTEXT_WINDOW
from seri.pure.session.records import Message
from seri.pure.terminal.chat_status import (
    banner,
    cost_lines,
    cost_summary,
    last_exchange,
    short_path,
    status_lines,
)
from seri.pure.terminal.human_units import cost_text, tokens_short
from seri.pure.terminal.markdown_stream import render_markdown
from seri.pure.terminal.terminal_style import Span
from seri.pure.terminal.terminal_text import neutralise, one_line
from seri.pure.terminal.tool_lines import Mark, parsed_arguments, tool_line

if TYPE_CHECKING:
    from seri.io.permissions.session_rules import SessionRule
    from seri.runtime.terminal.chat_session import ChatSession

# How long the banner waits for the provider to name the window before it goes without.
BANNER_WAIT = 0.15
# ... when a session is resumed: its history is shown before the prompt anyway.
RESUME_BANNER_WAIT = 1.0
REPLAY_USER_LINES = 6
REPLAY_ANSWER_LINES = 30
# How much of the command or path a session rule was given for /permissions shows.
ORIGIN_SUBJECT_CHARS = 60


def banner_line(chat: ChatSession, wait: float = BANNER_WAIT) -> str:
    """What seri talks to, how much it holds, where, in which session (waiting up to
    ``wait`` s for the provider to name the window)."""
    session = chat.session
    return banner(
        version=__version__,
        model=session.settings.model,
        window=session.window_in_use(wait=wait),
        project=short_path(session.project, os.path.expanduser("~")),
        session=session.session_id,
        messages=len(session.conversation.history),
    )


def show_replay(chat: ChatSession) -> None:
    """On --continue/--resume: what was said last, so a person knows where they are."""
    screen = chat.view.screen
    exchange = last_exchange(chat.session.conversation.history)
    if exchange:
        screen.say_spans(replay_spans(exchange, screen.width(), chat.session.session_id))


def replay_spans(exchange: tuple[Message, ...], width: int, session_id: str) -> list[Span]:
    rule = "─" * min(width - 1, 60)
    spans: list[Span] = [("dim", f"── where you left off {rule[22:]}\n")]
    user_lines = exchange[0].text.splitlines() or [""]
    for index, text in enumerate(user_lines[:REPLAY_USER_LINES]):
        spans += [("user", "you› " if index == 0 else "     "), ("", text + "\n")]
    if len(user_lines) > REPLAY_USER_LINES:
        spans.append(("notice", f"     … {len(user_lines) - REPLAY_USER_LINES} more lines\n"))
    calls = {
        call.id: (call.name, parsed_arguments(call.arguments))
        for message in exchange
        for call in message.tool_calls
    }
    answer = ""
    for message in exchange[1:]:
        if message.role == "tool":
            name, arguments = calls.get(message.tool_call_id, (message.tool_name, {}))
            mark: Mark = "ok"
            if message.is_error:
                mark = "denied" if message.text.startswith("denied") else "error"
            detail = message.text if mark != "ok" else ""
            spans += tool_line(mark, name, arguments, detail=detail, width=width)
        elif message.role == "assistant" and message.text:
            answer = message.text
    if answer:
        lines = answer.rstrip("\n").split("\n")
        spans += render_markdown("\n".join(lines[:REPLAY_ANSWER_LINES]) + "\n")
        if len(lines) > REPLAY_ANSWER_LINES:
            more = len(lines) - REPLAY_ANSWER_LINES
            spans.append(("notice", f"… {more} more lines (seri sessions show {session_id[:8]})\n"))
    spans.append(("dim", rule + "\n"))
    return spans


def status_line(chat: ChatSession) -> str:
    """The toolbar under the prompt: model, how full the window is, what it cost so far."""
    session = chat.session
    window = session.window_in_use()
    parts = [session.settings.model]
    if window:
        parts.append(f"{100 * session.context_estimate() / window:.0f}% of {tokens_short(window)}")
    usage = chat.view.run_usage
    if usage.total_cost is not None:
        parts.append(cost_text(usage.total_cost))
    return " · ".join(parts)


def show_status(chat: ChatSession) -> int | None:
    session = chat.session
    recorded = session.session_usage()
    totals = recorded if recorded is not None else chat.view.run_usage
    policy = session.policy
    lines = status_lines(
        model=session.settings.model,
        window=session.window_in_use() or DEFAULT_CONTEXT_WINDOW,
        estimate=chat.session.context_estimate(),
        max_turns=session.max_turns,
        last_task_turns=session.last_task_turns,
        session=session.session_id,
        project=short_path(session.project, os.path.expanduser("~")),
        cost=cost_summary(totals) + ("" if recorded is not None else " (this run)"),
        rules=len(policy.allow) + len(policy.ask) + len(policy.deny),
    )
    chat.view.screen.say("\n".join(lines))
    return None


def show_cost(chat: ChatSession) -> int | None:
    lines = cost_lines(chat.view.run_usage, chat.session.session_usage())
    spent = chat.session.compaction_costs()
    if spent is not None:
        from seri.pure.terminal.chat_status import compaction_cost_line

        lines.append(compaction_cost_line(spent))
    chat.view.screen.say("\n".join(lines))
    return None


def show_permissions(chat: ChatSession) -> int | None:
    policy = chat.session.policy
    session = {stored.rule: stored for stored in chat.session.session_rules}
    allowed = set(chat.session.options.allow)
    lines = []
    for verdict, rules in (("deny", policy.deny), ("ask", policy.ask), ("allow", policy.allow)):
        for rule in rules:
            if rule.text in session:
                origin = _always_origin(session[rule.text], chat.session.started)
            elif rule.text in allowed:
                origin = "--allow"
            else:
                origin = "config.json"
            lines.append(f"{verdict:<6} {one_line(rule.text):<32} {one_line(origin)}")
    if not lines:
        lines.append("no rules: read_file, glob and grep run, everything else asks")
    else:
        lines.append("otherwise: read_file, glob and grep run, everything else asks")
    lines.append("protected paths (.git, the profile, shell rc files, ~/.ssh) are never written")
    chat.view.screen.say("\n".join(lines))
    return None


def show_mcp(chat: ChatSession) -> int | None:
    """/mcp: this chat's MCP servers, their state and how many tools each offers now."""
    lines = []
    for status in chat.session.mcp_statuses():
        line = f"{one_line(status.name):<16} {status.state:<10} {status.tools} tools"
        lines.append(f"{line}  {one_line(status.message)}" if status.message else line)
    lines.extend(
        f"{one_line(name):<16} {'not approved':<10} (seri mcp approve {one_line(name)}, then "
        "start seri again)"
        for name in chat.session.mcp_unapproved
    )
    chat.view.screen.say("\n".join(lines) if lines else "No MCP servers in this chat.")
    return None


def _always_origin(stored: SessionRule, run_started: float) -> str:
    """Where a session rule came from: the call it was given for, and when when that was in
    an earlier run of the session."""
    subject = " ".join(stored.subject.split())
    if len(subject) > ORIGIN_SUBJECT_CHARS:
        subject = subject[: ORIGIN_SUBJECT_CHARS - 1] + "…"
    origin = f"this session: you said always to {stored.tool} {subject}".rstrip()
    if stored.at < run_started:
        origin += time.strftime(" (%Y-%m-%d %H:%M)", time.localtime(stored.at))
    return neutralise(origin)


def show_last(chat: ChatSession, rest: str) -> int | None:
    """/last [N | #K]: the whole result of a tool call: the one whose output was last cut
    on the screen (the hint sat under it), else the last; N from the end, or number K."""
    outputs = chat.view.outputs
    word = rest.strip()
    if not outputs:
        chat.view.screen.say("no tool output to show yet")
        return None
    if word.startswith("#"):
        found = [o for o in outputs if str(o.number) == word[1:]]
        if not found:
            oldest = outputs[0].number
            chat.view.screen.say(
                f"no tool output {word} is kept (the last {len(outputs)}: #{oldest} on)"
            )
            return None
        output = found[0]
    elif not word:
        cut = [o for o in outputs if o.cut]
        output = cut[-1] if cut else outputs[-1]
    else:
        back = int(word) if word.isdigit() else 0
        if back < 1:
            chat.view.screen.say(f"/last takes a number of at least 1 or #N, not {rest!r}")
            return EXIT_USAGE
        if back > len(outputs):
            chat.view.screen.say(f"only {len(outputs)} tool results are kept")
            return None
        output = outputs[-back]
    title = f"── #{output.number} {output.title}\n"
    chat.view.screen.say_long([("bold", title), ("", output.text.rstrip("\n") + "\n")])
    return None


def show_diff(chat: ChatSession, rest: str) -> int | None:
    """/diff [PATH]: what this session changed in the project's files, as unified diffs:
    each file seri wrote, from before its first write in the session to what it is now."""
    from seri.io.tools import checkpoints
    from seri.pure.terminal.diff_view import diff_spans

    screen = chat.view.screen
    session_id = chat.session.session_id
    if not session_id:
        screen.say("no changes yet: this session has not started")
        return None
    first: dict[str, bytes | None] = {}
    for kept in checkpoints.checkpoints_since(chat.profile.store, session_id, 0):
        first.setdefault(kept.path, kept.content if kept.existed else None)
    wanted = rest.strip()
    spans: list[Span] = []
    for path, before in sorted(first.items()):
        if wanted and path != wanted:
            continue
        now = _text_now(chat.project, path)
        old = before.decode("utf-8", "replace") if before is not None else None
        if now is None:
            spans.append(("delete", f"{path}: deleted\n" if old is not None else ""))
        elif now != old:
            spans += diff_spans(path, old, now)
    if not spans:
        screen.say(
            f"no changes to {wanted} in this session" if wanted else "no changes in this session"
        )
        return None
    screen.say_long(spans)
    return None


def _text_now(project: str, path: str) -> str | None:
    try:
        return (Path(project) / path).read_bytes().decode("utf-8", "replace")
    except OSError:
        return None


MODELS_SHOWN = 30


def switch_model(chat: ChatSession, rest: str) -> int | None:
    """/model: the model in use and the ones the server lists; /model NAME: switch to NAME,
    which must be one of those (a typo is refused with the closest names)."""
    from seri.pure.provider.model_list import check_model

    name = rest.strip()
    session = chat.session
    listed = session.server_models()
    screen = chat.view.screen
    if not name:
        screen.say(f"model: {session.settings.model} (/model NAME switches; Tab completes it)")
        if listed:
            shown = ", ".join(listed[:MODELS_SHOWN])
            more = f" and {len(listed) - MODELS_SHOWN} more" if len(listed) > MODELS_SHOWN else ""
            screen.say(f"the server offers {len(listed)}: {shown}{more}", "notice")
        return None
    if any(char.isspace() for char in name):
        screen.say(f"/model takes one model id, not {name!r}")
        return EXIT_USAGE
    check = check_model(name, listed)
    if not check.known:
        hint = f"; did you mean {' or '.join(check.closest)}?" if check.closest else ""
        screen.say(
            f"seri: {name} is not among the {len(listed or ())} models the server lists{hint}"
            " (/model lists them); still on " + session.settings.model,
            "warning",
        )
        return None
    session.set_model(name)
    window = session.window_in_use(wait=BANNER_WAIT)
    size = f"{window:,} tokens" if window else "window not known yet"
    screen.say(f"model: {name} for the rest of this run of seri ({size})")
    return None
