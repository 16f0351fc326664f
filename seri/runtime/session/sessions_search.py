"""`seri sessions search TEXT`: the stored messages that match, best first, with a snippet."""

from __future__ import annotations

import os
import sys

from seri.io.session.session_search import MARK_END, MARK_START, SearchHit, search_messages
from seri.pure.inputs.errors import SeriError
from seri.pure.session.search_query import QueryError, fts_query, plain_query
from seri.pure.terminal.terminal_style import paint
from seri.pure.terminal.terminal_text import neutralise
from seri.pure.terminal.timestamps import iso_utc
from seri.pure.trajectories.json_lines import json_line
from seri.runtime.session.profile import Profile, current_project

DEFAULT_LIMIT = 20


def search(
    profile: Profile,
    text: str,
    *,
    all_projects: bool,
    as_json: bool,
    fts: bool,
    limit: int | None,
) -> int:
    try:
        query = fts_query(text) if fts else plain_query(text)
    except QueryError as exc:
        raise SeriError(str(exc)) from None
    project = None if all_projects else current_project()
    hits = search_messages(profile.store, query, project, limit or DEFAULT_LIMIT)
    out = sys.stdout
    if as_json:
        out.write("".join(json_line(_hit_dict(hit), compact=False) for hit in hits))
        return 0
    if not hits:
        where = "any project" if all_projects else f"{project} (--all searches every project)"
        print(f"seri: no message matches in {where}", file=sys.stderr)
        return 0
    from seri.io.terminal.terminal import wants_colour

    colour = wants_colour(out, os.environ)
    out.write("".join(_hit_lines(hit, colour=colour, all_projects=all_projects) for hit in hits))
    return 0


def _who(hit: SearchHit) -> str:
    return hit.role + (f" ({hit.kind})" if hit.kind else "")


def _hit_dict(hit: SearchHit) -> dict[str, object]:
    return {
        "type": "match",
        "session": hit.session_id,
        "seq": hit.seq,
        "role": hit.role,
        "kind": hit.kind,
        "created": iso_utc(hit.created),
        "title": hit.title,
        "project": hit.project,
        "parent": hit.parent_id or None,
        # The matched words in [brackets], on one line.
        "snippet": _one_line(_marked(hit.snippet, "[", "]")),
        "score": round(-hit.score, 6),
    }


def _hit_lines(hit: SearchHit, *, colour: bool, all_projects: bool) -> str:
    """'<session> #<seq> <role>  <title>' then the snippet, indented, matches bold."""
    where = f"  ({hit.project})" if all_projects else ""
    sub = f" (subagent of {hit.parent_id})" if hit.parent_id else ""
    head = f"{hit.session_id} #{hit.seq} {_who(hit)}{sub}  {hit.title or '-'}{where}"
    return paint(head, "bold", colour=colour) + "\n    " + _painted(hit.snippet, colour) + "\n"


def _painted(snippet: str, colour: bool) -> str:
    """The snippet made safe for a terminal, its matched words bold (or in [brackets])."""
    pieces: list[str] = []
    for index, part in enumerate(_one_line(snippet).split(MARK_START)):
        matched, _, rest = part.partition(MARK_END) if index else ("", "", part)
        if matched:
            shown = paint(matched, "bold", colour=True) if colour else f"[{neutralise(matched)}]"
            pieces.append(shown)
        pieces.append(neutralise(rest))
    return "".join(pieces)


def _marked(snippet: str, start: str, end: str) -> str:
    return snippet.replace(MARK_START, start).replace(MARK_END, end)


def _one_line(text: str) -> str:
    return " ".join(text.split())
