"""Print a shell completion script.

Usage:
  seri completion (bash | zsh | fish)
  seri completion session-ids
  seri completion (-h | --help)

Options:
  -h --help   Show this help.

The script completes seri's commands, their words and options, and session ids after
--resume, --session and `sessions show`. Load it:
  bash  eval "$(seri completion bash)"                          in ~/.bashrc
  zsh   eval "$(seri completion zsh)"                           in ~/.zshrc, after compinit
  fish  seri completion fish > ~/.config/fish/completions/seri.fish

`session-ids` is what the scripts call on Tab: the ids of the stored sessions, the
current directory's first, newest first, one a line (an id that is not one printable line
is left out); nothing (and no profile created) when there is no database yet. The scripts
never let the shell evaluate an id: each is offered quoted.
"""

from __future__ import annotations

import importlib
import sys

from seri.runtime.agent.running import parse_usage

IDS_SHOWN = 200


def run(argv: list[str]) -> int:
    options = parse_usage(__doc__ or "", argv)
    if options["session-ids"]:
        return _session_ids()
    from seri.commands.main import COMMANDS
    from seri.pure.terminal.completion_scripts import SHELLS, command_words, completion_script

    shell = next(name for name in SHELLS if options[name])
    commands = {
        name: command_words(importlib.import_module(module).__doc__ or "", f"seri {name}")
        for name, module in COMMANDS.items()
    }
    sys.stdout.write(completion_script(shell, commands))
    return 0


def _session_ids() -> int:
    from seri.io.session.profile_files import profile_root
    from seri.io.session.session_index import session_rows
    from seri.io.session.store import DB_NAME, open_store
    from seri.io.session.store_errors import StoreError
    from seri.runtime.session.profile import current_project

    if not (profile_root() / DB_NAME).exists():
        return 0  # no profile yet: nothing to complete, and nothing created
    try:
        store = open_store(readonly=True)
    except (StoreError, OSError):
        return 0
    here = current_project()
    rows = session_rows(store, None, limit=IDS_SHOWN)
    ordered = [row for row in rows if row[1] == here] + [row for row in rows if row[1] != here]
    # One id a line: an id with a line break or another control character in it (none of
    # seri's own, but a stored one may be anything) could not be told from two.
    ids = [str(row[0]) for row in ordered if str(row[0]).isprintable()]
    sys.stdout.write("".join(f"{session_id}\n" for session_id in ids))
    return 0
