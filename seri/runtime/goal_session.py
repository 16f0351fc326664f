"""A chat's goal: set it (``--until``, ``/goal``), run its tasks through ``goal_loop`` with
the chat's own task runner, and its check through the chat's sandbox and permissions.

The sites that run a task (``-p``, a typed or piped line, a headless run) call
``run_toward_goal`` instead of ``ChatSession.run_task``: with no open goal it is that call.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from seri.io.goals import OPEN, StoredGoal, clear_goal, load_goal, note_goal, set_goal
from seri.pure.errors import EXIT_USAGE, SeriError
from seri.pure.goals import CheckOutcome, Goal, GoalLimits
from seri.pure.terminal_text import neutralise
from seri.pure.turn import EndStatus, TaskEnd
from seri.runtime.goal_loop import GoalPorts, run_goal

if TYPE_CHECKING:
    from seri.pure import events
    from seri.runtime.chat_session import ChatSession
    from seri.runtime.goal_loop import RunCheck


def check_allowed(chat: ChatSession, command: str) -> None:
    """Refuse a check command the policy denies (a deny rule, or a protected path its words
    name), as it would refuse bash running it. An ``ask`` is the person's own word here: they
    typed the command."""
    from seri.pure.permission_policy import PROTECTED_RULE
    from seri.pure.permissions import decide

    if not command.strip():
        raise SeriError("a goal needs a check command: --until CMD or /goal CMD")
    policy = attrs.evolve(chat.policy, project=chat.project)
    decision = decide(policy, "bash", {"command": command})
    if decision.action == "deny":
        rule = decision.rule or PROTECTED_RULE
        raise SeriError(
            f"the check `{command}` is denied by rule {rule}: {decision.reason}; a goal's "
            "check runs under the same rules as bash"
        )


def start_goal(chat: ChatSession, goal: Goal) -> None:
    """Keep ``goal`` with the session (creating it if this run has none yet): from now on
    every recap carries it, and every task is checked by it."""
    check_allowed(chat, goal.command)
    chat.ensure_session()
    set_goal(chat.store, chat.session_id, goal, time.time())
    chat.reload()


def end_goal(chat: ChatSession) -> bool:
    """``/goal clear``: whether there was one."""
    if not chat.session_id:
        return False
    had = clear_goal(chat.store, chat.session_id)
    chat.reload()
    return had


def open_goal(chat: ChatSession) -> StoredGoal | None:
    if not chat.session_id:
        return None
    stored = load_goal(chat.store, chat.session_id)
    return stored if stored is not None and stored.status == OPEN else None


def limits_of(chat: ChatSession) -> GoalLimits:
    options = chat.options
    return GoalLimits(max_checks=options.max_checks, max_wall=options.max_wall)


def run_toward_goal(chat: ChatSession, text: str) -> TaskEnd:
    """Run ``text`` as a task; with an open goal, check it and go on until the goal is met
    or a rule ends the run (the returned end's status says which)."""
    stored = open_goal(chat)
    until = chat.options.until
    if until is not None and (stored is None or stored.goal.command != until):
        # --until: this task is the goal (an open goal with the same check goes on as it was).
        start_goal(chat, Goal(text, until))
        stored = open_goal(chat)
    if stored is None:
        return chat.run_task(text)
    goal = stored.goal
    timeout = chat.settings.goal_check_timeout
    ports = GoalPorts(
        run_task=lambda prompt, used: chat.run_task(prompt, turns_used=used),
        run_check=_check_runner(chat, goal, timeout),
        record=lambda event: _record(chat, event),
        note=lambda status, checks: note_goal(
            chat.store, chat.session_id, status, stored.checks + checks, time.time()
        ),
        tell=lambda line: _tell(chat, line),
    )
    ended = run_goal(goal, limits_of(chat), text, ports, timeout=timeout)
    chat.reload()
    task = ended.task
    if task is None:  # the wall-time alarm rang between two of a task's effects
        task = TaskEnd("wall", "", chat.conversation, chat.last_task_turns)
    if ended.status == task.status:
        return task
    status: EndStatus
    for status in ("done", "stalled", "max_checks", "wall"):
        if ended.status == status:
            return attrs.evolve(task, status=status, detail=ended.detail, by_user=False)
    return task


def _check_runner(chat: ChatSession, goal: Goal, timeout: float) -> RunCheck:
    from seri.io.tree_state import TreeState

    tree = TreeState(Path(chat.project))

    def run_check() -> tuple[CheckOutcome, float]:
        from seri.io.shell import run_bash

        # The files as the task left them (what the stall rule compares), looked at before
        # the check writes its caches.
        digest = tree.digest()
        started = time.monotonic()
        result = run_bash(
            goal.command,
            cwd=Path(chat.project),
            timeout=timeout,
            sandbox=chat.sandbox,
            env=chat.child_env,
        )
        seconds = time.monotonic() - started
        details = result.details_dict()
        code = details.get("exit_code")
        outcome = CheckOutcome(
            exit_code=code if isinstance(code, int) else None,
            timed_out=bool(details.get("timed_out")),
            output=chat.redactor.text(result.text),
            tree=digest,
        )
        return outcome, seconds

    return run_check


def _record(chat: ChatSession, event: events.Event) -> None:
    if chat.events is not None:
        chat.events.record(event)


def _tell(chat: ChatSession, line: str) -> None:
    text = neutralise(f"seri: {chat.redactor.text(line)}")
    if chat.interactive:
        chat.view.notice(text)
    else:
        print(text, file=sys.stderr)


def result_fields(chat: ChatSession) -> dict[str, Any]:
    """The result record's ``goal`` and ``compaction``: the goal as the run left it, and what
    this run's compactions cost."""
    from seri.io.compaction_costs import costs_since

    stored = load_goal(chat.store, chat.session_id)
    fields: dict[str, Any] = {}
    if stored is not None:
        fields["goal"] = stored.export()
    cost = costs_since(chat.store, chat.session_id, chat.started)
    if cost is not None:
        fields["compaction"] = cost
    return fields


def goal_command(chat: ChatSession, rest: str) -> int | None:
    """``/goal CMD`` (the tasks that follow are checked by CMD until it passes), ``/goal``
    (show it), ``/goal clear`` (end it)."""
    rest = rest.strip()
    if rest == "clear":
        said = "seri: goal cleared" if end_goal(chat) else "seri: no goal to clear"
        _tell_plain(chat, said)
        return None
    if not rest:
        stored = load_goal(chat.store, chat.session_id) if chat.session_id else None
        if stored is None:
            _tell_plain(chat, "No goal: /goal CMD checks the tasks that follow with CMD.")
            return None
        checks = f", {stored.checks} checks so far" if stored.checks else ""
        if stored.last_end:
            checks += f", last run: {stored.last_end}"
        text = f": {stored.goal.text}" if stored.goal.text else ""
        _tell_plain(
            chat, f"goal ({stored.status}{checks}): until `{stored.goal.command}` exits 0{text}"
        )
        return None
    try:
        start_goal(chat, Goal("", rest))
    except SeriError as exc:
        _tell_plain(chat, f"seri: {exc}")
        return EXIT_USAGE
    _tell_plain(chat, f"seri: goal set: each task from now on is checked by `{rest}`")
    return None


def _tell_plain(chat: ChatSession, line: str) -> None:
    text = neutralise(chat.redactor.text(line))
    if chat.interactive:
        chat.view.screen.say(text)
    else:
        print(text, file=sys.stderr)
