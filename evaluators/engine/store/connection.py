"""Opening the store and holding its one connection: WAL mode, one process at a time opening (and migrating)
a store file, a read-only store where its folder refuses writes, damage told apart from other errors, and the
transactions every part of the store writes in (see StoreConnection)."""

from __future__ import annotations

import contextlib
import errno
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from evaluators.core.errors import ToolboardError
from evaluators.core.paths import toolboard_home
from evaluators.engine.store.errors import StoreDamagedError, StoreReadOnlyError, is_damage
from evaluators.engine.store.schema import migrate


def default_db_path() -> Path:
    return toolboard_home() / "toolboard.db"


# How long a write waits for another process's lock on the store (sqlite3.connect's timeout), in ms.
BUSY_TIMEOUT_MS = 30_000


def _emptied(path: Path) -> bool:
    """A 0-byte file where a store was: SQLite would silently start an empty store over it."""
    if not path.is_file() or path.stat().st_size > 0:
        return False
    wal = path.with_name(path.name + "-wal")
    return not (wal.is_file() and wal.stat().st_size > 0)


def set_aside(path: Path, now: float | None = None) -> Path:
    """Rename a damaged store (and its WAL and shared-memory files) out of the way; never delete it."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now))
    target = path.with_name(f"{path.name}.damaged-{stamp}")
    for suffix in ("", "-wal", "-shm"):
        part = path.with_name(path.name + suffix)
        if part.exists():
            part.rename(target.with_name(target.name + suffix))
    return target


# Why a store's folder refuses writes: read-only media, or no permission.
_READ_ONLY_ERRNOS = (errno.EROFS, errno.EACCES, errno.EPERM)


class _Connection(sqlite3.Connection):
    """A connection whose refused writes (SQLITE_READONLY: a read-only file, folder or medium) are one clear
    StoreReadOnlyError instead of sqlite's words, wherever in the store they happen."""

    store_path: Path
    read_only_reason: str | None = None  # why the store was opened read-only, if it was

    def execute(self, *args: Any) -> sqlite3.Cursor:
        with self._writes_refused():
            return super().execute(*args)

    def executemany(self, *args: Any) -> sqlite3.Cursor:
        with self._writes_refused():
            return super().executemany(*args)

    def executescript(self, *args: Any) -> sqlite3.Cursor:
        with self._writes_refused():
            return super().executescript(*args)

    @contextlib.contextmanager
    def _writes_refused(self) -> Iterator[None]:
        try:
            yield
        except sqlite3.OperationalError as error:
            if getattr(error, "sqlite_errorname", "").startswith("SQLITE_READONLY"):
                raise StoreReadOnlyError(self.store_path, self.read_only_reason or str(error)) from None
            raise


@contextlib.contextmanager
def _opening(path: Path) -> Iterator[str | None]:
    """Held while a store is opened and migrated: one process at a time per store file (an advisory lock on
    `<store>.lock` beside it; where advisory locks do not exist, nothing is held). Yields None, or why the
    folder cannot be written (then nothing is held: a store that cannot change needs no lock)."""
    try:
        import fcntl
    except ImportError:
        yield None
        return
    try:
        lock = open(path.with_name(path.name + ".lock"), "a")  # noqa: SIM115 - closed below
    except OSError as error:
        if error.errno not in _READ_ONLY_ERRNOS:
            raise
        yield os.strerror(error.errno).lower()
        return
    with lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield None
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _connect(path: Path, read_only: str | None) -> sqlite3.Connection:
    """A connection to the store; on a folder that cannot be written, a read-only one (`immutable` where
    even SQLite's shared-memory file cannot be made: nothing can change the file then anyway)."""
    db: _Connection | None
    if read_only is None:
        db = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000, factory=_Connection)
    else:
        if not path.exists():
            raise StoreReadOnlyError(path, f"{read_only}, and there is no store there yet")
        db = None
        for flags in ("mode=ro", "immutable=1"):
            try:
                db = sqlite3.connect(f"{path.absolute().as_uri()}?{flags}", uri=True, check_same_thread=False,
                                     isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000, factory=_Connection)
                db.store_path, db.read_only_reason = path, read_only
                db.execute("SELECT count(*) FROM sqlite_master").fetchone()
                break
            except sqlite3.OperationalError:
                if db is not None:
                    db.close()
                db = None
        if db is None:
            raise StoreReadOnlyError(path, f"{read_only}, and SQLite cannot read it there")
    db.store_path = path
    db.read_only_reason = read_only
    return db


class StoreConnection:
    """The store's connection, lock and transactions: what each part of the store (runs, predictions, scores, the
    response cache, run transfer) builds on; Store puts the parts together."""

    def __init__(self, path: str | Path | None = None):
        self.path = Path(path) if path else default_db_path()
        with contextlib.suppress(FileExistsError):  # an existing folder on read-only media says so, not EEXIST
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        # Inside atomic(): the store's own transactions become savepoints of the one around them.
        self._atomic_depth = 0
        # Processes opening a new store at once (a queue worker's pool) would each create and migrate it.
        with _opening(self.path) as read_only:
            if _emptied(self.path):
                raise StoreDamagedError(self.path, "the file is empty (0 bytes) but a store was there")
            try:
                self._open(read_only)
            except StoreReadOnlyError:
                if read_only is not None or not self.path.exists():
                    raise
                # Its lock could be taken, but the file or its folder refuses writes (permissions, not media).
                self._open("the store or its folder cannot be written")

    def _open(self, read_only: str | None) -> None:
        self.read_only = read_only
        self._db = _connect(self.path, read_only)
        self._db.row_factory = sqlite3.Row
        try:
            if read_only is None:
                # Taken only by a store with no table yet, and only before WAL mode is set: deleted runs' pages can
                # then go back to the disk (reclaim_space). An older store keeps its mode and reuses freed pages.
                self._db.execute("PRAGMA auto_vacuum=INCREMENTAL")
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA foreign_keys=ON")
            self._db.execute("SELECT count(*) FROM sqlite_master").fetchone()
            self._migrate()
        except (sqlite3.DatabaseError, ToolboardError) as error:
            self._db.close()
            if is_damage(error):
                raise StoreDamagedError(self.path, str(error)) from None
            raise

    def check_integrity(self) -> None:
        """Read every page (costs a pass over the file: the app does it once when it starts)."""
        try:
            rows = self._query("PRAGMA quick_check")
        except sqlite3.DatabaseError as error:
            if is_damage(error):
                raise StoreDamagedError(self.path, str(error)) from None
            raise
        problems = [row[0] for row in rows if row[0] != "ok"]
        if problems:
            raise StoreDamagedError(self.path, "; ".join(problems[:3]))

    def close(self) -> None:
        with self._lock:
            self._db.close()

    @contextlib.contextmanager
    def _transaction(self, begin: str = "BEGIN") -> Iterator[sqlite3.Connection]:
        """All or nothing: committed when the block ends, rolled back if it raises. `BEGIN IMMEDIATE`
        when what the block reads must not change before it writes. Inside atomic() it is a savepoint: rolled
        back alone if it raises, committed only with the whole."""
        with self._lock:
            if self._atomic_depth:
                with self._savepoint():
                    yield self._db
                return
            self._db.execute(begin)
            try:
                yield self._db
                self._db.execute("COMMIT")
            except BaseException:
                if self._db.in_transaction:  # SQLite may have rolled back by itself already
                    self._db.execute("ROLLBACK")
                raise

    @contextlib.contextmanager
    def _savepoint(self) -> Iterator[None]:
        name = f"inner_{self._atomic_depth}"
        self._db.execute(f"SAVEPOINT {name}")
        try:
            yield
        except BaseException:
            if self._db.in_transaction:  # an I/O error or a full disk may have rolled back the whole already
                self._db.execute(f"ROLLBACK TO {name}")
                self._db.execute(f"RELEASE {name}")
            raise
        self._db.execute(f"RELEASE {name}")

    @contextlib.contextmanager
    def atomic(self) -> Iterator[None]:
        """One transaction around several of the store's writes (an upload's run, its rows, verdicts and status):
        a crash at any moment, kill -9 included, leaves all of them or none. Other threads' store calls wait
        until it ends; other processes' writes wait for its lock (BEGIN IMMEDIATE)."""
        with self._lock:
            if self._atomic_depth:
                with self._savepoint():
                    yield
                return
            self._db.execute("BEGIN IMMEDIATE")
            self._atomic_depth = 1
            try:
                yield
                self._db.execute("COMMIT")
            except BaseException:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise
            finally:
                self._atomic_depth = 0

    # ---- room: what the store takes on disk ------------------------------------------------

    def used_bytes(self) -> int:
        """The bytes of the store's pages that hold data, as this connection sees them (inside a transaction, with
        its writes). Pages freed by deletions are reused before the file grows, so they do not count; nor does the
        write-ahead log, emptied after large writes (checkpoint): the free-disk floor covers it meanwhile."""
        with self._lock:
            pages = self._db.execute("PRAGMA page_count").fetchone()[0]
            free = self._db.execute("PRAGMA freelist_count").fetchone()[0]
            size = self._db.execute("PRAGMA page_size").fetchone()[0]
        return int((pages - free) * size)

    def checkpoint(self) -> None:
        """Copy the write-ahead log into the store and empty it (after a large write: else the log keeps the
        write's size on disk until the next checkpoint). Best effort: readers in other processes may hold it."""
        if self.read_only is not None:
            return
        with self._lock, contextlib.suppress(sqlite3.OperationalError):
            # Never waits: with another process reading, it copies what it can now and the log empties next time
            # (waiting out the busy timeout would hold every thread of this process that reads the store).
            self._db.execute("PRAGMA busy_timeout=0")
            try:
                self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            finally:
                self._db.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")

    def reclaim_space(self) -> None:
        """Return the pages freed by deletions to the file system where the store allows it (stores made by this
        version: auto_vacuum=INCREMENTAL), then checkpoint. Older stores reuse freed pages before growing."""
        if self.read_only is not None:
            return
        with self._lock, contextlib.suppress(sqlite3.OperationalError):
            self._db.execute("PRAGMA incremental_vacuum").fetchall()
        self.checkpoint()

    def _migrate(self) -> None:
        with self._lock:
            migrate(self._db, self.path, self.read_only)

    def schema_version(self) -> int:
        return int(self._query("PRAGMA user_version")[0][0])

    def _query(self, sql: str, params: tuple[Any, ...] = ()) -> list[sqlite3.Row]:
        with self._lock:
            return self._db.execute(sql, params).fetchall()
