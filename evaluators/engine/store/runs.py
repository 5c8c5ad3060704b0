"""The runs table: creating a run, its status and sharing, reading runs back, and what a daily quota or a
visitor's byte budget counts; runs half-made by a process that died are settled when an app starts."""

from __future__ import annotations

import sqlite3
import time
import uuid
from typing import Any

from evaluators.core.errors import ToolboardError
from evaluators.engine.store.leases import RunLeases
from evaluators.engine.store.rows import RunRow, run_of_row
from evaluators.engine.store.values import json_text, storable_text

NEW_ID_ATTEMPTS = 5
# A run created this recently may still be on its way to its first request in another process: not settled yet.
HALF_MADE_GRACE_SECONDS = 10 * 60
NEVER_STARTED_MESSAGE = ("the process that created it stopped before its first request (the app restarted or was "
                         "killed): resume to run it")


def new_run_id() -> str:
    """A run id: when it was made, then random (sorts by time, unique across machines)."""
    return time.strftime("%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:6]


class RunQueries(RunLeases):
    """Runs: their rows in the runs table (each with its lease, see RunLeases)."""

    def create_run(self, benchmark: str, language: str | None, model: str, base_url: str, config: dict[str, Any],
                   fingerprint: str, total: int, source: str = "endpoint", notes: str | None = None,
                   owner: str | None = None, run_id: str | None = None) -> str:
        """`owner`: who may act on the run in a public deployment (None: the operator; shared with all).
        `run_id`: the id another store gave the run (a queue worker executing the app's run); else a new one."""
        given = run_id
        # A new id is the second it was made and 6 random hex digits: hundreds of runs made in one second (a
        # flood of uploads) may draw the same one, so a taken new id is drawn again; a given id is kept as given.
        for _ in range(NEW_ID_ATTEMPTS):
            run_id = given or new_run_id()
            try:
                with self._lock:
                    self._db.execute(
                        "INSERT INTO runs (id, benchmark, language, model, base_url, config, fingerprint, status, "
                        "created_at, total, source, notes, owner) VALUES (?, ?, ?, ?, ?, ?, ?, 'created', ?, ?, ?, ?, ?)",
                        (run_id, storable_text(benchmark), storable_text(language), storable_text(model),
                         storable_text(base_url), json_text(config), fingerprint, time.time(), total, source,
                         storable_text(notes), owner),
                    )
                return run_id
            except sqlite3.IntegrityError:
                if given or not self._query("SELECT 1 FROM runs WHERE id = ?", (run_id,)):
                    raise  # a given id taken, or another constraint: the caller's to know
        raise ToolboardError(f"no free run id after {NEW_ID_ATTEMPTS} draws")

    def set_shared(self, run_id: str, shared: bool) -> None:
        """Whether the run's outputs are shown to every visitor (its scores always are, once finished)."""
        with self._lock:
            self._db.execute("UPDATE runs SET shared=? WHERE id=?", (int(shared), run_id))

    def get_run(self, run_id: str) -> RunRow:
        rows = self._query("SELECT * FROM runs WHERE id = ?", (run_id,))
        if not rows:
            raise ToolboardError(f"no run {run_id!r} in {self.path}")
        return run_of_row(rows[0])

    def list_runs(self) -> list[RunRow]:
        """Every run, newest first, in one query (the jobs panel asks every second)."""
        return [run_of_row(row) for row in self._query("SELECT * FROM runs ORDER BY created_at DESC")]

    def created_since(self, source: str, owner: str | None, since: float) -> list[float]:
        """When the runs of `source` ("endpoint", "upload") started by `owner` (None: the operator's, every run
        on a private deployment) at or after `since` were created, oldest first: what a daily quota counts."""
        rows = self._query("SELECT created_at FROM runs WHERE source = ? AND owner IS ? AND created_at >= ?"
                           " ORDER BY created_at", (source, owner, since))
        return [row[0] for row in rows]

    def board_version(self) -> tuple[Any, ...]:
        """Changes whenever what a leaderboard shows may have changed (a run added, deleted or ended, a report
        written, a run's outputs shared: a public board shows a run's id only then), in this process or another;
        one cheap query, so a cached board can be checked on every read."""
        row = self._query("SELECT (SELECT count(*) FROM runs), (SELECT max(finished_at) FROM runs),"
                          " (SELECT count(*) FROM runs WHERE status = 'finished'),"
                          " (SELECT count(*) FROM reports), (SELECT max(created_at) FROM reports),"
                          " (SELECT count(*) FROM runs WHERE shared = 1)")[0]
        return tuple(row)

    def delete_run(self, run_id: str) -> None:
        """Remove a run and everything stored for it (used to undo a half-stored upload)."""
        with self._transaction() as db:
            for table in ("sample_scores", "reports", "predictions"):
                db.execute(f"DELETE FROM {table} WHERE run_id=?", (run_id,))
            db.execute("DELETE FROM runs WHERE id=?", (run_id,))

    def set_status(self, run_id: str, status: str, message: str | None = None) -> None:
        now = time.time()
        with self._lock:
            if status == "running":
                self._db.execute("UPDATE runs SET status=?, started_at=COALESCE(started_at, ?), message=? WHERE id=?",
                                 (status, now, message, run_id))
            else:
                self._db.execute("UPDATE runs SET status=?, finished_at=?, message=? WHERE id=?", (status, now, message, run_id))

    def stored_bytes_since(self, owner: str | None, since: float) -> int:
        """The bytes of text written by `owner`'s runs and uploads (None: the operator's, every run on a private
        deployment) created at or after `since`: what a visitor's daily byte budget counts."""
        row = self._query("SELECT COALESCE(sum(stored_bytes), 0) FROM runs WHERE owner IS ? AND created_at >= ?",
                          (owner, since))
        return int(row[0][0])

    def reconcile_half_made(self, now: float | None = None, grace: float = HALF_MADE_GRACE_SECONDS) -> list[str]:
        """Runs left half-made by a process that died (kill -9, a lost machine), settled when an app starts: an
        upload's run still `created` (stored before uploads were one transaction) is deleted with its rows, so it
        neither shows nor counts against a quota; a run started from an endpoint that never got to its first
        request (`created`, older than `grace` seconds, no live lease) is marked interrupted with why, so it can be
        resumed. Returns a line per run settled; the space of deleted runs is reclaimed."""
        now = time.time() if now is None else now
        settled: list[str] = []
        candidates = self._query("SELECT id, source FROM runs WHERE status = 'created' AND created_at < ?",
                                 (now - grace,))
        for run_id, source in candidates:
            if self.run_is_live(run_id, now):
                continue
            if source == "upload":
                self.delete_run(run_id)
                settled.append(f"upload {run_id}: half-stored when its process stopped; removed")
            else:
                self.set_status(run_id, "interrupted", NEVER_STARTED_MESSAGE)
                settled.append(f"run {run_id}: {NEVER_STARTED_MESSAGE}")
        if any(line.startswith("upload") for line in settled):
            self.reclaim_space()
        return settled
