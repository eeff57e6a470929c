"""The SQLite file behind run state: opening it safely, creating or migrating its schema.

Where it lives is ``location.py``; its schema, version by version, ``migrations.py``.

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
from review_gate.state import open_databases
from review_gate.state.cache_dir import cache_dir
from review_gate.state.location import GITIGNORE, SIDE_FILES, keep_out_of_git
from review_gate.state.migrations import MIGRATIONS, SCHEMA_VERSION

APPLICATION = "review-gate"
BUSY_TIMEOUT_MS = 10_000
SQLITE_HEADER = b"SQLite format 3\x00"


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
    # review-gate's own cache directory is ours to mark even when something else of ours made it
    # first (a checked configuration kept there): a home kept in git must not list the state
    if (created or directory == cache_dir()) and not ignore.exists():
        with contextlib.suppress(OSError):  # only a convenience
            ignore.write_text(GITIGNORE.format(name=name), encoding="utf-8")


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
