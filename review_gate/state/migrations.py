"""The run state's schema, version by version: each version's SQL statements take the schema from
the version before it to this one (``store._prepare`` runs those a file lacks, in one transaction).

One table of statements; only ``SCHEMA_VERSION`` and ``MIGRATIONS`` are read elsewhere.
"""

from __future__ import annotations

SCHEMA_VERSION = 10

# Seed 003's pairs whole, and provider batches.
MIGRATION_SCALE: tuple[str, ...] = (
    # How the run was executed (live, batch), the models its llm agents used, where its raw
    # answers and debug log are, and why it failed or which pairs it lacks.
    "ALTER TABLE review_runs ADD COLUMN runner TEXT NOT NULL DEFAULT 'live'",
    "ALTER TABLE review_runs ADD COLUMN model TEXT NOT NULL DEFAULT ''",
    "ALTER TABLE review_runs ADD COLUMN raw_output TEXT",
    "ALTER TABLE review_runs ADD COLUMN debug_log TEXT",
    "ALTER TABLE review_runs ADD COLUMN failure TEXT",
    # A pair's own outcome: its decision (as the gate would judge its findings alone), a one-line
    # rationale, the evidence (fingerprint, line and rule of each finding), the commit reviewed
    # and how it was reviewed.
    "ALTER TABLE review_pairs ADD COLUMN decision TEXT",
    "ALTER TABLE review_pairs ADD COLUMN rationale TEXT",
    "ALTER TABLE review_pairs ADD COLUMN evidence TEXT NOT NULL DEFAULT '[]'",
    "ALTER TABLE review_pairs ADD COLUMN reviewed_commit TEXT",
    "ALTER TABLE review_pairs ADD COLUMN review_kind TEXT NOT NULL DEFAULT 'live' "
    "CHECK (review_kind IN ('live', 'batch', 'sweep'))",
    "CREATE INDEX review_pairs_file ON review_pairs (file, agent)",
    # acceptance_events: 'ack' beside accept, override and revoke. A CHECK cannot be altered: the
    # table is rebuilt. Its self-reference names the new table, so dropping the old one touches no
    # row of it; the rename then points it at itself under the old name.
    """CREATE TABLE acceptance_events_new (
        id INTEGER PRIMARY KEY,
        kind TEXT NOT NULL CHECK (kind IN ('accept', 'ack', 'override', 'revoke')),
        fingerprint TEXT NOT NULL,
        reason TEXT NOT NULL,
        who TEXT NOT NULL,
        created_at TEXT NOT NULL,
        expires TEXT,
        review_pair_id INTEGER REFERENCES review_pairs (id) ON DELETE SET NULL,
        revokes INTEGER REFERENCES acceptance_events_new (id)
    )""",
    "INSERT INTO acceptance_events_new (id, kind, fingerprint, reason, who, created_at, expires, review_pair_id, "
    "revokes) SELECT id, kind, fingerprint, reason, who, created_at, expires, review_pair_id, revokes "
    "FROM acceptance_events",
    "DROP TABLE acceptance_events",
    "ALTER TABLE acceptance_events_new RENAME TO acceptance_events",
    "CREATE INDEX acceptance_fingerprint ON acceptance_events (fingerprint)",
    # A run sent to a provider's batch API: what it needs to be finished later (its plan, config,
    # the results of the agents that ran locally, the request map), frozen at submit.
    """CREATE TABLE batch_runs (
        run_id TEXT PRIMARY KEY REFERENCES review_runs (id) ON DELETE CASCADE,
        state TEXT NOT NULL CHECK (state IN ('submitted', 'collected')),
        frozen TEXT NOT NULL,
        submitted_at TEXT NOT NULL,
        collected_at TEXT
    )""",
    # One provider batch of such a run (a run whose llm agents use two endpoints has two).
    """CREATE TABLE review_batches (
        id INTEGER PRIMARY KEY,
        run_id TEXT NOT NULL REFERENCES review_runs (id) ON DELETE CASCADE,
        ordinal INTEGER NOT NULL,
        provider TEXT NOT NULL,
        endpoint TEXT NOT NULL,
        batch_id TEXT NOT NULL,
        input_file_id TEXT,
        status TEXT NOT NULL,
        requests INTEGER NOT NULL,
        counts TEXT NOT NULL DEFAULT '{}',
        created_at TEXT NOT NULL,
        checked_at TEXT,
        UNIQUE (run_id, ordinal)
    )""",
)

# The gap log (docs/gaps.md): what the configuration missed, per run, to count what recurs.
MIGRATION_GAPS: tuple[str, ...] = (
    # One row per gap a finished run reported; gap_id is Gap.id (a hash of kind and subject), the
    # same in every run, so recurring gaps group; patch is the gap's ConfigPatch as JSON, or NULL.
    """CREATE TABLE review_gaps (
        id INTEGER PRIMARY KEY,
        run_id TEXT NOT NULL REFERENCES review_runs (id) ON DELETE CASCADE,
        gap_id TEXT NOT NULL,
        kind TEXT NOT NULL,
        subject TEXT NOT NULL,
        reason TEXT NOT NULL,
        suggestion TEXT NOT NULL,
        patch TEXT,
        recorded_at TEXT NOT NULL,
        UNIQUE (run_id, gap_id)
    )""",
    "CREATE INDEX review_gaps_gap ON review_gaps (gap_id)",
    # A gap's patch applied with `review-gate gaps --apply`: the gap is closed until a run
    # recorded after it (a review_gaps row above last_row) reports it again.
    """CREATE TABLE gap_fixes (
        gap_id TEXT PRIMARY KEY,
        applied_at TEXT NOT NULL,
        last_row INTEGER NOT NULL,
        file TEXT NOT NULL,
        directory TEXT NOT NULL,
        who TEXT NOT NULL
    )""",
)

# Deferred debt (seed 004: pass_with_warnings -> tech-debt issues): one row per fingerprint a
# passing run let through, kept across runs (no reference to a run row: runs are pruned, debt is
# not), until a later run shows it gone; and the issue opened for it, so it is opened once.
MIGRATION_DEBT: tuple[str, ...] = (
    """CREATE TABLE debt_items (
        id INTEGER PRIMARY KEY,
        fingerprint TEXT NOT NULL UNIQUE,
        status TEXT NOT NULL CHECK (status IN ('open', 'resolved', 'waived')),
        severity TEXT NOT NULL,
        agent TEXT NOT NULL,
        rule_id TEXT,
        category TEXT NOT NULL,
        file TEXT,
        line INTEGER,
        end_line INTEGER,
        message TEXT NOT NULL,
        recommendation TEXT,
        first_seen TEXT NOT NULL,
        first_run TEXT NOT NULL,
        last_seen TEXT NOT NULL,
        last_run TEXT NOT NULL,
        runs INTEGER NOT NULL DEFAULT 1,
        base TEXT,
        filter_mode TEXT NOT NULL,
        closed_at TEXT,
        closed_run TEXT,
        resolution TEXT,
        issue_url TEXT,
        linked_at TEXT,
        linked_by TEXT
    )""",
    "CREATE INDEX debt_items_status ON debt_items (status, file)",
)

# What a loop session pins at `loop start` (docs/loop.md): its own id (the decision log tells two
# sessions of one task apart by it), the configuration's digest and the base commit every review
# of the session uses (a coder can neither weaken the gate nor commit its change away), and the
# mark in the coder's environment (a coder left by a killed `loop start` is found and killed).
# A session started before this schema has NULL in each and is reviewed as it was.
MIGRATION_PINS: tuple[str, ...] = (
    "ALTER TABLE loop_sessions ADD COLUMN session_id TEXT",
    "ALTER TABLE loop_sessions ADD COLUMN config_pin TEXT",
    "ALTER TABLE loop_sessions ADD COLUMN base_commit TEXT",
    "ALTER TABLE loop_sessions ADD COLUMN coder_mark TEXT",
)

# The issue opened for a gap (the Action's open-gap-issues, `review-gate gaps link`), so that a
# gap is opened as an issue once. Keyed by the gap's id, which is the same in every run, and not
# tied to a run row: runs are pruned, the link is kept.
MIGRATION_GAP_ISSUES: tuple[str, ...] = (
    """CREATE TABLE gap_issues (
        gap_id TEXT PRIMARY KEY,
        issue_url TEXT NOT NULL,
        linked_at TEXT NOT NULL,
        linked_by TEXT NOT NULL
    )""",
)

# Each version's statements take the schema from the version before it to this one.
MIGRATIONS: dict[int, tuple[str, ...]] = {
    1: (
        """CREATE TABLE review_runs (
            id TEXT PRIMARY KEY,
            started_at TEXT NOT NULL,
            finished_at TEXT,
            base TEXT,
            head TEXT,
            source TEXT NOT NULL,
            config_sha TEXT NOT NULL,
            status TEXT NOT NULL CHECK (status IN ('running', 'completed', 'failed', 'incomplete')),
            decision TEXT,
            metrics TEXT,
            tokens_in INTEGER NOT NULL DEFAULT 0,
            tokens_out INTEGER NOT NULL DEFAULT 0,
            cost_usd REAL NOT NULL DEFAULT 0,
            duration_s REAL,
            report TEXT,
            pid INTEGER NOT NULL,
            host TEXT NOT NULL,
            proc_start TEXT NOT NULL DEFAULT ''
        )""",
        "CREATE INDEX review_runs_started ON review_runs (started_at)",
        """CREATE TABLE review_pairs (
            id INTEGER PRIMARY KEY,
            run_id TEXT NOT NULL REFERENCES review_runs (id) ON DELETE CASCADE,
            file TEXT NOT NULL,
            agent TEXT NOT NULL,
            ordinal INTEGER NOT NULL,
            status TEXT NOT NULL CHECK (status IN ('pending', 'completed', 'missing', 'cached')),
            reason TEXT,
            findings TEXT NOT NULL DEFAULT '[]',
            file_sha TEXT NOT NULL,
            agent_sha TEXT NOT NULL,
            model_id TEXT NOT NULL DEFAULT '',
            reviewed_at TEXT
        )""",
        "CREATE INDEX review_pairs_fresh ON review_pairs (agent, agent_sha, model_id, status)",
        "CREATE UNIQUE INDEX review_pairs_key ON review_pairs (run_id, agent, ordinal)",
        """CREATE TABLE acceptance_events (
            id INTEGER PRIMARY KEY,
            kind TEXT NOT NULL CHECK (kind IN ('accept', 'override', 'revoke')),
            fingerprint TEXT NOT NULL,
            reason TEXT NOT NULL,
            who TEXT NOT NULL,
            created_at TEXT NOT NULL,
            expires TEXT,
            review_pair_id INTEGER REFERENCES review_pairs (id) ON DELETE SET NULL,
            revokes INTEGER REFERENCES acceptance_events (id)
        )""",
        "CREATE INDEX acceptance_fingerprint ON acceptance_events (fingerprint)",
    ),
    2: (
        # What the agent was shown of the file (its diff section and content id): the freshness
        # key since schema 2. Pairs recorded before it have '' and are never reused.
        "ALTER TABLE review_pairs ADD COLUMN input_sha TEXT NOT NULL DEFAULT ''",
        # Files the gate itself wrote into the working tree (reports, bundles), by git blob id,
        # so that a later run does not review them as part of the change.
        """CREATE TABLE written_files (
            path TEXT PRIMARY KEY,
            blob_ids TEXT NOT NULL,
            kind TEXT NOT NULL,
            run_id TEXT,
            written_at TEXT NOT NULL
        )""",
    ),
    3: (
        # How the run's llm agents were asked (seed 003: packing is provenance on the run).
        "ALTER TABLE review_runs ADD COLUMN packing TEXT NOT NULL DEFAULT 'per_agent'",
    ),
    4: (
        # The coder/reviewer loop (review_gate/loop/): one session per task, where it stands, and
        # every transition it made. Each command commits one transition at a time, so a crash
        # resumes from the last one.
        """CREATE TABLE loop_sessions (
            task TEXT PRIMARY KEY,
            phase TEXT NOT NULL CHECK (phase IN ('init', 'plan', 'generate', 'review', 'revise', 'complete',
                                                 'error', 'cancelled')),
            stage TEXT CHECK (stage IN ('prompt', 'response')),
            step TEXT NOT NULL CHECK (step IN ('work', 'judge', 'human', 'done')),
            waiting TEXT,
            iteration INTEGER NOT NULL,
            attempt INTEGER NOT NULL DEFAULT 0,
            incomplete INTEGER NOT NULL DEFAULT 0,
            feedback TEXT,
            carry TEXT,
            start_phase TEXT NOT NULL,
            task_prompt TEXT NOT NULL,
            settings_json TEXT NOT NULL,
            config_dir TEXT,
            base TEXT,
            fail_on TEXT,
            verdict TEXT,
            run_id TEXT,
            tree_hash TEXT,
            reason TEXT,
            resume_phase TEXT,
            resume_stage TEXT,
            owner_pid INTEGER,
            owner_start TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        )""",
        """CREATE TABLE loop_events (
            id INTEGER PRIMARY KEY,
            task TEXT NOT NULL REFERENCES loop_sessions (task) ON DELETE CASCADE,
            at TEXT NOT NULL,
            iteration INTEGER NOT NULL,
            phase TEXT NOT NULL,
            stage TEXT,
            kind TEXT NOT NULL,
            actor TEXT,
            file TEXT,
            sha256 TEXT,
            feedback TEXT,
            detail TEXT
        )""",
        "CREATE INDEX loop_events_task ON loop_events (task, id)",
    ),
    5: (
        # A coding agent's hook (`review-gate hook HOST`) counts the stops it blocked in a row, per
        # host session, so that it lets the agent stop after --max-blocks and hands over to a person.
        """CREATE TABLE hook_blocks (
            host TEXT NOT NULL,
            session_id TEXT NOT NULL,
            blocks INTEGER NOT NULL,
            updated_at TEXT NOT NULL,
            PRIMARY KEY (host, session_id)
        )""",
    ),
    6: MIGRATION_SCALE,
    7: MIGRATION_GAPS,
    8: MIGRATION_DEBT,
    9: MIGRATION_PINS,
    10: MIGRATION_GAP_ISSUES,
}
