"""Names vulture (``make check``) cannot see used, each with why it is used or kept.

vulture reads this file as code that uses the names below; nothing imports or runs it.
"""

# ruff: noqa: B018, F821

# prompt_toolkit calls these overrides (FileHistory, Completer), with these argument names.
_.load_history_strings
_.get_completions
complete_event
# Key bindings of the chat's prompt, registered by their decorator; a Buffer's cursor.
_paste
_unfold
_.cursor_position

# Library hooks set or called by name: apsw's connection tracer and VFS, socketserver's and
# http.server's class attributes and handlers, pytest's plugin and collection hooks.
_.exec_trace
_.xOpen
_.daemon_threads
_.protocol_version
_.close_connection
_.log_message
_.do_GET
_.do_POST
_.do_DELETE
pytest_plugins
pytestmark
collect_ignore_glob

# Protocol code tables listed whole: JSON-RPC 2.0's reserved error codes (seri sends and
# reads some of them) and OTLP's span status codes (seri sets UNSET and ERROR).
PARSE_ERROR
INVALID_PARAMS
STATUS_OK

# Fields of records that mirror what a source said (an MCP server's initialize result and
# tool list, the trajectory settings as resolved); written, not read by seri yet.
_.capabilities
_.output_schema
_.trajectory_forced_by_env
_.trajectory_stored
# NotCompacted is being reworked into a typed reason (issue 17, deliverable 5), which decides
# what of this flag stays.
_.no_cut

# Arguments a caller's signature requires: a parametrized case name that only labels the case
# (tests/faults/test_provider.py), a fixture asked for its side effect (a populated profile,
# tests/unit/commands/test_sessions_cli.py), a signal handler's signal number
# (scripts/fake_model.py).
shape
populated
signum

# Trajectory event fields (seri/pure/trajectories/events.py) are read through attrs.fields by
# export() and event_schema(), never by name: these are the ones no code reads directly.
_.seri_version
_.from_
_.to

# The ACP SDK calls its client's methods by name (tests/e2e/test_acp.py's Editor).
_.request_permission
_.session_update
_.read_text_file
_.write_text_file
