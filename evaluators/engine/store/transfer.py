"""Whole runs as raw rows, by table: what hub sync exports from one store and imports into another, all or
nothing, without this store's own bookkeeping of a run (its lease, its byte count)."""

from __future__ import annotations

import sqlite3
from typing import Any

from evaluators.core.errors import ToolboardError
from evaluators.engine.store.byte_counts import text_bytes
from evaluators.engine.store.connection import StoreConnection


class RunTransfer(StoreConnection):
    """Export and import of one run's rows."""

    RUN_TABLES = ("runs", "predictions", "sample_scores", "reports")
    # Which process executes a run is this machine's business: never exported, never imported.
    LEASE_COLUMNS = ("lease_holder", "lease_expires")
    # This store's own bookkeeping of a run, never exported: the lease, and the bytes it wrote here.
    LOCAL_COLUMNS = (*LEASE_COLUMNS, "stored_bytes")

    def has_run(self, run_id: str) -> bool:
        return bool(self._query("SELECT 1 FROM runs WHERE id = ?", (run_id,)))

    def table_columns(self, table: str) -> list[str]:
        """Column names of one of RUN_TABLES, in schema order."""
        if table not in self.RUN_TABLES:
            raise ToolboardError(f"unknown table {table!r}; expected one of {', '.join(self.RUN_TABLES)}")
        return [row["name"] for row in self._query(f"PRAGMA table_info({table})")]

    def export_rows(self, run_id: str) -> dict[str, list[dict[str, Any]]]:
        """Every stored row of one run, by table, as raw column values in storage order (one consistent read)."""
        with self._transaction() as db:
            rows = {"runs": [{key: value for key, value in dict(r).items() if key not in self.LOCAL_COLUMNS}
                             for r in db.execute("SELECT * FROM runs WHERE id = ?", (run_id,))]}
            for table in self.RUN_TABLES[1:]:
                cursor = db.execute(f"SELECT * FROM {table} WHERE run_id = ? ORDER BY rowid", (run_id,))
                rows[table] = [dict(r) for r in cursor]
        if not rows["runs"]:
            raise ToolboardError(f"no run {run_id!r} in {self.path}")
        return rows

    def import_rows(self, rows: dict[str, list[dict[str, Any]]], replacing: tuple[str, ...] = ()) -> bool:
        """Insert one run in the shape `export_rows` returns, all or nothing. False if its id is already stored,
        unless the stored run's status is one of `replacing` (the placeholder of a run a queue worker executed):
        then it and its rows are replaced, in the same transaction."""
        run_id = self._check_import_rows(rows)
        try:
            # IMMEDIATE: the existence check and the inserts see the same database.
            with self._transaction("BEGIN IMMEDIATE") as db:
                stored = db.execute("SELECT status FROM runs WHERE id = ?", (run_id,)).fetchone()
                if stored is not None and stored[0] not in replacing:
                    return False
                if stored is not None:
                    for table in reversed(self.RUN_TABLES):
                        db.execute(f"DELETE FROM {table} WHERE {'id' if table == 'runs' else 'run_id'} = ?", (run_id,))
                written = 0
                for table in self.RUN_TABLES:
                    for row in rows.get(table, []):
                        if table == "runs":
                            row = {key: value for key, value in row.items() if key not in self.LOCAL_COLUMNS}
                        else:
                            written += text_bytes([value for key, value in row.items() if key != "run_id"])
                        columns, marks = ", ".join(row), ", ".join("?" * len(row))
                        db.execute(f"INSERT INTO {table} ({columns}) VALUES ({marks})", tuple(row.values()))
                db.execute("UPDATE runs SET stored_bytes = ? WHERE id = ?", (written, run_id))
        except sqlite3.Error as error:
            raise ToolboardError(f"run {run_id!r} could not be stored (nothing was written): {error}") from None
        return True

    def _check_import_rows(self, rows: dict[str, list[dict[str, Any]]]) -> str:
        """The run's id, once table and column names are known ones (they go into the SQL text) and every row is its."""
        unknown = sorted(set(rows) - set(self.RUN_TABLES))
        if unknown:
            raise ToolboardError(f"cannot import rows of unknown table(s) {', '.join(unknown)}")
        runs = rows.get("runs") or []
        if len(runs) != 1 or not isinstance(runs[0], dict) or not isinstance(runs[0].get("id"), str):
            raise ToolboardError("cannot import: expected exactly one runs row with a text id")
        run_id: str = runs[0]["id"]
        for table in self.RUN_TABLES:
            columns = set(self.table_columns(table))
            for row in rows.get(table, []):
                if not isinstance(row, dict):
                    raise ToolboardError(f"cannot import run {run_id!r}: a {table} row is not an object")
                extra = sorted(set(row) - columns)
                if extra:
                    raise ToolboardError(f"cannot import run {run_id!r}: {table} has no column(s) {', '.join(extra)}"
                                         " (written by a newer toolboard?)")
                if table != "runs" and row.get("run_id") != run_id:
                    raise ToolboardError(f"cannot import run {run_id!r}: a {table} row belongs to run {row.get('run_id')!r}")
        return run_id

