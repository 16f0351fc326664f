"""`seri trajectory export --format atif`: every run as one ATIF-v1.8 document per line.

One line per document keeps the export a stream (documents are written as they are
built, one run in memory at a time) and keeps `jq` usable on it; a harness that wants one
file per run takes the lines apart (`split -l 1`, or `jq -c 'select(...)'`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from seri import __version__
from seri.io.session.store import Store
from seri.io.trajectories.atif_source import export_sessions, session_parts
from seri.pure.trajectories.atif import run_trajectory, unrecorded_trajectory
from seri.pure.trajectories.atif_recordings import RunRecording
from seri.pure.trajectories.json_lines import line_safe


def atif_lines(store: Store, session_id: str, since: float | None) -> Iterator[bytes]:
    for each in export_sessions(store, session_id, since):
        for part in session_parts(store, each, since):
            if isinstance(part, RunRecording):
                document = run_trajectory(part)
            else:
                document = unrecorded_trajectory(part, __version__)
            if document is not None:
                # A lone surrogate in stored text goes out as its \\udXXX escape (valid JSON).
                text = line_safe(json.dumps(document, ensure_ascii=False, separators=(",", ":")))
                yield text.encode("utf-8", "backslashreplace") + b"\n"
