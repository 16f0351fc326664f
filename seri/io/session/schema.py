"""The database schema, as an ordered list of migrations.

Migration N takes the database from ``user_version`` N-1 to N. They are applied
inside one ``BEGIN IMMEDIATE`` transaction that re-reads ``user_version`` first,
so eight processes starting at once on an empty profile apply each exactly once.
"""

from __future__ import annotations

# 'SERI' in ASCII: tells our database apart from any other SQLite file.
APPLICATION_ID = 0x53455249


def _searchable(body: str) -> str:
    """SQL for the searchable text of a stored message body: its text, its reasoning and its
    tool calls (name and arguments), one per line.

    A body that holds a lone surrogate was stored ASCII-escaped (``seri.io.session.codec``), and
    json_extract would turn that escape into bytes that are not UTF-8; such a body (and one
    that is not JSON at all, which seri never writes) is indexed as the raw text it is.
    """
    return (
        f"CASE WHEN NOT json_valid({body}) OR {body} GLOB '*\\ud[89abcdef]*' THEN {body}"
        f" ELSE concat_ws(char(10), nullif(json_extract({body}, '$.text'), ''),"
        f" nullif(json_extract({body}, '$.reasoning'), ''),"
        f" (SELECT group_concat(json_extract(value, '$.name') || ' ' ||"
        f" json_extract(value, '$.arguments'), char(10)) FROM json_each({body}, '$.tool_calls')))"
        " END"
    )


def _reported(field: str, cast: str) -> str:
    """SQL for a usage number of the event's body, 0 unless it is a JSON number (a recorded
    body is ours, but a sum must never turn into text, nor the trigger fail)."""
    path = f"'$.usage.{field}'"
    return (
        f"CASE WHEN json_type({{event}}.body, {path}) IN ('integer', 'real')"
        f" THEN CAST(json_extract({{event}}.body, {path}) AS {cast}) ELSE 0 END"
    )


# Adds one recorded call's usage to its session's sums (SQL; ``event`` is the events row).
# Never NULL (a call that failed records "usage": null): a failing trigger would fail the
# conversation write it shares a transaction with.
_USAGE_VALUES = (
    "{event}.session_id, 1, "
    + ", ".join(
        _reported(field, "INTEGER") for field in ("input_tokens", "output_tokens", "cached_tokens")
    )
    + f", {_reported('cost', 'REAL')},"
    " coalesce(json_type({event}.body, '$.usage.cost') IN ('real', 'integer'), 0)"
)
_USAGE_UPSERT = (
    " ON CONFLICT(session_id) DO UPDATE SET calls = calls + excluded.calls,"
    " input_tokens = input_tokens + excluded.input_tokens,"
    " output_tokens = output_tokens + excluded.output_tokens,"
    " cached_tokens = cached_tokens + excluded.cached_tokens, cost = cost + excluded.cost,"
    " costed_calls = costed_calls + excluded.costed_calls;"
)
_USAGE_COLUMNS = (
    "session_usage(session_id, calls, input_tokens, output_tokens, cached_tokens, cost,"
    " costed_calls)"
)
_ADD_USAGE = f"INSERT INTO {_USAGE_COLUMNS} VALUES ({_USAGE_VALUES}){_USAGE_UPSERT}"
# The sums of the calls recorded before this migration, from their events. (``AND true``:
# SQLite needs a WHERE before ON CONFLICT in an INSERT ... SELECT, or it parses a join.)
_ADD_USAGE_ALL = (
    f"INSERT INTO {_USAGE_COLUMNS} SELECT {_USAGE_VALUES.format(event='e')} FROM events AS e"
    " JOIN sessions AS s ON s.id = e.session_id"
    " WHERE e.type IN ('model_call', 'summary_call') AND json_valid(e.body) AND true"
    + _USAGE_UPSERT
)


MIGRATIONS: tuple[str, ...] = (
    # 1: sessions, messages, the compaction ledger, trajectories, checkpoints, memory.
    """
    CREATE TABLE sessions(
        id TEXT PRIMARY KEY,
        project TEXT NOT NULL,
        created REAL NOT NULL,
        updated REAL NOT NULL,
        model TEXT NOT NULL DEFAULT '',
        title TEXT NOT NULL DEFAULT '',
        parent_id TEXT REFERENCES sessions(id) ON DELETE SET NULL,
        source_key TEXT UNIQUE,
        system_prompt TEXT NOT NULL DEFAULT '',
        prompt_hashes TEXT NOT NULL DEFAULT '{}',
        -- Bumped by every write to the conversation: compaction from another
        -- process compares it to notice that the session moved under it.
        revision INTEGER NOT NULL DEFAULT 0,
        next_seq INTEGER NOT NULL DEFAULT 1,
        message_count INTEGER NOT NULL DEFAULT 0,
        -- Running sum of the messages' characters, so the estimate is O(1).
        total_chars INTEGER NOT NULL DEFAULT 0,
        last_input_tokens INTEGER NOT NULL DEFAULT 0,
        turns_used INTEGER NOT NULL DEFAULT 0,
        max_turns INTEGER,
        recap TEXT,
        -- The seq of the first message after the latest compaction: /rewind's wall.
        compacted_before INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX sessions_by_project ON sessions(project, updated);
    CREATE INDEX sessions_by_updated ON sessions(updated);
    CREATE INDEX sessions_by_parent ON sessions(parent_id);

    CREATE TABLE messages(
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        role TEXT NOT NULL,
        kind TEXT NOT NULL DEFAULT '',
        body TEXT NOT NULL,
        chars INTEGER NOT NULL,
        created REAL NOT NULL,
        PRIMARY KEY(session_id, seq)
    ) WITHOUT ROWID;

    CREATE TABLE compactions(
        id INTEGER PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        at REAL NOT NULL,
        trigger TEXT NOT NULL,
        focus TEXT NOT NULL DEFAULT '',
        evicted INTEGER NOT NULL,
        estimate_before INTEGER NOT NULL,
        estimate_after INTEGER NOT NULL
    );
    CREATE INDEX compactions_by_session ON compactions(session_id, id);

    CREATE TABLE runs(
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        started REAL NOT NULL,
        header TEXT NOT NULL
    );
    CREATE INDEX runs_by_session ON runs(session_id);

    CREATE TABLE events(
        id INTEGER PRIMARY KEY,
        run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        session_id TEXT NOT NULL,
        at REAL NOT NULL,
        type TEXT NOT NULL,
        body TEXT NOT NULL
    );
    CREATE INDEX events_by_run ON events(run_id, id);
    CREATE INDEX events_by_session ON events(session_id, id);

    CREATE TABLE checkpoints(
        id INTEGER PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        user_seq INTEGER NOT NULL,
        path TEXT NOT NULL,
        existed INTEGER NOT NULL,
        content BLOB,
        sha256 TEXT NOT NULL DEFAULT '',
        -- The file's hash right after seri's write: a later difference means someone else.
        after_sha256 TEXT NOT NULL DEFAULT '',
        at REAL NOT NULL
    );
    CREATE INDEX checkpoints_by_session ON checkpoints(session_id, user_seq);

    CREATE TABLE memory_pending(
        id INTEGER PRIMARY KEY,
        scope TEXT NOT NULL,
        project TEXT NOT NULL,
        text TEXT NOT NULL,
        session_id TEXT,
        at REAL NOT NULL
    );

    CREATE TABLE legacy_imports(
        name TEXT PRIMARY KEY,
        status TEXT NOT NULL,
        detail TEXT NOT NULL DEFAULT '',
        at REAL NOT NULL
    );
    """,
    # 2: each run's latest record time, so that ageing recordings out at session
    # start is one lookup in an index (is any run older than the window?) instead
    # of a scan of every event. Existing runs are filled in from their events.
    """
    ALTER TABLE runs ADD COLUMN last_at REAL NOT NULL DEFAULT 0;
    UPDATE runs SET last_at = max(
        started, coalesce((SELECT max(at) FROM events WHERE events.run_id = runs.id), started)
    );
    CREATE INDEX runs_by_last_at ON runs(last_at);
    """,
    # 3: compaction on any window and tokenizer. The token scale learned from the provider's
    # counts (provider tokens per ceil(chars/4); 0 until measured), how many summarizer calls a
    # compaction's fold took and how many payloads the shrink ladder elided, and pins: notes
    # carried verbatim in every recap.
    """
    ALTER TABLE sessions ADD COLUMN token_scale REAL NOT NULL DEFAULT 0;
    ALTER TABLE compactions ADD COLUMN summary_calls INTEGER NOT NULL DEFAULT 1;
    ALTER TABLE compactions ADD COLUMN elided INTEGER NOT NULL DEFAULT 0;
    CREATE TABLE pins(
        id INTEGER PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        text TEXT NOT NULL,
        at REAL NOT NULL
    );
    CREATE INDEX pins_by_session ON pins(session_id, id);
    """,
    # 4: one writer per session. A live chat (or `seri compact`, `seri rewind`) holds a
    # lease on its session: the holder's pid, host and start time, so a dead holder (or a
    # reused pid) can be told apart from a live one and its lease taken over. A session
    # continued with --fork remembers the session it was copied from.
    """
    CREATE TABLE leases(
        session_id TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
        pid INTEGER NOT NULL,
        host TEXT NOT NULL,
        started TEXT NOT NULL,
        command TEXT NOT NULL,
        since REAL NOT NULL
    );
    ALTER TABLE sessions ADD COLUMN forked_from TEXT;
    -- The project directory's device:inode when the session began: a rewind of files
    -- refuses a directory that was moved away, or replaced by another of the same name.
    ALTER TABLE sessions ADD COLUMN project_identity TEXT NOT NULL DEFAULT '';
    """,
    # 5: `seri sessions search`: full-text search over every stored message (SQLite FTS5). The
    # searchable text of a message (its text, reasoning and tool calls) is kept in
    # message_text by triggers on messages, so every path that writes messages (appends,
    # compactions, shrinks, rewinds, deletes, imports, any future one) keeps the index in
    # step in its own transaction. message_search indexes message_text (external content: the
    # text is stored once), with FTS5's secure-delete so a deleted message leaves no term
    # behind in the index. Existing messages are indexed here.
    f"""
    CREATE TABLE message_text(
        id INTEGER PRIMARY KEY,
        session_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        text TEXT NOT NULL,
        UNIQUE(session_id, seq)
    );
    CREATE VIRTUAL TABLE message_search USING fts5(
        text, content='message_text', content_rowid='id',
        tokenize='unicode61 remove_diacritics 2'
    );
    INSERT INTO message_search(message_search, rank) VALUES('secure-delete', 1);
    CREATE TRIGGER message_text_ai AFTER INSERT ON message_text BEGIN
        INSERT INTO message_search(rowid, text) VALUES (new.id, new.text);
    END;
    CREATE TRIGGER message_text_ad AFTER DELETE ON message_text BEGIN
        INSERT INTO message_search(message_search, rowid, text) VALUES ('delete', old.id, old.text);
    END;
    CREATE TRIGGER message_text_au AFTER UPDATE ON message_text BEGIN
        INSERT INTO message_search(message_search, rowid, text) VALUES ('delete', old.id, old.text);
        INSERT INTO message_search(rowid, text) VALUES (new.id, new.text);
    END;
    CREATE TRIGGER messages_ai AFTER INSERT ON messages BEGIN
        INSERT INTO message_text(session_id, seq, text)
        VALUES (new.session_id, new.seq, {_searchable("new.body")});
    END;
    CREATE TRIGGER messages_ad AFTER DELETE ON messages BEGIN
        DELETE FROM message_text WHERE session_id = old.session_id AND seq = old.seq;
    END;
    CREATE TRIGGER messages_au AFTER UPDATE OF body ON messages BEGIN
        UPDATE message_text SET text = {_searchable("new.body")}
        WHERE session_id = new.session_id AND seq = new.seq;
    END;
    INSERT INTO message_text(session_id, seq, text)
    SELECT session_id, seq, {_searchable("body")} FROM messages;

    -- What each session's model calls used and cost, summed as they are recorded (subagents'
    -- calls are recorded in their parent's runs, so they count for the parent), so that
    -- `seri sessions` shows tokens and cost without reading any event. Ageing recordings out
    -- keeps the sums: the session still cost what it cost.
    CREATE TABLE session_usage(
        session_id TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
        calls INTEGER NOT NULL DEFAULT 0,
        input_tokens INTEGER NOT NULL DEFAULT 0,
        output_tokens INTEGER NOT NULL DEFAULT 0,
        cached_tokens INTEGER NOT NULL DEFAULT 0,
        -- The sum of the costs the provider reported, and how many calls reported one.
        cost REAL NOT NULL DEFAULT 0,
        costed_calls INTEGER NOT NULL DEFAULT 0
    ) WITHOUT ROWID;
    CREATE TRIGGER events_usage AFTER INSERT ON events
    WHEN new.type IN ('model_call', 'summary_call') AND json_valid(new.body) BEGIN
        {_ADD_USAGE.format(event="new")}
    END;
    {_ADD_USAGE_ALL}

    -- Small facts about the profile. `legacy_dir`: the modification time of sessions/ when
    -- every file in it had been imported, so that a start finds nothing new with one stat
    -- instead of listing the directory.
    CREATE TABLE profile_facts(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
    """,
    # 6 (issue 19's; it follows main's last): MCP servers a project's .mcp.json names, approved
    # to start (a cloned repository must not start programs unasked). An approval holds for the
    # server as it was approved: ``identity`` is its command and arguments (or URL), so a
    # changed entry needs a new approval.
    """
    CREATE TABLE mcp_approvals(
        project TEXT NOT NULL,
        server TEXT NOT NULL,
        identity TEXT NOT NULL,
        at REAL NOT NULL,
        PRIMARY KEY(project, server)
    ) WITHOUT ROWID;
    """,
    # 7 (issue 18's; it follows main's last): run tags (SERI_RUN_TAGS, `seri chat --tag
    # KEY=VALUE`), the labels a fleet gives its runs, kept with the session they ran on (one
    # value per key: a later run's wins), so a fleet's sessions can be found and grouped by
    # them. Each run's header keeps its own.
    """
    CREATE TABLE session_tags(
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        key TEXT NOT NULL,
        value TEXT NOT NULL,
        PRIMARY KEY(session_id, key)
    ) WITHOUT ROWID;
    CREATE INDEX session_tags_by_tag ON session_tags(key, value);
    """,
    # 8 (the follow-ups'; it follows main's last): "always" answers to an approval, kept with
    # their session: the allow rule, the tool call that was approved (its tool and command or
    # path, shown by /permissions as where the rule came from) and when. A --continue/--resume
    # of the session allows what the person allowed; a fork copies them; deleting the session
    # deletes them.
    # And the context window a provider's overflow answer stated (llama.cpp's n_ctx behind
    # a larger context_window in config.json; 0: none), for the session's current model, so
    # that the next process does not pay one refused request to learn it again.
    """
    ALTER TABLE sessions ADD COLUMN learned_window INTEGER NOT NULL DEFAULT 0;
    CREATE TABLE session_rules(
        id INTEGER PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        rule TEXT NOT NULL,
        tool TEXT NOT NULL,
        subject TEXT NOT NULL DEFAULT '',
        at REAL NOT NULL,
        UNIQUE(session_id, rule)
    );
    """,
    # 9 (issue 25's; it follows main's last): a `seri handoff` copy is incomplete until its
    # compaction is written: not listed, not searched, never picked by --continue, so a
    # handoff killed halfway leaves no uncompacted copy to be taken for the original. The
    # next handoff deletes such leftovers (their holder's lease is dead).
    """
    ALTER TABLE sessions ADD COLUMN incomplete INTEGER NOT NULL DEFAULT 0;
    """,
    # 10 (issue 24's): an MCP approval covers the whole entry. The row
    # holds the digest of the entry as written (``identity``) and the masked entry shown when
    # it was approved (``shown``). Rows of the old form held the command and arguments, which
    # could carry a key in clear: they are replaced by a marker that says "approved in the old
    # form" (the server is asked about again, and told why); secure_delete leaves no copy.
    """
    ALTER TABLE mcp_approvals ADD COLUMN shown TEXT NOT NULL DEFAULT '';
    UPDATE mcp_approvals SET identity = 'old-form' WHERE identity NOT LIKE 'sha256:%';
    """,
    # 11 (issue 27's; it follows main's last): a session's goal (`seri chat -p TASK --until
    # CMD`, `/goal CMD`): its text and check command, carried in every recap like a pin, and
    # how it stands (`open` until a check passes, then `done`; how its last run ended:
    # `stalled`, `max_checks`, `wall`, ... or '' while none has; the checks run so far).
    # And what each compaction cost: the summarizer's tokens and reported cost (NULL: none
    # reported), the tokens the next request writes to the provider's cache again, and
    # whether the task in hand and the goal came through it verbatim (NULL: there was none).
    """
    CREATE TABLE session_goals(
        session_id TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
        text TEXT NOT NULL,
        command TEXT NOT NULL,
        status TEXT NOT NULL DEFAULT 'open',
        last_end TEXT NOT NULL DEFAULT '',
        checks INTEGER NOT NULL DEFAULT 0,
        set_at REAL NOT NULL,
        updated REAL NOT NULL
    ) WITHOUT ROWID;
    ALTER TABLE compactions ADD COLUMN summary_input_tokens INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE compactions ADD COLUMN summary_output_tokens INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE compactions ADD COLUMN summary_cost REAL;
    ALTER TABLE compactions ADD COLUMN cache_rewrite_tokens INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE compactions ADD COLUMN task_kept INTEGER;
    ALTER TABLE compactions ADD COLUMN goal_kept INTEGER;
    """,
)

SCHEMA_VERSION = len(MIGRATIONS)
