"""Leases: at most one process executes a run. A lease names its holder (host and process) and expires; a
holder whose process is gone from this machine need not be waited out."""

from __future__ import annotations

import os
import re
import socket
import time
import uuid

from evaluators.engine.store.connection import StoreConnection


def lease_holder_name() -> str:
    """Who holds a lease: readable (host and process) and unique to one execution."""
    return f"{socket.gethostname()} pid {os.getpid()} ({uuid.uuid4().hex[:6]})"


def holder_is_gone(holder: str) -> bool:
    """The lease holder is a process on this machine that no longer exists (killed before it could
    release its lease): its lease need not be waited out."""
    match = re.fullmatch(r"(.+) pid (\d+) \(\w+\)", holder)
    if match is None or match.group(1) != socket.gethostname():
        return False
    try:
        os.kill(int(match.group(2)), 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # alive, someone else's
        return False
    return False


class RunLeases(StoreConnection):
    """The lease columns of the runs table."""

    def claim_lease(self, run_id: str, holder: str, seconds: float, now: float | None = None) -> bool:
        """Take (or renew) the run's lease unless another holder's is still valid and its process alive;
        atomic across processes."""
        now = time.time() if now is None else now
        with self._lock:
            cursor = self._db.execute(
                "UPDATE runs SET lease_holder=?, lease_expires=? WHERE id=?"
                " AND (lease_holder IS NULL OR lease_holder=? OR lease_expires IS NULL OR lease_expires < ?)",
                (holder, now + seconds, run_id, holder, now),
            )
            if cursor.rowcount == 1:
                return True
            row = self._db.execute("SELECT lease_holder FROM runs WHERE id=?", (run_id,)).fetchone()
            if row is None or not holder_is_gone(row[0]):
                return False
            cursor = self._db.execute("UPDATE runs SET lease_holder=?, lease_expires=? WHERE id=? AND lease_holder=?",
                                      (holder, now + seconds, run_id, row[0]))
            return cursor.rowcount == 1

    def release_lease(self, run_id: str, holder: str) -> None:
        with self._lock:
            self._db.execute("UPDATE runs SET lease_holder=NULL, lease_expires=NULL WHERE id=? AND lease_holder=?",
                             (run_id, holder))

    def live_holder(self, run_id: str, now: float | None = None) -> str | None:
        """Who executes the run right now (a valid lease held by a live process), or None."""
        now = time.time() if now is None else now
        rows = self._query("SELECT lease_holder FROM runs WHERE id=? AND lease_holder IS NOT NULL AND lease_expires >= ?",
                           (run_id, now))
        return rows[0][0] if rows and not holder_is_gone(rows[0][0]) else None

    def run_is_live(self, run_id: str, now: float | None = None) -> bool:
        return self.live_holder(run_id, now) is not None
