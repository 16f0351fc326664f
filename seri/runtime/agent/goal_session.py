"""A session's goal: set it (``--until``, ``/goal``), run its tasks through ``goal_loop`` with
the front-end's own task runner, and its check through the session's sandbox and rules.

The sites that run a task (``-p``, a typed or piped line, a headless run) call
``run_toward_goal`` instead of ``run_task``: with no open goal it is that call.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from seri.io.agent.goals import OPEN, StoredGoal
from seri.pure.agent.task_records import EndStatus, TaskEnd
from seri.pure.inputs.errors import SeriError
from seri.pure.session.records import MessageKind

# One task of the front-end's, with the kind of its first message ("skill": /name args).
RunKindedTask = Callable[[str, int, MessageKind], TaskEnd]

if TYPE_CHECKING:
    from seri.pure.agent.goals import Goal
    from seri.runtime.agent.goal_loop import RunCheck
    from seri.runtime.session.controller import SessionController
    from seri.runtime.terminal.chat_session import ChatSession


def check_allowed(session: SessionController, command: str) -> None:
    """Refuse a check command the rules deny (a deny rule, or a protected path its words
    name), as they would refuse bash running it. An ``ask`` is the person's own word here:
    they typed the command."""
    from seri.pure.permissions.permission_policy import PROTECTED_RULE
    from seri.pure.permissions.permissions import decide

    if not command.strip():
        raise SeriError("a goal needs a check command: --until CMD or /goal CMD")
    policy = attrs.evolve(session.policy, project=session.project)
    decision = decide(policy, "bash", {"command": command})
    if decision.action == "deny":
        rule = decision.rule or PROTECTED_RULE
        raise SeriError(
            f"the check `{command}` is denied by rule {rule}: {decision.reason}; a goal's "
            "check runs under the same rules as bash"
        )


def start_goal(session: SessionController, goal: Goal) -> None:
    """Keep ``goal`` with the session: every recap carries it, every task is checked by it."""
    check_allowed(session, goal.command)
    session.set_goal(goal)


def open_goal(session: SessionController) -> StoredGoal | None:
    stored = session.goal()
    return stored if stored is not None and stored.status == OPEN else None


def run_toward_goal(
    session: SessionController,
    text: str,
    tell: Callable[[str], None],
    run_task: RunKindedTask | None = None,
) -> TaskEnd:
    """Run ``text`` as a task; with an open goal, check it and go on until the goal is met
    or a rule ends the run (the returned end's status says which). ``run_task``: the
    front-end's own way to run one (the session's by default); ``tell``: where a check's
    line goes."""
    kinded: RunKindedTask = run_task or (
        lambda prompt, used, kind: session.run_task(prompt, used, kind=kind)
    )
    # `/name args` naming a skill is that skill, as typed in the chat (-p "/name args" too):
    # the first task's message is the skill's, the goal's text the person's words.
    first_prompt, first_kind = _as_typed(session, text)
    kinds = [first_kind]

    def runner(prompt: str, used: int) -> TaskEnd:
        return kinded(prompt, used, kinds.pop() if kinds else "")

    stored = open_goal(session)
    until = session.options.until
    if until is not None and (stored is None or stored.goal.command != until):
        from seri.pure.agent.goals import Goal

        # --until: this task is the goal (an open goal with the same check goes on as it was).
        start_goal(session, Goal(text, until))
        stored = open_goal(session)
    if stored is None:
        return runner(first_prompt, 0)
    # A goal's machinery (its records, its loop and alarm) loads only for a run with a goal:
    # a plain task's request goes out without it.
    from seri.pure.agent.goals import GoalLimits
    from seri.runtime.agent.goal_loop import GoalPorts, run_goal

    goal, before = stored.goal, stored.checks
    timeout = session.settings.goal_check_timeout
    ports = GoalPorts(
        run_task=runner,
        run_check=_check_runner(session, goal, timeout),
        record=session.record,
        note=lambda ended, checks: session.note_goal(ended, before + checks),
        tell=lambda line: tell(session.redact(line)),
    )
    options = session.options
    limits = GoalLimits(max_checks=options.max_checks, max_wall=options.max_wall)
    ended = run_goal(goal, limits, first_prompt, ports, timeout=timeout)
    task = ended.task
    if task is None:  # the wall-time alarm rang between two of a task's effects
        task = TaskEnd("wall", "", session.conversation, session.last_task_turns)
    if ended.status == task.status:
        return task
    status: EndStatus
    for status in ("done", "stalled", "max_checks", "wall"):
        if ended.status == status:
            return attrs.evolve(task, status=status, detail=ended.detail, by_user=False)
    return task


def _as_typed(session: SessionController, text: str) -> tuple[str, MessageKind]:
    """``text`` as the session runs it: ``/name args`` naming one of its skills is the
    skill's activation (its body and the person's words), anything else itself."""
    name, _, rest = text.strip().partition(" ")
    skill = session.skills.find(name[1:]) if name.startswith("/") else None
    if skill is None:
        return text, ""
    from seri.pure.extensions.skills import activation_text

    return activation_text(skill, rest.strip()), "skill"


def _check_runner(session: SessionController, goal: Goal, timeout: float) -> RunCheck:
    from seri.io.agent.tree_state import TreeState
    from seri.pure.agent.goals import CheckOutcome

    tree = TreeState(Path(session.project))

    def run_check() -> tuple[CheckOutcome, float]:
        # The files as the task left them (what the stall rule compares): looked at before
        # the check writes its caches, or alongside it on a large tree (fenced: tree_state).
        look = tree.look_for_check()
        started = time.monotonic()
        result = session.run_check(goal.command, timeout)
        seconds = time.monotonic() - started
        digest = look()
        details = result.details_dict()
        code = details.get("exit_code")
        outcome = CheckOutcome(
            exit_code=code if isinstance(code, int) else None,
            timed_out=bool(details.get("timed_out")),
            output=result.text,
            tree=digest,
        )
        return outcome, seconds

    return run_check


def goal_command(session: SessionController, rest: str, say: Callable[[str], None]) -> int | None:
    """``/goal CMD`` (the tasks that follow are checked by CMD until it passes), ``/goal``
    (show it), ``/goal clear`` (end it)."""
    from seri.pure.inputs.errors import EXIT_USAGE

    rest = rest.strip()
    if rest == "clear":
        say("seri: goal cleared" if session.clear_goal() else "seri: no goal to clear")
        return None
    if not rest:
        stored = session.goal()
        if stored is None:
            say("No goal: /goal CMD checks the tasks that follow with CMD.")
            return None
        checks = f", {stored.checks} checks so far" if stored.checks else ""
        if stored.last_end:
            checks += f", last run: {stored.last_end}"
        text = f": {stored.goal.text}" if stored.goal.text else ""
        say(f"goal ({stored.status}{checks}): until `{stored.goal.command}` exits 0{text}")
        return None
    from seri.pure.agent.goals import Goal

    try:
        start_goal(session, Goal("", rest))
    except SeriError as exc:
        say(f"seri: {exc}")
        return EXIT_USAGE
    say(f"seri: goal set: each task from now on is checked by `{rest}`")
    return None


def result_fields(session: SessionController) -> dict[str, Any]:
    """The result record's ``goal`` and ``compaction``: the goal as the run left it, and what
    this run's compactions cost."""
    stored = session.goal()
    fields: dict[str, Any] = {}
    if stored is not None:
        fields["goal"] = stored.export()
    cost = session.compaction_costs(since=session.started)
    if cost is not None:
        fields["compaction"] = cost
    return fields


def chat_task(chat: ChatSession, text: str) -> TaskEnd:
    """A chat's task (typed, piped or -p) toward the session's goal, if it has one: each
    task runs as the chat runs one, each check's line is said as the chat says notices."""
    import sys

    from seri.pure.terminal.terminal_text import neutralise

    def tell(line: str) -> None:
        if chat.interactive:
            chat.view.notice(neutralise(f"seri: {line}"))
        else:
            print(neutralise(f"seri: {line}"), file=sys.stderr)

    def run_one(prompt: str, used: int, kind: MessageKind) -> TaskEnd:
        try:
            return chat.session.run_task(prompt, used, kind=kind)
        finally:
            chat.view.close()

    return run_toward_goal(chat.session, text, tell, run_one)
