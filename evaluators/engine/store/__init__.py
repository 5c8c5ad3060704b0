"""The SQLite store: runs, predictions, sample scores, reports and the response cache.

One file under TOOLBOARD_HOME, in WAL mode. Each finished sample is committed at once (with its
cached response), so a run killed at any moment keeps everything that had finished.

One concern per module: schema (migrations), connection (opening, locking, transactions), errors (damaged or
read-only stores), values (what SQLite can hold), evidence (a sample's gold answer, request and model calls),
rows (rows as objects), byte_counts (what a run wrote), and the tables' queries: runs, leases, predictions,
scores, cache (the response cache) and transfer (whole runs for hub sync). Store puts the queries together;
the names callers use are imported from here.
"""

from __future__ import annotations

from pathlib import Path

from evaluators.engine.store.byte_counts import text_bytes
from evaluators.engine.store.cache import ResponseCache
from evaluators.engine.store.connection import BUSY_TIMEOUT_MS, default_db_path, set_aside
from evaluators.engine.store.errors import StoreDamagedError, StoreReadOnlyError, is_damage
from evaluators.engine.store.evidence import (
    MAX_EVIDENCE_BYTES,
    REBUILT_WHEN_SHOWN,
    REQUEST_NOTE_KEYS,
    ROW_REQUEST,
    UPLOADED_PROMPT_NOTE,
    Evidence,
    JSONText,
    evidence_text,
    oversized_note,
    row_request_note,
    with_row_request,
)
from evaluators.engine.store.leases import holder_is_gone, lease_holder_name
from evaluators.engine.store.predictions import PredictionQueries
from evaluators.engine.store.rows import RunRow, StoredSample, sample_score_row
from evaluators.engine.store.runs import HALF_MADE_GRACE_SECONDS, NEVER_STARTED_MESSAGE, RunQueries, new_run_id
from evaluators.engine.store.schema import MIGRATIONS, SCHEMA_VERSION, migrate_to_generic_evidence
from evaluators.engine.store.scores import ScoreQueries
from evaluators.engine.store.transfer import RunTransfer
from evaluators.engine.store.values import (
    LONE_SURROGATE,
    json_or_null,
    json_text,
    storable_prediction,
    storable_text,
    token_count,
    unstorable,
)

__all__ = [
    "BUSY_TIMEOUT_MS", "HALF_MADE_GRACE_SECONDS", "LONE_SURROGATE", "MAX_EVIDENCE_BYTES", "MIGRATIONS",
    "NEVER_STARTED_MESSAGE", "REBUILT_WHEN_SHOWN", "REQUEST_NOTE_KEYS", "ROW_REQUEST", "SCHEMA_VERSION",
    "UPLOADED_PROMPT_NOTE", "Evidence", "JSONText", "RunRow", "Store", "StoreDamagedError", "StoreReadOnlyError",
    "StoredSample", "default_db_path", "evidence_text", "holder_is_gone", "is_damage", "json_or_null", "json_text",
    "lease_holder_name", "migrate_to_generic_evidence", "new_run_id", "open_app_store", "oversized_note",
    "row_request_note", "sample_score_row", "set_aside", "storable_prediction", "storable_text", "text_bytes",
    "token_count", "unstorable", "with_row_request",
]


class Store(RunQueries, PredictionQueries, ScoreQueries, ResponseCache, RunTransfer):
    """The store: one connection (StoreConnection) and the queries of each of its tables."""


def open_app_store(path: str | Path | None = None) -> tuple[Store, str | None]:
    """The web app's store, checked whole. A damaged one is set aside and a new one started, so the app
    comes up (published rows, hub-synced runs) with a note saying what happened; None when all is well."""
    path = Path(path) if path else default_db_path()
    store: Store | None = None
    try:
        store = Store(path)
        store.check_integrity()
        return store, None
    except StoreDamagedError as error:
        if store is not None:
            store.close()
        kept = set_aside(path)
        return Store(path), (f"The results store was damaged ({error.problem}). It was kept aside as {kept.name}"
                             " and a new one started: published rows and hub-synced runs are shown; runs only in the"
                             " damaged file are not.")
