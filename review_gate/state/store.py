"""The SQLite file behind run state: where it lives, opening it safely, its schema.

The file is ours only when its ``meta`` table says so. Anything else at the path (not SQLite,
or a database of another program) is a StateError and is never written to.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from review_gate.errors import StateError
from review_gate.models import ReviewConfig
from review_gate.state import open_databases
from review_gate.state.cache_dir import cache_dir

APPLICATION = "review-gate"
SCHEMA_VERSION = 10
BUSY_TIMEOUT_MS = 10_000
SQLITE_HEADER = b"SQLite format 3\x00"
SIDE_FILES = ("-wal", "-shm", "-journal")

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

# The run state's .gitignore, in its two forms. The store writes one into a directory it
# creates, so the database never shows up as an untracked file to review; that one also
# ignores itself: running the gate must not leave an untracked folder in the working tree.
# `review-gate init` writes the committable one (the same lines for the default name) in its place.
_IGNORED = "{name}\n{name}-*\n"
GITIGNORE = "# review-gate run state: per machine, never committed\n" + _IGNORED + ".gitignore\n"
INIT_GITIGNORE = "# run state is per machine; never commit it\n" + _IGNORED.format(name="state.db")


def is_store_gitignore(path: Path, name: str = "state.db") -> bool:
    """True for a .gitignore the store wrote and nobody changed."""
    return _text(path) == GITIGNORE.format(name=name)


def is_ours_gitignore(path: Path) -> bool:
    """True for a .gitignore the store or ``review-gate init`` wrote, unchanged."""
    return _text(path) in (GITIGNORE.format(name="state.db"), INIT_GITIGNORE)


def _text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def state_location(config: ReviewConfig, root: Path | None) -> Path:
    """Where ``state_path`` of review-gate.json puts the file: absolute as given, else relative to
    the repository root. Outside a repository there is no project to keep state beside, so a
    relative state_path is taken from the user's cache directory (``$XDG_CACHE_HOME/review-gate``,
    a leading ``.review-gate/`` dropped): a diff reviewed in any directory leaves nothing behind.
    Nothing is checked: ``state_file`` does that."""
    path = Path(config.settings.state_path).expanduser()
    if path.is_absolute():
        return path
    if root is None:
        parts = path.parts[1:] if path.parts[:1] == (".review-gate",) else path.parts
        return cache_dir().joinpath(*parts) if parts else cache_dir() / "state.db"
    return root / path


def state_link(config: ReviewConfig, root: Path | None) -> Path | None:
    """The first folder of a relative ``state_path`` inside the repository that is a symbolic link.

    A committed link (``.review-gate`` -> ``src``) would make the gate write its database, and
    the .gitignore beside it, wherever the link leads: the run uses no state instead, and the
    other commands refuse."""
    relative = Path(config.settings.state_path).expanduser()
    if root is None or relative.is_absolute():
        return None
    folder = root
    for part in relative.parts[:-1]:
        folder = folder / part
        if folder.is_symlink():
            return folder
    return None


def state_file(config: ReviewConfig, root: Path | None) -> Path:
    """``state_location``, checked: inside a repository, no symbolic link on the way and no
    ``..`` out of it (a committed link must not make the gate write elsewhere)."""
    full = state_location(config, root)
    if root is None or Path(config.settings.state_path).expanduser().is_absolute():
        return full
    link = state_link(config, root)
    if link is not None and not _within(link.resolve(), root):
        raise StateError(f"state path {full}: a symbolic link leads it out of the repository "
                         f"(to {link.resolve()})",
                         fix="remove the link, or set an absolute state_path in review-gate.json")
    if link is not None:
        raise StateError(f"state path {full}: {link.relative_to(root).as_posix()} is a symbolic link, and "
                         "review-gate does not follow links inside the repository to its own files",
                         fix="make it a real directory, or set an absolute state_path in review-gate.json")
    if not _within(full.parent.resolve(), root):
        raise StateError(f"state path {full}: it leads out of the repository (to {full.parent.resolve()})",
                         fix="set a state_path inside the repository, or an absolute one, in review-gate.json")
    return full


def _within(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root.resolve())
    except ValueError:
        return False
    return True


def companions(path: Path) -> list[Path]:
    """The state file, its side files, and the .gitignore the store wrote beside it (as long as
    nobody changed it): the files of the run state a review must never see."""
    out = [path, *(path.with_name(path.name + s) for s in SIDE_FILES)]
    if is_store_gitignore(path.parent / ".gitignore", path.name):
        out.append(path.parent / ".gitignore")
    return out


def in_use(path: Path | str) -> bool:
    """Whether a connection of this process has the file open (``review_gate.state.open_databases``)."""
    return open_databases.in_use(path)


class Store:
    """An open state database. Always close it (or use it as a context manager)."""

    def __init__(self, path: Path, connection: sqlite3.Connection, identity: tuple[int, int] | None = None) -> None:
        self.path = path
        self.db = connection
        self._identity = identity

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.db.close()
        identity, self._identity = self._identity, None
        open_databases.remove(identity)  # after the close: until then no reader may open the file

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction, taken up front (BEGIN IMMEDIATE) so it never deadlocks.

        An SQLite failure (a full disk, an I/O error, a file made read-only, a lock held past
        the busy timeout) is a StateError naming the file: the user can act on it.
        """
        try:
            with self.transaction() as db:
                yield db
        except sqlite3.Error as exc:
            raise write_error(self.path, exc) from exc

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """``write`` with SQLite's own errors, for opening, which retries on some of them."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield self.db
        except BaseException:
            if self.db.in_transaction:  # SQLite may have rolled back by itself (SQLITE_FULL)
                with contextlib.suppress(sqlite3.Error):
                    self.db.execute("ROLLBACK")
            raise
        try:
            self.db.execute("COMMIT")
        except sqlite3.Error:
            if self.db.in_transaction:
                with contextlib.suppress(sqlite3.Error):
                    self.db.execute("ROLLBACK")
            raise


_WRITE_FIXES = {
    "full": "free some disk space, or set another state_path in review-gate.json, or pass --no-state",
    "readonly": "make the file and its directory writable, or set another state_path in review-gate.json, "
                "or pass --no-state",
    "busy": "another review-gate process held the run state for longer than "
            f"{BUSY_TIMEOUT_MS // 1000} s; run the command again when it is done",
    "io": "the disk failed a read or write: free some disk space and check the disk; if `PRAGMA "
          "integrity_check` says the file is damaged, move it away as well",
    "damaged": "the file is damaged: move it (and its -wal and -shm files) away, and review-gate creates a new "
               "one (its history, acceptances and debt are lost), or restore it from a backup",
}


def write_error(path: Path, exc: sqlite3.Error) -> StateError:
    """A failed write as the user can act on it: a full disk, a read-only file, a lock held too
    long, or a damaged file each get their own fix (a damaged file is not a full disk)."""
    return StateError(f"cannot write the run state {path}: {exc}", fix=_WRITE_FIXES[_write_failure(exc)])


def _write_failure(exc: sqlite3.Error) -> str:
    name = str(getattr(exc, "sqlite_errorname", "") or "")  # Python 3.11+; the message before that
    text = str(exc).lower()
    if name.startswith("SQLITE_FULL") or "is full" in text:
        return "full"
    if name.startswith(("SQLITE_READONLY", "SQLITE_PERM", "SQLITE_CANTOPEN")) or "readonly" in text \
            or "unable to open" in text:
        return "readonly"
    if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "locked" in text or "busy" in text:
        return "busy"
    if name.startswith("SQLITE_IOERR") or "i/o error" in text:
        return "io"
    return "damaged"  # SQLITE_CORRUPT, SQLITE_NOTADB and anything else


def open_store(path: Path, *, create: bool = True) -> Store | None:
    """Open (and with ``create``, create or migrate) the store; None when absent and not created."""
    # Closing any descriptor of the file in this process would drop the locks our connections
    # hold on it (review_gate.state.open_databases): the header is read only while none is open, and the new
    # connection is counted before another thread can check the file.
    with open_databases.opening():
        _check_file(path)
        if not path.exists():
            if not create:
                return None
            _make_directory(path.parent, path.name)
        if create:
            keep_out_of_git(path)
        try:
            # check_same_thread off: the run command uses it from worker threads, one call at a time
            connection = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                                         check_same_thread=False)
        except sqlite3.Error as exc:
            raise StateError(f"cannot open the state database {path}: {exc}", fix=_FIX_PATH) from exc
        identity = open_databases.identity(path)  # sqlite3.connect opened (or created) the file: it exists now
        open_databases.add(identity)
    store = Store(path, connection, identity)
    try:
        connection.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        _prepare_when_free(store)
    except sqlite3.OperationalError as exc:  # the file is fine; the disk, its rights or a lock are not
        store.close()
        raise StateError(f"cannot use the state database {path}: {exc}", fix=_FIX_PATH) from exc
    except sqlite3.DatabaseError as exc:
        store.close()
        raise StateError(f"{path} is not a usable review-gate state database: {exc}", fix=_FIX_FILE) from exc
    except BaseException:
        store.close()
        raise
    return store


_FIX_FILE = "move that file away (review-gate creates a new one), or set another state_path in review-gate.json"
_FIX_PATH = "set a writable state_path in review-gate.json, or pass --no-state"


def _check_file(path: Path) -> None:
    """Refuse, before SQLite touches it, anything at ``path`` that is not an SQLite file, and a
    symbolic link there or at a side file: SQLite would write through it, wherever it points.
    The header of a file a connection of ours has open is not read (``review_gate.state.open_databases``): it was
    checked when that connection was made."""
    for candidate in (path, *(path.with_name(path.name + side) for side in SIDE_FILES)):
        if candidate.is_symlink():
            raise StateError(f"state path {candidate} is a symbolic link; review-gate does not write through one",
                             fix="delete the link (review-gate creates a new database), or set another "
                                 "state_path in review-gate.json")
    if path.exists() and not path.is_file():
        raise StateError(f"state path {path} is not a file", fix=_FIX_FILE)
    if open_databases.in_use(path):  # opening it here, then closing it, would drop our connections' locks
        return
    try:
        with path.open("rb") as handle:
            head = handle.read(len(SQLITE_HEADER))
    except FileNotFoundError:
        return
    except OSError as exc:
        raise StateError(f"cannot read the state database {path}: {exc.strerror}", fix=_FIX_PATH) from exc
    if head and head != SQLITE_HEADER:
        raise StateError(f"{path} is not an SQLite database; review-gate keeps its run state there",
                         fix=_FIX_FILE)


def _make_directory(directory: Path, name: str) -> None:
    try:
        created = not directory.exists()
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StateError(f"cannot create {directory} for the state database: {exc.strerror}",
                         fix=_FIX_PATH) from exc
    ignore = directory / ".gitignore"
    if created and not ignore.exists():
        with contextlib.suppress(OSError):  # only a convenience
            ignore.write_text(GITIGNORE.format(name=name), encoding="utf-8")


def keep_out_of_git(path: Path) -> None:
    """Make sure git never lists the state file at ``path`` as an untracked file, when it lies in
    a repository whose working tree is reviewed (a hand-made ``.review-gate/`` has no
    .gitignore: the run took its own database for a change of the state, and ``git add -A``
    committed it).

    A directory with no .gitignore gets the store's, which ignores the state and itself (so it
    is no untracked file either). One with a .gitignore of ours is done. One with the user's
    own .gitignore is left as it is (a tracked file the review would see change): the state's
    names, anchored, go into the repository's ``info/exclude`` instead, which git reads for
    every worktree and which is never committed. Each step is only a convenience: a failure is
    ignored, and the run still uses no state the change brings (``own_files``)."""
    directory = path.parent
    git_dir = _git_dir(directory)
    if git_dir is None:
        return
    ignore = directory / ".gitignore"
    with contextlib.suppress(OSError, ValueError):
        if not ignore.exists() and not ignore.is_symlink():
            ignore.write_text(GITIGNORE.format(name=path.name), encoding="utf-8")
            return
        if _text(ignore) in (GITIGNORE.format(name=path.name), INIT_GITIGNORE.replace("state.db", path.name)):
            return
        worktree = _worktree_of(directory)
        if worktree is None:
            return
        where = "/" + (directory.resolve().relative_to(worktree.resolve()) / path.name).as_posix()
        _exclude(git_dir / "info" / "exclude", [where, where + "-*"])


def _worktree_of(directory: Path) -> Path | None:
    """The top of the git working tree ``directory`` is in: the nearest folder holding ``.git``."""
    for folder in (directory, *directory.parents):
        if (folder / ".git").exists():
            return folder
    return None


def _git_dir(directory: Path) -> Path | None:
    """The repository's common git directory (where ``info/exclude`` lives) for a working tree
    that holds ``directory``: ``.git`` itself, or for a linked worktree or a submodule what its
    ``.git`` file names, and that directory's ``commondir``. None outside a repository."""
    worktree = _worktree_of(directory)
    if worktree is None:
        return None
    dot_git = worktree / ".git"
    if dot_git.is_dir():
        return dot_git
    text = _text(dot_git) or ""
    if not text.startswith("gitdir:"):
        return None
    found = (worktree / text[len("gitdir:"):].strip()).resolve()
    common = _text(found / "commondir")
    return (found / common.strip()).resolve() if common else found


def _exclude(exclude: Path, lines: list[str]) -> None:
    present = (_text(exclude) or "").splitlines()
    missing = [line for line in lines if line not in present]
    if not missing:
        return
    exclude.parent.mkdir(parents=True, exist_ok=True)
    with exclude.open("a", encoding="utf-8") as handle:
        start = "\n" if present and not (_text(exclude) or "").endswith("\n") else ""
        handle.write(start + "# review-gate run state: per machine, never committed\n" + "\n".join(missing) + "\n")


def _prepare_when_free(store: Store) -> None:
    """_prepare, retried while another process holds a lock SQLite does not wait for by itself
    (switching a new file to WAL, or recovering a WAL, answers "locked" at once)."""
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    pause = 0.01
    while True:
        try:
            _prepare(store)
            return
        except sqlite3.OperationalError as exc:
            text = str(exc).lower()
            if ("locked" not in text and "busy" not in text) or time.monotonic() > deadline:
                raise
            if store.db.in_transaction:
                store.db.execute("ROLLBACK")
        time.sleep(pause)
        pause = min(pause * 2, 0.2)


def _prepare(store: Store) -> None:
    db = store.db
    version = _version(store)  # first, read-only: a foreign database must stay byte for byte as it is
    if db.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":  # WAL sticks to the file
        db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = NORMAL")
    db.execute("PRAGMA foreign_keys = ON")
    if version == SCHEMA_VERSION:
        return
    with store.transaction():  # create or migrate under the write lock; another process may race us
        version = _version(store)
        if version == 0:
            db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            db.execute("INSERT INTO meta VALUES ('application', ?), ('schema_version', '0')", (APPLICATION,))
        for step in range(version + 1, SCHEMA_VERSION + 1):
            for statement in MIGRATIONS[step]:
                db.execute(statement)
        db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION),))


def _version(store: Store) -> int:
    """The schema version of an existing store, 0 for an empty database; StateError if foreign."""
    db = store.db
    tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if not tables:
        return 0
    foreign = f"{store.path} is an SQLite database of another program (no review-gate meta table)"
    if "meta" not in tables:
        raise StateError(foreign, fix=_FIX_FILE)
    try:
        meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
    except sqlite3.DatabaseError as exc:
        raise StateError(foreign, fix=_FIX_FILE) from exc
    if meta.get("application") != APPLICATION:
        raise StateError(foreign.replace("no review-gate meta table", "its meta table is not review-gate's"),
                         fix=_FIX_FILE)
    try:
        version = int(meta.get("schema_version", ""))
    except ValueError:
        raise StateError(f"{store.path}: unreadable schema version in its meta table", fix=_FIX_FILE) from None
    if version > SCHEMA_VERSION:
        raise StateError(f"{store.path} was written by a newer review-gate (schema {version}, "
                         f"this one reads {SCHEMA_VERSION})", fix="upgrade review-gate, or " + _FIX_FILE)
    return version


def process_start(pid: int) -> str:
    """When process ``pid`` started (Linux clock ticks since boot), '' where unknown: with the pid
    it tells a live run from a dead one whose pid was reused."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    fields = stat.rsplit(")", 1)[1].split()
    return fields[19] if len(fields) > 19 else ""


def process_alive(pid: int, start: str) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    if state == "Z":
        return False
    return not start or process_start(pid) == start
