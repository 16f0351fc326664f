"""The files a message names with ``@path``, read for it (see ``seri.pure.agent.attachments``).

A named file is attached when it is a text file inside the project that the permission
rules let read_file read, and not over ``MAX_ATTACHMENT_BYTES``; any other ``@word`` is left
as written, and a path that exists but cannot go along is said on the screen.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from seri.pure.agent.attachments import (
    MAX_ATTACHMENT_BYTES,
    Attachment,
    mentioned_paths,
    with_attachments,
)

if TYPE_CHECKING:
    from seri.runtime.terminal.chat_session import ChatSession


def attach_mentioned(chat: ChatSession, message: str) -> str:
    paths = mentioned_paths(message)
    if not paths:
        return message
    attached: list[Attachment] = []
    for path in paths:
        found = _readable(chat, path)
        if isinstance(found, Attachment):
            attached.append(found)
            size = len(found.text.encode("utf-8", "replace"))
            chat.view.screen.say(f"  attached {path} ({size:,} bytes)", "notice")
        elif found:
            chat.view.screen.say(f"  not attached: {path}: {found}", "warning")
    return with_attachments(message, tuple(attached))


def _readable(chat: ChatSession, path: str) -> Attachment | str:
    """The file's attachment, why it cannot be one, or "" when it is no file at all."""
    from seri.io.tools.files import is_within
    from seri.pure.permissions.permissions import decide

    project = os.path.realpath(chat.project)
    full = os.path.realpath(os.path.join(project, os.path.expanduser(path)))
    if not os.path.isfile(full):
        return ""
    if not is_within(project, full):
        return "outside the project"
    relative = os.path.relpath(full, project)
    verdict = decide(
        chat.session.policy,
        "read_file",
        {"path": relative},
        project_relative_path=relative,
        resolved_path=full,
        project=project,
    )
    if verdict.action == "deny":
        return f"reading it is denied by {verdict.rule or verdict.reason}"
    try:
        with open(full, "rb") as attached:
            data = attached.read(MAX_ATTACHMENT_BYTES + 1)
    except OSError as exc:
        return exc.strerror or "cannot be read"
    if len(data) > MAX_ATTACHMENT_BYTES:
        return f"over {MAX_ATTACHMENT_BYTES // 1024} KB (ask seri to read it instead)"
    if b"\0" in data:
        return "not a text file"
    return Attachment(relative, data.decode("utf-8", "replace"))
