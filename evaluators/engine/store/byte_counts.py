"""The bytes of text each run has written to the store (runs.stored_bytes, migration 7): what a visitor's daily
byte budget counts. The same count in SQL (for the migration filling it in) and in Python (as rows are written)."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any


def text_bytes_sql(*columns: str) -> str:
    """SQL adding up the UTF-8 bytes of `columns` (NULL counts 0)."""
    return " + ".join(f"ifnull(length(CAST({column} AS BLOB)), 0)" for column in columns)


def text_bytes(row: Sequence[Any]) -> int:
    """The bytes a row's texts take in the store: what Store.stored_bytes counts (numbers and NULLs are not counted;
    SQLite's own page overhead comes on top, see benchmarks/store_bytes.py)."""
    return sum(len(value.encode("utf-8", "surrogatepass")) for value in row if isinstance(value, str))


def count_stored_bytes(db: sqlite3.Connection, rows: Sequence[Sequence[Any]]) -> None:
    """Add the rows' text bytes but their run id's (each row's first value) to their runs' stored_bytes, in the
    transaction that writes them; import_rows counts a run's rows the same way. A row written again (a re-sent
    sample) counts again: an upper bound."""
    written: dict[str, int] = {}
    for row in rows:
        written[row[0]] = written.get(row[0], 0) + text_bytes(row[1:])
    db.executemany("UPDATE runs SET stored_bytes = stored_bytes + ? WHERE id = ?",
                   [(size, run_id) for run_id, size in written.items()])
