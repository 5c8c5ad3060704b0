"""What the store raises when its file is damaged or can only be read."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from evaluators.core.errors import ToolboardError


class StoreDamagedError(ToolboardError):
    """The store file is not a readable SQLite database (truncated, overwritten, emptied)."""

    def __init__(self, path: Path, problem: str):
        self.path = path
        self.problem = problem
        super().__init__(
            f"the store {path} is damaged ({problem}); nothing in it was changed. Keep it aside and start a new one:"
            f" `mv {path} {path}.damaged` (the web app does this by itself when it starts); runs synced to a hub"
            " dataset come back on the next pull"
        )


# SQLite's own words for a file that is not (or no longer) a database.
DAMAGE_ERROR_NAMES = ("SQLITE_CORRUPT", "SQLITE_NOTADB")


def is_damage(error: BaseException) -> bool:
    return isinstance(error, sqlite3.DatabaseError) and getattr(error, "sqlite_errorname", "").startswith(DAMAGE_ERROR_NAMES)


class StoreReadOnlyError(ToolboardError, sqlite3.OperationalError):
    """Something was to be stored in a store that can only be read (an sqlite3 error too, so that what handles
    a store refusing writes mid-run handles this)."""

    def __init__(self, path: Path, reason: str):
        super().__init__(
            f"the store {path} can only be read ({reason}), so nothing more was stored. Reading works (runs, the "
            f"board, exports), but runs, uploads and deletions need a writable store: make {path.parent} writable, "
            "or set TOOLBOARD_HOME to a writable folder (a new store starts there)"
        )
