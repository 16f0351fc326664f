"""The database schema, as an ordered list of migrations.

Migration N takes the database from ``user_version`` N-1 to N. They are applied
inside one ``BEGIN IMMEDIATE`` transaction that re-reads ``user_version`` first,
so eight processes starting at once on an empty profile apply each exactly once.
"""

from __future__ import annotations

# 'SERI' in ASCII: tells our database apart from any other SQLite file.
APPLICATION_ID = 0x53455249

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
)

SCHEMA_VERSION = len(MIGRATIONS)
