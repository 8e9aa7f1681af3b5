"""state.db's schema: the ordered migrations `ledger.migrate` applies (never edit a shipped one)."""

from __future__ import annotations

MIGRATIONS: list[str] = [
    # 1: the first schema
    """
    CREATE TABLE agents (
        name TEXT PRIMARY KEY,
        created_at REAL NOT NULL,
        paused INTEGER NOT NULL DEFAULT 0,
        dirty INTEGER NOT NULL DEFAULT 0,
        dirty_at REAL,
        activity_at REAL,
        last_reflection_at REAL,
        last_reflection_id TEXT,
        removed_at REAL
    );
    CREATE TABLE cursors (
        agent TEXT NOT NULL,
        path TEXT NOT NULL,
        adapter TEXT NOT NULL,
        cursor TEXT NOT NULL,
        skipped INTEGER NOT NULL DEFAULT 0,
        updated_at REAL NOT NULL,
        PRIMARY KEY (agent, path)
    );
    CREATE TABLE runs (
        id INTEGER PRIMARY KEY,
        agent TEXT NOT NULL,
        path TEXT NOT NULL,
        session TEXT NOT NULL,
        idx INTEGER NOT NULL,
        started_at TEXT,
        ended_at TEXT,
        cwd TEXT,
        complete INTEGER NOT NULL DEFAULT 0,
        superseded INTEGER NOT NULL DEFAULT 0,
        tail_uuid TEXT,
        facts TEXT NOT NULL,
        observed_at REAL NOT NULL,
        UNIQUE (agent, path, idx)
    );
    CREATE INDEX runs_by_time ON runs (agent, observed_at);
    CREATE INDEX runs_by_session ON runs (agent, session, idx);
    CREATE INDEX runs_by_tail ON runs (agent, path, tail_uuid);
    CREATE TABLE events (
        id INTEGER PRIMARY KEY,
        agent TEXT NOT NULL,
        kind TEXT NOT NULL,
        at REAL NOT NULL,
        data TEXT NOT NULL DEFAULT '{}'
    );
    CREATE INDEX events_by_time ON events (agent, at);
    CREATE TABLE impressions (
        id INTEGER PRIMARY KEY,
        agent TEXT NOT NULL,
        skill TEXT NOT NULL,
        session TEXT NOT NULL,
        at REAL NOT NULL,
        UNIQUE (agent, skill, session)
    );
    CREATE TABLE invocations (
        id INTEGER PRIMARY KEY,
        agent TEXT NOT NULL,
        skill TEXT NOT NULL,
        session TEXT,
        run_idx INTEGER,
        tool_use_id TEXT,
        source TEXT NOT NULL,
        at REAL NOT NULL
    );
    CREATE UNIQUE INDEX invocations_once ON invocations (agent, tool_use_id)
        WHERE tool_use_id IS NOT NULL;
    CREATE INDEX invocations_by_skill ON invocations (agent, skill, at);
    CREATE TABLE reflections (
        id TEXT PRIMARY KEY,
        agent TEXT NOT NULL,
        at REAL NOT NULL,
        outcome TEXT NOT NULL,
        commit_sha TEXT,
        data TEXT NOT NULL DEFAULT '{}'
    );
    CREATE INDEX reflections_by_agent ON reflections (agent, at);
    CREATE TABLE cycles (
        id INTEGER PRIMARY KEY,
        at REAL NOT NULL,
        dry_run INTEGER NOT NULL DEFAULT 0,
        plan TEXT NOT NULL
    );
    """,
    # 2: the last sync of each agent with a remote (this machine's view of the server)
    """
    CREATE TABLE syncs (
        agent TEXT PRIMARY KEY,
        at REAL NOT NULL,
        state TEXT NOT NULL,
        detail TEXT NOT NULL DEFAULT '',
        ok_at REAL,
        failures INTEGER NOT NULL DEFAULT 0
    );
    """,
    # 3: lessons. What a session's context carried (the memo bullets shown whole, the agent
    # branch's tip), and which runs ignored a lesson they had (the lesson_ignored signal).
    # A run is judged once (`judged`), again when its facts or its session's context change.
    """
    ALTER TABLE runs ADD COLUMN judged INTEGER NOT NULL DEFAULT 0;
    CREATE INDEX runs_to_judge ON runs (agent, session) WHERE judged = 0;
    CREATE TABLE session_starts (
        agent TEXT NOT NULL,
        session TEXT NOT NULL,
        tip TEXT,
        at REAL NOT NULL,
        PRIMARY KEY (agent, session)
    );
    CREATE TABLE memo_impressions (
        id INTEGER PRIMARY KEY,
        agent TEXT NOT NULL,
        lesson TEXT NOT NULL,
        section TEXT NOT NULL,
        session TEXT NOT NULL,
        tip TEXT,
        at REAL NOT NULL,
        UNIQUE (agent, lesson, session)
    );
    CREATE INDEX memo_impressions_by_session ON memo_impressions (agent, session);
    CREATE TABLE ignored (
        agent TEXT NOT NULL,
        path TEXT NOT NULL,
        idx INTEGER NOT NULL,
        session TEXT NOT NULL,
        kind TEXT NOT NULL,
        lesson TEXT NOT NULL,
        place TEXT NOT NULL,
        commit_sha TEXT,
        how TEXT NOT NULL,
        evidence TEXT NOT NULL DEFAULT '{}',
        at REAL NOT NULL,
        PRIMARY KEY (agent, path, idx, kind, lesson)
    );
    CREATE INDEX ignored_by_lesson ON ignored (agent, kind, lesson);
    CREATE INDEX impressions_by_session ON impressions (agent, session);
    CREATE INDEX invocations_by_session ON invocations (agent, session);
    """,
    # 4: lessons proven: each lesson's result in one `evolve eval` (claude plugin eval), with
    # and without the agent's plugin. `status`: full (every run of both arms ran), partial
    # (interrupted, a cost ceiling: never read as a result) or error (the case failed to load
    # or a grader threw: `detail` says why). Kept like reflections: never pruned.
    """
    CREATE TABLE evals (
        id INTEGER PRIMARY KEY,
        agent TEXT NOT NULL,
        run_id TEXT NOT NULL,
        kind TEXT NOT NULL,
        lesson TEXT NOT NULL,
        status TEXT NOT NULL,
        score_with REAL,
        score_without REAL,
        delta REAL,
        runs_with INTEGER NOT NULL,
        runs_without INTEGER NOT NULL,
        cost_usd REAL NOT NULL,
        commit_sha TEXT,
        tip TEXT,
        detail TEXT NOT NULL DEFAULT '',
        at REAL NOT NULL
    );
    CREATE INDEX evals_by_lesson ON evals (agent, kind, lesson, at);
    """,
]
