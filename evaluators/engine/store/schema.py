"""The store's schema: its migrations, in order, and how a store is brought up to the newest (PRAGMA
user_version counts the migrations a store has had)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

from evaluators.core.errors import ToolboardError
from evaluators.engine.store.byte_counts import text_bytes_sql
from evaluators.engine.store.errors import StoreReadOnlyError
from evaluators.engine.store.values import json_text


def _moved_into(text: str | None, moved: dict[str, str | None]) -> str | None:
    """A JSON object's text (or NULL) with each non-NULL JSON text of `moved` added under its key."""
    values = {key: json.loads(value) for key, value in moved.items() if value is not None}
    if not values:
        return text
    merged = json.loads(text) if text else {}
    return json_text({**(merged if isinstance(merged, dict) else {"value": merged}), **values})


def migrate_to_generic_evidence(db: sqlite3.Connection) -> None:
    """Migration 6: the columns one benchmark's shape had put in every row become generic evidence. A
    prediction's `result` and `process` move into its evidence (`extra`) under those keys (the predictions
    file's names); a verdict's `process_score` becomes its per-sample metric of that name; each verdict gets
    `metadata` (the benchmark's own, see SampleScore) and each prediction `events` (every model call of the
    sample, see client.EventLog). Run once, inside the migration's transaction."""
    db.execute("ALTER TABLE predictions ADD COLUMN events TEXT")
    db.execute("ALTER TABLE sample_scores ADD COLUMN metadata TEXT")
    rows = db.execute("SELECT rowid, extra, result, process FROM predictions"
                      " WHERE result IS NOT NULL OR process IS NOT NULL").fetchall()
    db.executemany("UPDATE predictions SET extra = ? WHERE rowid = ?",
                   [(_moved_into(extra, {"result": result, "process": process}), rowid)
                    for rowid, extra, result, process in rows])
    rows = db.execute("SELECT rowid, metrics, process_score FROM sample_scores WHERE process_score IS NOT NULL").fetchall()
    db.executemany("UPDATE sample_scores SET metrics = ? WHERE rowid = ?",
                   [(_moved_into(metrics, {"process_score": json.dumps(score)}), rowid) for rowid, metrics, score in rows])
    for table, column in (("predictions", "result"), ("predictions", "process"), ("sample_scores", "process_score")):
        db.execute(f"ALTER TABLE {table} DROP COLUMN {column}")



# Each: SQL run as one script, or a function given the connection (both inside one transaction).
MIGRATIONS: tuple[str | Callable[[sqlite3.Connection], None], ...] = (
    """
    CREATE TABLE runs (
        id TEXT PRIMARY KEY,
        benchmark TEXT NOT NULL,
        language TEXT,
        model TEXT NOT NULL,
        base_url TEXT NOT NULL,
        config TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        status TEXT NOT NULL,
        created_at REAL NOT NULL,
        started_at REAL,
        finished_at REAL,
        total INTEGER NOT NULL DEFAULT 0,
        message TEXT
    );
    CREATE TABLE predictions (
        run_id TEXT NOT NULL REFERENCES runs(id),
        sample_id TEXT NOT NULL,
        subset TEXT NOT NULL,
        output TEXT,
        tool_calls TEXT,
        result TEXT,
        process TEXT,
        error TEXT,
        latency REAL,
        prompt_tokens INTEGER,
        completion_tokens INTEGER,
        attempts INTEGER,
        created_at REAL NOT NULL,
        PRIMARY KEY (run_id, sample_id)
    );
    CREATE TABLE sample_scores (
        run_id TEXT NOT NULL REFERENCES runs(id),
        mode TEXT NOT NULL,
        sample_id TEXT NOT NULL,
        subset TEXT NOT NULL,
        correct INTEGER NOT NULL,
        error_type TEXT,
        rule TEXT,
        detail TEXT,
        decoded TEXT,
        process_score REAL,
        PRIMARY KEY (run_id, mode, sample_id)
    );
    CREATE TABLE reports (
        run_id TEXT NOT NULL REFERENCES runs(id),
        mode TEXT NOT NULL,
        report TEXT NOT NULL,
        created_at REAL NOT NULL,
        PRIMARY KEY (run_id, mode)
    );
    CREATE TABLE cache (
        key TEXT PRIMARY KEY,
        response TEXT NOT NULL,
        created_at REAL NOT NULL
    );
    """,
    # 2: free-form evidence per prediction (judge verdicts, agent transcripts), per-sample metric values,
    # and where a run came from (an endpoint or an uploaded predictions file) with the user's notes.
    """
    ALTER TABLE predictions ADD COLUMN extra TEXT;
    ALTER TABLE sample_scores ADD COLUMN metrics TEXT;
    ALTER TABLE runs ADD COLUMN source TEXT NOT NULL DEFAULT 'endpoint';
    ALTER TABLE runs ADD COLUMN notes TEXT;
    """,
    # 3: who started a run (a public deployment's visitor, as a salted hash), whether its outputs are
    # shown to everyone, and the lease of the process executing it (so no second process runs it too).
    """
    ALTER TABLE runs ADD COLUMN owner TEXT;
    ALTER TABLE runs ADD COLUMN shared INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE runs ADD COLUMN lease_holder TEXT;
    ALTER TABLE runs ADD COLUMN lease_expires REAL;
    """,
    # 4: cached answers were keyed by URL and body alone, whatever key paid for them: dropped (see cache_key).
    """
    DELETE FROM cache;
    """,
    # 5: each sample's evidence in its predictions row (see Evidence): the gold answer and the request as sent,
    # so a sample's page reads that one row and never reloads the dataset. NULL in rows stored before.
    """
    ALTER TABLE predictions ADD COLUMN gold TEXT;
    ALTER TABLE predictions ADD COLUMN request TEXT;
    """,
    # 6: one generic record per sample (see migrate_to_generic_evidence).
    migrate_to_generic_evidence,
    # 7: the bytes of text each run has written to this store (what a visitor's daily byte budget counts), filled
    # in once for the runs stored before.
    f"""
    ALTER TABLE runs ADD COLUMN stored_bytes INTEGER NOT NULL DEFAULT 0;
    UPDATE runs SET stored_bytes =
        COALESCE((SELECT sum({text_bytes_sql("output", "tool_calls", "error", "extra", "gold", "request", "events")})
                  FROM predictions WHERE run_id = runs.id), 0)
      + COALESCE((SELECT sum({text_bytes_sql("error_type", "rule", "detail", "decoded", "metrics", "metadata")})
                  FROM sample_scores WHERE run_id = runs.id), 0)
      + COALESCE((SELECT sum(length(CAST(report AS BLOB))) FROM reports WHERE run_id = runs.id), 0);
    """,
)
SCHEMA_VERSION = len(MIGRATIONS)


def migrate(db: sqlite3.Connection, path: Path, read_only: str | None) -> None:
    """Run the migrations the store at `path` has not had yet, each in its own transaction. `read_only`: why the
    store can only be read (then an older store cannot be upgraded: a clear error), or None."""
    version = db.execute("PRAGMA user_version").fetchone()[0]
    if version > SCHEMA_VERSION:
        raise ToolboardError(
            f"{path} was written by a newer toolboard (schema {version} > {SCHEMA_VERSION}); upgrade first"
        )
    if version < SCHEMA_VERSION and read_only:
        raise StoreReadOnlyError(path, f"{read_only}; it was written by an earlier version and is "
                                       "upgraded when first opened, which needs write access")
    for number in range(version, SCHEMA_VERSION):
        migration = MIGRATIONS[number]
        try:
            if isinstance(migration, str):
                db.executescript(f"BEGIN; {migration}; PRAGMA user_version={number + 1}; COMMIT;")
            else:
                db.execute("BEGIN")
                migration(db)
                db.execute(f"PRAGMA user_version={number + 1}")
                db.execute("COMMIT")
        except (sqlite3.Error, ValueError) as problem:
            if db.in_transaction:
                db.execute("ROLLBACK")
            if isinstance(problem, sqlite3.Error):
                raise
            raise ToolboardError(f"{path} could not be upgraded to schema {number + 1} (nothing in it was"
                                 f" changed): a stored value is not what it should be: {problem}") from None
