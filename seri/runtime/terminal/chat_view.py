"""What a person sees of a running task: the answer as it streams, one line per tool call,
approvals, the spinner while seri waits, and notices such as a compaction.

The interpreter tells this view what happens (it is the ``Person`` port); the view decides
nothing about the task, it only shows it. Without a terminal only notices that matter to a
log (compaction) are written; the answer goes out as data, as before.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import attrs

from seri.io.terminal.terminal import Screen, Spinner
from seri.pure.agent.effects import Answer, AskPerson, ToolRun
from seri.pure.agent.usage_totals import UsageTotals
from seri.pure.compaction.tokens import CHARS_PER_TOKEN
from seri.pure.extensions.hook_points import HOOK_DENIAL
from seri.pure.session.records import ToolCall
from seri.pure.terminal.prose_wrap import ProseWrap
from seri.pure.terminal.terminal_style import Span
from seri.pure.terminal.terminal_text import neutralise
from seri.pure.terminal.tool_lines import (
    call_subject,
    exit_detail,
    output_tail,
    parsed_arguments,
    tool_line,
)
from seri.pure.tools.tool_specs import shown_as
from seri.pure.trajectories import event_record, events, history_events, tool_events
from seri.runtime.terminal.approval_view import FileReader, approval_spans, indented

if TYPE_CHECKING:
    from seri.runtime.terminal.answer_blocks import AnswerBlocks

# Asks the person one line at the terminal (the interactive loop provides it).
LineReader = Callable[[str], str]
KEEP_OUTPUTS = 20
LIVE_BYTES = 4096
APPROVAL_PROMPT = "  allow? [1] "


@attrs.frozen
class ToolOutput:
    """A finished call's full result, for /last."""

    title: str
    text: str
    # Its number in this chat (``/last #N``), and whether its tool line showed only a part.
    number: int = 0
    cut: bool = False


class ChatView:
    def __init__(self, screen: Screen, *, interactive: bool, had_recap: bool = False) -> None:
        self.screen = screen
        self.interactive = interactive
        self.shows_tools = interactive
        self.spinner = Spinner(screen)
        self.read_line: LineReader | None = None
        # The key that stopped the last task: Ctrl-C, or Esc (the interactive loop knows).
        self.stop_key: Callable[[], str] = _ctrl_c
        # How a file reads now (for a write's diff).
        self.read_file: FileReader = _no_file
        self.run_usage = UsageTotals()
        self.outputs: list[ToolOutput] = []
        self._numbered = 0
        # Calls a person was asked about: their diff was shown then, not again after.
        self._asked: set[str] = set()
        # Whether the session has a recap already: a compaction then updates it.
        self.had_recap = had_recap
        self._markdown: AnswerBlocks | None = None
        self._prose = ProseWrap()
        self._streamed_chars = 0
        self._answer_streamed = False
        # The tail of the running command's output (shown live), and how a secret is hidden.
        self._live = b""
        self.redact: Callable[[str], str] = _as_is
        # Tool calls of this run by id: (name, arguments), for lines about calls never run.
        self._calls: dict[str, tuple[str, Mapping[str, Any]]] = {}

    # -- the model -----------------------------------------------------------------------------

    def model_call_started(self, purpose: str) -> None:
        self._streamed_chars = 0
        if self.interactive:
            label = "writing the recap" if purpose == "summary" else "thinking"
            self.spinner.start(label, lambda: self._streamed_chars // CHARS_PER_TOKEN)

    def model_text(self, text: str) -> None:
        self._streamed_chars += len(text)
        self._answer_streamed = True
        screen = self.screen
        if not screen.out_tty:
            screen.write_out(text)
        elif screen.out_colour:
            if self._markdown is None:
                from seri.runtime.terminal.answer_blocks import AnswerBlocks

                self._markdown = AnswerBlocks(screen.width() - 1, screen.out_links)
            self._markdown.width = screen.width() - 1  # a resize: the next table fits it
            self._show_pieces(self._markdown.feed(text))
        else:
            screen.write_out(neutralise(text))

    def _show_pieces(self, pieces: list[tuple[str, Any]], *, ending: bool = False) -> None:
        """The rendered answer on the screen, its prose wrapped by words at the width the
        terminal has now (the terminal would cut a word at the edge and go on at column 0)."""
        width = self.screen.width()
        for kind, piece in pieces:
            if kind == "rich":
                self.screen.write_out(piece)  # rich's own styling of neutralised text
            elif piece:
                self.screen.answer_spans(self._prose.feed(piece, width))
        if ending:
            self.screen.answer_spans(self._prose.finish(width))

    def model_reasoning(self, text: str) -> None:
        self._streamed_chars += len(text)

    def model_call_finished(self) -> None:
        if self.screen.out_colour and self._markdown is not None:
            self._show_pieces(self._markdown.finish(), ending=True)
            self._markdown = None
        self.spinner.stop()
        if self.interactive:
            self.screen.fresh_line()

    def answer_was_streamed(self) -> bool:
        """Whether the last task's answer already reached the screen (then it is not repeated)."""
        streamed, self._answer_streamed = self._answer_streamed, False
        return streamed

    def show_answer(self, text: str) -> None:
        """A whole answer (``-p`` and scripted lines): data when piped, rendered on a terminal."""
        body = text.rstrip("\n") + "\n"
        if not self.screen.out_tty:
            self.screen.write_out(body)
        elif self.screen.out_colour:
            from seri.runtime.terminal.answer_blocks import AnswerBlocks

            blocks = AnswerBlocks(self.screen.width() - 1, self.screen.out_links)
            self._show_pieces([*blocks.feed(body), *blocks.finish()], ending=True)
        else:
            self.screen.write_out(neutralise(body))

    # -- tools ---------------------------------------------------------------------------------

    def tool_started(self, call: ToolCall, arguments: Mapping[str, Any]) -> None:
        self._live = b""
        if self.interactive:
            live = self._live_lines if shown_as(call.name) == "command" else None
            self.spinner.start(f"{call.name} {call_subject(arguments)}".strip(), live=live)

    def tool_started_plain(self, label: str) -> None:
        """A command a person runs (``!cmd``): the spinner and its live output."""
        self._live = b""
        self.spinner.start(label, live=self._live_lines)

    def command_output(self, chunk: bytes) -> None:
        """A piece of the running command's output (only its tail is kept, for the screen)."""
        self._live = (self._live + chunk)[-LIVE_BYTES:]

    def _live_lines(self, width: int) -> tuple[str, ...]:
        from seri.pure.terminal.tool_lines import live_lines

        return tuple(self.redact(line) for line in live_lines(self._live, width=width))

    def tool_finished(
        self,
        call: ToolCall,
        arguments: Mapping[str, Any],
        run: ToolRun,
        change: tuple[str | None, str | None] | None,
    ) -> None:
        self.spinner.stop()
        title = f"{call.name} {call_subject(arguments)}".strip()
        number = self._keep_output(title, run.text)
        if not self.interactive:
            return
        width = self.screen.width()
        if run.interrupted:
            spans = tool_line(
                "interrupted", call.name, arguments, detail="interrupted", width=width
            )
        elif run.is_error:
            detail = exit_detail(run.text) if shown_as(call.name) == "command" else run.text
            spans = tool_line("error", call.name, arguments, detail=detail or run.text, width=width)
        else:
            changes = None
            if change is not None and change[1] is not None:
                from seri.pure.terminal.diff_view import line_changes

                changes = line_changes(change[0], change[1])
            spans = tool_line("ok", call.name, arguments, changes=changes, width=width)
        if shown_as(call.name) == "command":
            tail = output_tail(run.text, width=width, last=f"/last #{number}")
            if tail and "/last #" in tail[0][1]:
                self.outputs[-1] = attrs.evolve(self.outputs[-1], cut=True)
            spans += tail
        spans += self._diff_after_rule(call, arguments, change)
        self.screen.say_spans(spans)

    def recorded(self, event: event_record.Event) -> None:
        """Events of the loop that leave no tool run behind: denials, rejections, compaction."""
        match event:
            case tool_events.ToolCallEvent(id=call_id, name=name, arguments=text):
                self._calls[call_id] = (name, parsed_arguments(text))
            case events.ModelCall(usage=usage) | events.SummaryCall(usage=usage):
                self.run_usage = self.run_usage.plus(UsageTotals.of_call(usage))
            case history_events.CompactionStart():
                self._compacting(event)
            case history_events.Compaction():
                self._compacted(event)
            case events.HookRun():
                from seri.pure.extensions.hook_decisions import (
                    hook_line,  # a session with hooks only
                )

                line = self.redact(hook_line(event, self.interactive))
                self.screen.say(neutralise(line), "notice")
            case tool_events.Denial() if not self.interactive:
                self._denied_headless(event)
            case _ if not self.interactive:
                return
            case tool_events.Denial():
                self._denied(event)
            case tool_events.ToolResult(id=call_id, error=str(error)):
                # Rejected before running: unknown tool, bad arguments, a cut stream.
                name, arguments = self._calls.get(call_id, ("tool", {}))
                width = self.screen.width()
                self.screen.say_spans(
                    tool_line("error", name, arguments, detail=error, width=width)
                )
            case tool_events.SessionRuleEvent(rules=rules):
                shown = ", ".join(rules)
                self.screen.say(f"  allowed for the rest of this session: {shown}", "notice")

    def _denied(self, denial: tool_events.Denial) -> None:
        _, arguments = self._calls.get(denial.id, ("", {}))
        if denial.by == "user":
            detail = denial.reason or "denied by user"
        elif denial.rule:
            detail = f"denied by rule {denial.rule}"
        else:
            detail = denial.reason or "denied"
        self.screen.say_spans(
            tool_line("denied", denial.name, arguments, detail=detail, width=self.screen.width())
        )

    def _denied_headless(self, denial: tool_events.Denial) -> None:
        """-p or piped lines: a denied call is said on stderr (the answer alone on stdout),
        with the --allow that would let it run when no deny rule refused it."""
        name, arguments = self._calls.get(denial.id, (denial.name, {}))
        subject = call_subject(arguments)
        call = f"{name}({subject})" if subject else name
        if denial.rule:
            line = f"{call} not run: denied by rule {denial.rule}"
        elif denial.reason.startswith(HOOK_DENIAL):
            line = f"{call} not run: denied by {denial.reason}"
        else:
            allow = _allow_hint(name, subject)
            line = f"{denial.reason or call + ' needs approval'}; --allow {allow} allows it"
        self.screen.say(neutralise(f"seri: {line}"))

    def _compacting(self, start: history_events.CompactionStart) -> None:
        """The contract: a compaction is said before the summarizer is called."""
        self.spinner.stop()
        self.screen.fresh_line()
        line = (
            f"seri: compacting ({start.trigger}): about {start.estimate_before:,} tokens of "
            f"the {start.context_window:,}-token window; {start.evicting} older messages go "
            "into a recap…"
        )
        self.screen.say(line, "notice" if self.interactive else "")

    def _compacted(self, compaction: history_events.Compaction) -> None:
        if compaction.still_too_big is not event_record.ABSENT:
            return  # not a success: the failure that follows says what happened, once
        before, after = compaction.estimate_before, compaction.estimate_after
        from seri.pure.terminal.chat_status import compaction_notice

        notice = compaction_notice(before, after, updated=self.had_recap)
        self.had_recap = True
        self.spinner.stop()
        self.screen.fresh_line()
        self.screen.say(f"seri: {notice}", "notice" if self.interactive else "")

    def _diff_after_rule(
        self,
        call: ToolCall,
        arguments: Mapping[str, Any],
        change: tuple[str | None, str | None] | None,
    ) -> list[Span]:
        """A change no one was asked about (an "always" rule, --allow): its diff, collapsed."""
        if change is None or change[1] is None or call.id in self._asked:
            return []
        from seri.pure.terminal.diff_view import collapsed, diff_spans

        path = call_subject(arguments) or "file"
        return indented(collapsed(diff_spans(path, change[0], change[1])))

    def _keep_output(self, title: str, text: str) -> int:
        self._numbered += 1
        self.outputs.append(ToolOutput(title, text, self._numbered))
        del self.outputs[:-KEEP_OUTPUTS]
        return self._numbered

    # -- asking --------------------------------------------------------------------------------

    def ask(self, effect: AskPerson) -> Answer:
        """Show what the call would do, then ask: yes, no (and why), or always."""
        self.spinner.stop()
        self._asked.add(effect.call.id)
        screen = self.screen
        screen.fresh_line()
        screen.say_spans(approval_spans(effect, self.read_file))
        if self.read_line is None:
            return Answer(False)
        from seri.pure.permissions.approval import menu, read_answer

        choices = menu(effect.offered)
        screen.say("  " + " · ".join(f"{n} {c}" for n, c in enumerate(choices, 1)), "notice")
        while (answer := read_answer(self.read_line(APPROVAL_PROMPT), effect.offered)) is None:
            last = len(choices)
            screen.say(
                f"  not a choice: a number 1-{last} (Enter is 1, yes), y or n,"
                f" or no and then what to do instead",
                "warning",
            )
        return answer

    def approve_server(self, name: str, review: str) -> bool:
        """Whether to start a project's MCP server not approved here (no one to ask: no)."""
        if self.read_line is None:
            return False
        self.notice(review)
        answer = self.read_line("  start it, now and in later chats here? [y/N] ")
        return answer.strip().lower() in ("y", "yes")

    def notice(self, text: str) -> None:
        self.spinner.stop()
        self.screen.fresh_line()
        self.screen.say(text, "notice")

    def close(self) -> None:
        self.spinner.stop()


def _allow_hint(name: str, subject: str) -> str:
    """The --allow argument for a call, quoted for a shell: the tool, or bash(<command>)."""
    import shlex

    return shlex.quote(f"{name}({subject})" if name == "bash" and subject else name)


def _as_is(text: str) -> str:
    return text


def _ctrl_c() -> str:
    return "Ctrl-C"


def _no_file(_: str) -> str | None:
    return None
