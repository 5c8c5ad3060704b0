"""The SQLite store: runs, predictions, sample scores, reports and the response cache.

One file under TOOLBOARD_HOME, in WAL mode. Each finished sample is committed at once (with its
cached response), so a run killed at any moment keeps everything that had finished.
"""

from __future__ import annotations

import contextlib
import errno
import json
import math
import os
import re
import socket
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, is_dataclass, replace
from pathlib import Path
from typing import Any, cast

from evaluators.core.errors import ToolboardError
from evaluators.core.paths import toolboard_home
from evaluators.core.types import Prediction, Report, SampleScore, ToolCall


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
def _text_bytes_sql(*columns: str) -> str:
    """SQL adding up the UTF-8 bytes of `columns` (NULL counts 0)."""
    return " + ".join(f"ifnull(length(CAST({column} AS BLOB)), 0)" for column in columns)


def text_bytes(row: Sequence[Any]) -> int:
    """The bytes a row's texts take in the store: what Store.stored_bytes counts (numbers and NULLs are not counted;
    SQLite's own page overhead comes on top, see benchmarks/store_bytes.py)."""
    return sum(len(value.encode("utf-8", "surrogatepass")) for value in row if isinstance(value, str))


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
        COALESCE((SELECT sum({_text_bytes_sql("output", "tool_calls", "error", "extra", "gold", "request", "events")})
                  FROM predictions WHERE run_id = runs.id), 0)
      + COALESCE((SELECT sum({_text_bytes_sql("error_type", "rule", "detail", "decoded", "metrics", "metadata")})
                  FROM sample_scores WHERE run_id = runs.id), 0)
      + COALESCE((SELECT sum(length(CAST(report AS BLOB))) FROM reports WHERE run_id = runs.id), 0);
    """,
)
SCHEMA_VERSION = len(MIGRATIONS)


@dataclass
class RunRow:
    id: str
    benchmark: str
    language: str | None
    model: str
    base_url: str
    config: dict[str, Any]
    fingerprint: str
    status: str
    created_at: float
    started_at: float | None
    finished_at: float | None
    total: int
    message: str | None
    source: str = "endpoint"
    notes: str | None = None
    owner: str | None = None
    shared: int = 0
    lease_holder: str | None = None
    lease_expires: float | None = None
    stored_bytes: int = 0


TOTAL_KEYS = ("done", "errors", "latency", "prompt_tokens", "completion_tokens")


def _run_row(row: sqlite3.Row) -> RunRow:
    data = dict(row)
    data["config"] = json.loads(data["config"])
    return RunRow(**data)


def default_db_path() -> Path:
    return toolboard_home() / "toolboard.db"


NEW_ID_ATTEMPTS = 5
# How long a write waits for another process's lock on the store (sqlite3.connect's timeout), in ms.
BUSY_TIMEOUT_MS = 30_000
# A run created this recently may still be on its way to its first request in another process: not settled yet.
HALF_MADE_GRACE_SECONDS = 10 * 60
NEVER_STARTED_MESSAGE = ("the process that created it stopped before its first request (the app restarted or was "
                         "killed): resume to run it")


def new_run_id() -> str:
    """A run id: when it was made, then random (sorts by time, unique across machines)."""
    return time.strftime("%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:6]


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


# A lone surrogate is valid in a JSON string (`"\\ud800"`) but not in UTF-8, the only text SQLite takes.
LONE_SURROGATE = re.compile("[\ud800-\udfff]")
# Token counts beyond this are not counts (and SQLite's SUM would overflow on them).
MAX_TOKEN_COUNT = 1 << 48


# What binding a value SQLite cannot hold raises (e.g. an int beyond 64 bits, a str with a lone surrogate).
REFUSED_VALUE = (sqlite3.InterfaceError, sqlite3.IntegrityError, sqlite3.DataError, OverflowError, ValueError)


def storable_text(text: Any) -> Any:
    """Text SQLite can hold: lone surrogates kept as their `\\uXXXX` escape, never dropped."""
    if not isinstance(text, str) or not LONE_SURROGATE.search(text):
        return text
    return LONE_SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def json_text(value: Any, default: Any = repr) -> str:
    """JSON text that round-trips exactly: non-ASCII kept readable unless a lone surrogate needs escaping."""
    text = json.dumps(value, ensure_ascii=False, default=default)
    return json.dumps(value, default=default) if LONE_SURROGATE.search(text) else text


def json_or_null(value: Any) -> str | None:
    """`value` as JSON text for a column that may be NULL (None stays None)."""
    if value is None:
        return None
    if not value and isinstance(value, dict | list):  # most verdicts' metadata: not worth an encoder
        return "{}" if isinstance(value, dict) else "[]"
    return json_text(value)


def token_count(value: Any) -> int | None:
    """A usage figure as the store keeps it: a whole number in range, else unknown (None)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        return None
    return int(value) if 0 <= value <= MAX_TOKEN_COUNT else None


def storable_prediction(prediction: Prediction) -> Prediction:
    """The prediction as the store will give it back (texts made storable), so what is scored now is
    what a re-score reads later."""
    output, error = storable_text(prediction.output), storable_text(prediction.error)
    if output is prediction.output and error is prediction.error:
        return prediction
    return replace(prediction, output=output, error=error)


def unstorable(prediction: Prediction, problem: BaseException) -> Prediction:
    """What is stored for a sample whose prediction the store cannot take: its failure, as a request error
    (so it is counted, shown and re-sent by --rerun-errors), never silence."""
    return Prediction(prediction.sample_id, error=f"could not store this prediction: {type(problem).__name__}: "
                                                 f"{storable_text(str(problem))[:300]}")


# ---- a sample's evidence: its gold answer and the request, kept in its predictions row (migration 5) ----

# A gold answer or request is kept up to this many bytes of JSON text; a bigger one is kept as a note saying so.
MAX_EVIDENCE_BYTES = 1 << 20
# Of a request, what a note kept instead of it still says.
REQUEST_NOTE_KEYS = ("requests", "not_sent")
# An uploaded prediction's request note (no body): the prompt this tool would send is the sample's and the
# benchmark's alone, so Explore builds it again when the sample is shown instead of every upload keeping a copy.
REBUILT_WHEN_SHOWN = "rebuilt_when_shown"
UPLOADED_PROMPT_NOTE = "uploaded predictions: the prompt this tool would send, not necessarily the one used"
UNWRITABLE_NOTE = '{"unstorable": true, "note": "could not be written as JSON"}'


@dataclass(frozen=True)
class JSONText:
    """Evidence already written as JSON (a request body exactly as sent): stored as it is, not parsed
    and written again (a run stores one per sample while its requests are in flight)."""

    text: str


@dataclass(frozen=True)
class Evidence:
    """What a sample's predictions row keeps beside the prediction. `gold`: the sample's gold answer
    (`Sample.gold`; dataclasses are kept as dicts). `request`: for a run, `{"requests": n, "body": ...}`,
    the last chat-completions body the tested model's client sent for the sample (for an agent rollout
    it holds the whole conversation) and how many it sent (see ChatClient.capture_requests); for an
    upload, `{"not_sent": true, "note": ..., "body": ...}`, the body this tool would send. `events`: every model
    call made for the sample (the tested model's, a judge's, a simulated user's: see client.EventLog), bounded."""

    gold: Any = None
    request: dict[str, Any] | JSONText | None = None
    events: list[dict[str, Any]] | JSONText | None = None


def _plain_json(value: Any) -> Any:
    """A value json cannot write: a dataclass as its dict, anything else as its repr."""
    return asdict(value) if is_dataclass(value) and not isinstance(value, type) else repr(value)


def oversized_note(what: str, size: int, kept: dict[str, Any] | None = None) -> dict[str, Any]:
    """What a sample's row keeps instead of a gold answer or request over MAX_EVIDENCE_BYTES."""
    return {**(kept or {}), "truncated": True, "bytes": size,
            "note": f"the {what} was {size:,} bytes of JSON, over the {MAX_EVIDENCE_BYTES:,} kept per sample: not stored"}


def evidence_text(value: Any, what: str, keep: tuple[str, ...] = ()) -> str:
    """A gold answer or request as its row keeps it: JSON text of at most MAX_EVIDENCE_BYTES, else a note
    saying so, with the `keep` entries of the value (as is a value that cannot be written as JSON). Never
    raises: evidence never costs a row."""
    if isinstance(value, JSONText):
        # At most 4 bytes a character: most texts are known to fit without encoding them to count.
        size = len(value.text) if len(value.text) * 4 <= MAX_EVIDENCE_BYTES else len(value.text.encode())
        return value.text if size <= MAX_EVIDENCE_BYTES else json_text(oversized_note(what, size))
    kept = {key: value[key] for key in keep if key in value} if isinstance(value, dict) else {}
    try:
        text = json_text(value, default=_plain_json)
        size = len(text.encode())
        if size <= MAX_EVIDENCE_BYTES:
            return text
        return json_text(oversized_note(what, size, kept))
    except (ValueError, TypeError, RecursionError) as problem:  # an integer too long to write, nesting too deep
        try:
            return json_text({**kept, "unstorable": True, "note": f"the {what} could not be written as JSON:"
                                                                   f" {type(problem).__name__}: {str(problem)[:200]}"})
        except (ValueError, TypeError, RecursionError):
            return UNWRITABLE_NOTE


def _evidence_texts(evidence: Evidence | None) -> tuple[str | None, str | None, str | None]:
    """The gold, request and events columns of a row (NULL where nothing was given)."""
    if evidence is None:
        return None, None, None
    request = None if evidence.request is None else evidence_text(evidence.request, "request body", REQUEST_NOTE_KEYS)
    events = None if evidence.events is None else evidence_text(evidence.events, "model calls")
    return evidence_text(evidence.gold, "gold answer"), request, events


@dataclass
class StoredSample:
    """One sample's row as Explore and exports read it: its prediction, its verdict in one mode (None where
    not asked or not scored), and its evidence. `gold_kept` / `request_kept` are False for rows stored
    without them (before migration 5): their callers rebuild what they need from the dataset."""

    sample_id: str
    subset: str | None
    prediction: Prediction | None
    score: SampleScore | None = None
    gold: Any = None
    request: Any = None
    gold_kept: bool = False
    request_kept: bool = False
    # The sample's model calls (see Evidence.events); None when none were recorded (uploads, older rows).
    events: Any = None

    @property
    def evidence_kept(self) -> bool:
        return self.gold_kept and self.request_kept


# A prediction's own columns (not the evidence, which can be large: read only where it is shown).
PREDICTION_COLUMNS = ("sample_id", "subset", "output", "tool_calls", "error", "latency", "prompt_tokens",
                      "completion_tokens", "extra")
# A sample's evidence columns, read only where it is shown or exported.
EVIDENCE_COLUMNS = ("gold", "request", "events")
SCORE_COLUMNS = ("sample_id", "subset", "correct", "error_type", "rule", "detail", "decoded", "metrics", "metadata")


def _loads(text: str | None) -> Any:
    return json.loads(text) if text else None


def _prediction_of(row: sqlite3.Row, prefix: str = "") -> Prediction:
    tool_calls = _loads(row[prefix + "tool_calls"])
    return Prediction(
        sample_id=row[prefix + "sample_id"],
        output=row[prefix + "output"],
        tool_calls=[ToolCall(c["name"], c["arguments"]) for c in tool_calls] if tool_calls is not None else None,
        error=row[prefix + "error"],
        latency=row[prefix + "latency"],
        usage={"prompt_tokens": row[prefix + "prompt_tokens"] or 0, "completion_tokens": row[prefix + "completion_tokens"] or 0},
        extra=_loads(row[prefix + "extra"]),
    )


def _score_of(row: sqlite3.Row, prefix: str = "") -> SampleScore:
    return SampleScore(
        sample_id=row[prefix + "sample_id"], subset=row[prefix + "subset"], correct=bool(row[prefix + "correct"]),
        error_type=row[prefix + "error_type"], rule=row[prefix + "rule"], detail=row[prefix + "detail"] or "",
        decoded=_loads(row[prefix + "decoded"]), metrics=_loads(row[prefix + "metrics"]),
        metadata=_loads(row[prefix + "metadata"]),
    )


def _with_evidence(sample: StoredSample, gold: str | None, request: str | None, events: str | None = None) -> StoredSample:
    sample.gold_kept, sample.request_kept = gold is not None, request is not None
    sample.gold, sample.request = _evidence_loads(gold), _evidence_loads(request)
    sample.events = with_row_request(_evidence_loads(events), sample.request)
    return sample


# An event's request kept as this note is the row's own request body (its `request` column), not stored twice.
ROW_REQUEST = "in_request_column"


def row_request_note(size: int) -> dict[str, Any]:
    return {ROW_REQUEST: True, "bytes": size, "note": "the body of this sample's request, kept once"}


def with_row_request(events: Any, request: Any) -> Any:
    """The events as made: each ROW_REQUEST note replaced by the row's request body it stands for."""
    body = request.get("body") if isinstance(request, dict) else None
    if not isinstance(events, list) or not isinstance(body, dict):
        return events
    return [{**event, "request": body} if isinstance(event, dict) and isinstance(event.get("request"), dict)
            and event["request"].get(ROW_REQUEST) is True else event for event in events]


ESCAPED_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")


def _evidence_loads(text: str | None) -> Any:
    """Evidence as read back: a request body sent with a lone surrogate (a model's earlier reply fed back)
    holds it as a JSON escape; it comes back as its `\\uXXXX` text, as stored text does (storable_text),
    so the page and hub documents can always encode it."""
    value = _loads(text)
    return _storable_strings(value) if text and ESCAPED_SURROGATE.search(text) else value


def _storable_strings(value: Any) -> Any:
    if isinstance(value, str):
        return storable_text(value)
    if isinstance(value, list):
        return [_storable_strings(item) for item in value]
    if isinstance(value, dict):
        return {storable_text(key): _storable_strings(item) for key, item in value.items()}
    return value


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


# Why a store's folder refuses writes: read-only media, or no permission.
_READ_ONLY_ERRNOS = (errno.EROFS, errno.EACCES, errno.EPERM)


class StoreReadOnlyError(ToolboardError, sqlite3.OperationalError):
    """Something was to be stored in a store that can only be read (an sqlite3 error too, so that what handles
    a store refusing writes mid-run handles this)."""

    def __init__(self, path: Path, reason: str):
        super().__init__(
            f"the store {path} can only be read ({reason}), so nothing more was stored. Reading works (runs, the "
            f"board, exports), but runs, uploads and deletions need a writable store: make {path.parent} writable, "
            "or set TOOLBOARD_HOME to a writable folder (a new store starts there)"
        )


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


class Store:
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

    def stored_bytes_since(self, owner: str | None, since: float) -> int:
        """The bytes of text written by `owner`'s runs and uploads (None: the operator's, every run on a private
        deployment) created at or after `since`: what a visitor's daily byte budget counts."""
        row = self._query("SELECT COALESCE(sum(stored_bytes), 0) FROM runs WHERE owner IS ? AND created_at >= ?",
                          (owner, since))
        return int(row[0][0])

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

    # ---- schema ---------------------------------------------------------------------------

    def _migrate(self) -> None:
        with self._lock:
            version = self._db.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise ToolboardError(
                    f"{self.path} was written by a newer toolboard (schema {version} > {SCHEMA_VERSION}); upgrade first"
                )
            if version < SCHEMA_VERSION and self.read_only:
                raise StoreReadOnlyError(self.path, f"{self.read_only}; it was written by an earlier version and is "
                                                    "upgraded when first opened, which needs write access")
            for number in range(version, SCHEMA_VERSION):
                migration = MIGRATIONS[number]
                try:
                    if isinstance(migration, str):
                        self._db.executescript(f"BEGIN; {migration}; PRAGMA user_version={number + 1}; COMMIT;")
                    else:
                        self._db.execute("BEGIN")
                        migration(self._db)
                        self._db.execute(f"PRAGMA user_version={number + 1}")
                        self._db.execute("COMMIT")
                except (sqlite3.Error, ValueError) as problem:
                    if self._db.in_transaction:
                        self._db.execute("ROLLBACK")
                    if isinstance(problem, sqlite3.Error):
                        raise
                    raise ToolboardError(f"{self.path} could not be upgraded to schema {number + 1} (nothing in it was"
                                         f" changed): a stored value is not what it should be: {problem}") from None

    def schema_version(self) -> int:
        return int(self._query("PRAGMA user_version")[0][0])

    # ---- runs -----------------------------------------------------------------------------

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

    # ---- leases: at most one process executes a run ---------------------------------------

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

    def _query(self, sql: str, params: tuple[Any, ...] = ()) -> list[sqlite3.Row]:
        with self._lock:
            return self._db.execute(sql, params).fetchall()

    def get_run(self, run_id: str) -> RunRow:
        rows = self._query("SELECT * FROM runs WHERE id = ?", (run_id,))
        if not rows:
            raise ToolboardError(f"no run {run_id!r} in {self.path}")
        return _run_row(rows[0])

    def list_runs(self) -> list[RunRow]:
        """Every run, newest first, in one query (the jobs panel asks every second)."""
        return [_run_row(row) for row in self._query("SELECT * FROM runs ORDER BY created_at DESC")]

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

    # ---- predictions ----------------------------------------------------------------------

    def save_batch(
        self,
        run_id: str,
        responses: list[tuple[str, dict[str, Any]]],
        predictions: Sequence[tuple[str, Prediction, int] | tuple[str, Prediction, int, Evidence | None]],
    ) -> list[Prediction]:
        """One transaction: cached responses, and predictions as (subset, prediction, attempts) or (subset,
        prediction, attempts, evidence): the sample's gold answer and request, kept in its row (bounded, see
        evidence_text). Returns the predictions as stored. A prediction the store cannot take is stored as
        its own failure (with its evidence) and never takes its neighbours down with it; a response that
        cannot be cached is not cached."""
        now = time.time()
        cache_rows = []
        for key, response in responses:
            try:
                cache_rows.append((key, json_text(response), now))
            except (ValueError, TypeError, RecursionError):
                continue  # the cache is an optimisation: such a response is requested again if needed
        stored = [storable_prediction(item[1]) for item in predictions]
        evidence = [_evidence_texts(item[3] if len(item) > 3 else None) for item in predictions]
        rows = [self._prediction_row(run_id, item[0], prediction, item[2], now, kept)
                for item, prediction, kept in zip(predictions, stored, evidence, strict=True)]
        bad = {index for index, row in enumerate(rows) if isinstance(row, BaseException)}
        try:
            self._write_batch(cache_rows, [row for index, row in enumerate(rows) if index not in bad], run_id)
        except REFUSED_VALUE:  # one value SQLite refuses: each row on its own
            self._write_cache_rows_alone(cache_rows, run_id)
            for index, row in enumerate(rows):
                if index not in bad:
                    try:
                        self._write_batch([], [row])
                    except REFUSED_VALUE as problem:
                        rows[index] = problem
                        bad.add(index)
        for index in sorted(bad):
            subset, attempts = predictions[index][0], predictions[index][2]
            stored[index] = unstorable(stored[index], cast(BaseException, rows[index]))  # a row in `bad` is its problem
            self._write_batch([], [self._prediction_row(run_id, subset, stored[index], attempts, now, evidence[index])])
        return stored

    def _write_cache_rows_alone(self, cache_rows: list[tuple[Any, ...]], run_id: str) -> None:
        for row in cache_rows:
            try:
                self._write_batch([row], [], run_id)
            except REFUSED_VALUE:
                continue

    @staticmethod
    def _prediction_row(run_id: str, subset: str, prediction: Prediction, attempts: int, now: float,
                        evidence: tuple[str | None, str | None, str | None] = (None, None, None)
                        ) -> tuple[Any, ...] | BaseException:
        """The predictions row of one prediction (with its gold, request and events JSON texts), or why it cannot
        be made."""
        usage = prediction.usage if isinstance(prediction.usage, dict) else {}
        calls = prediction.tool_calls
        try:
            return (
                run_id, prediction.sample_id, subset, prediction.output,
                json_or_null([{"name": c.name, "arguments": c.arguments} for c in calls]) if calls is not None else None,
                prediction.error, prediction.latency,
                token_count(usage.get("prompt_tokens")), token_count(usage.get("completion_tokens")), attempts, now,
                json_or_null(prediction.extra), *evidence,
            )
        except (ValueError, TypeError, RecursionError) as problem:  # e.g. an integer too long to write
            return problem

    def _write_batch(self, cache_rows: list[tuple[Any, ...]], rows: list[Any], run_id: str | None = None) -> None:
        """Cached answers and predictions rows in one transaction; the cached answers' bytes count for `run_id`,
        whose requests they answered (the rows' own for theirs)."""
        with self._transaction() as db:
            db.executemany("INSERT OR REPLACE INTO cache (key, response, created_at) VALUES (?, ?, ?)", cache_rows)
            db.executemany(
                "INSERT OR REPLACE INTO predictions (run_id, sample_id, subset, output, tool_calls, error,"
                " latency, prompt_tokens, completion_tokens, attempts, created_at, extra, gold, request, events)"
                " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                rows,
            )
            self._count_bytes(db, [*rows, *((run_id, *row) for row in cache_rows if run_id is not None)])

    @staticmethod
    def _count_bytes(db: sqlite3.Connection, rows: Sequence[Sequence[Any]]) -> None:
        """Add the rows' text bytes but their run id's (each row's first value) to their runs' stored_bytes, in the
        transaction that writes them; import_rows counts a run's rows the same way. A row written again (a re-sent
        sample) counts again: an upper bound."""
        written: dict[str, int] = {}
        for row in rows:
            written[row[0]] = written.get(row[0], 0) + text_bytes(row[1:])
        db.executemany("UPDATE runs SET stored_bytes = stored_bytes + ? WHERE id = ?",
                       [(size, run_id) for run_id, size in written.items()])

    def load_predictions(self, run_id: str) -> dict[str, Prediction]:
        """The run's predictions by sample id (without their evidence: see load_sample_evidence)."""
        rows = self._query(f"SELECT {', '.join(PREDICTION_COLUMNS)} FROM predictions WHERE run_id = ?", (run_id,))
        return {row["sample_id"]: _prediction_of(row) for row in rows}

    def load_sample_evidence(self, run_id: str, sample_id: str, mode: str = "official") -> StoredSample:
        """One sample of a run: its prediction, its verdict in `mode` and its evidence (gold answer, request),
        in one query of two primary-key lookups (whichever of the rows exists; `subset` None when neither)."""
        columns = ", ".join([*(f"p.{name} AS p_{name}" for name in (*PREDICTION_COLUMNS, *EVIDENCE_COLUMNS)),
                             *(f"s.{name} AS s_{name}" for name in SCORE_COLUMNS)])
        row = self._query(
            f"SELECT {columns} FROM (SELECT ? AS run_id, ? AS sample_id) AS k"
            " LEFT JOIN predictions AS p ON p.run_id = k.run_id AND p.sample_id = k.sample_id"
            " LEFT JOIN sample_scores AS s ON s.run_id = k.run_id AND s.mode = ? AND s.sample_id = k.sample_id",
            (run_id, sample_id, mode),
        )[0]
        prediction = _prediction_of(row, "p_") if row["p_sample_id"] is not None else None
        score = _score_of(row, "s_") if row["s_sample_id"] is not None else None
        sample = StoredSample(sample_id, row["p_subset"] or row["s_subset"], prediction, score)
        return _with_evidence(sample, row["p_gold"], row["p_request"], row["p_events"])

    def iter_stored_samples(self, run_id: str, page: int = 256) -> Iterator[StoredSample]:
        """Every prediction of the run with its evidence (no verdicts), in sample id order, read `page` rows
        at a time: a run's requests together can be large, so they are never all in memory at once."""
        columns = ", ".join((*PREDICTION_COLUMNS, *EVIDENCE_COLUMNS))
        after: str | None = None
        while True:
            if after is None:
                rows = self._query(f"SELECT {columns} FROM predictions WHERE run_id = ? ORDER BY sample_id LIMIT ?",
                                   (run_id, page))
            else:
                rows = self._query(f"SELECT {columns} FROM predictions WHERE run_id = ? AND sample_id > ?"
                                   " ORDER BY sample_id LIMIT ?", (run_id, after, page))
            for row in rows:
                yield _with_evidence(StoredSample(row["sample_id"], row["subset"], _prediction_of(row)),
                                     row["gold"], row["request"], row["events"])
            if len(rows) < page:
                return
            after = rows[-1]["sample_id"]

    def prediction_states(self, run_id: str) -> dict[str, bool]:
        """sample id -> True if it ended with a request error."""
        rows = self._query("SELECT sample_id, error IS NOT NULL FROM predictions WHERE run_id = ?", (run_id,))
        return {sample_id: bool(is_error) for sample_id, is_error in rows}

    def sample_usage(self, run_ids: list[str]) -> dict[str, list[tuple[float | None, int | None, int | None, bool]]]:
        """Each asked run's predictions as (latency, prompt_tokens, completion_tokens, failed), in one query: what
        a run's cost and latency figures are computed from (NULL tokens: the endpoint reported no usage)."""
        found: dict[str, list[tuple[float | None, int | None, int | None, bool]]] = {run_id: [] for run_id in run_ids}
        if not run_ids:
            return found
        rows = self._query("SELECT run_id, latency, prompt_tokens, completion_tokens, error IS NOT NULL FROM predictions"
                           f" WHERE run_id IN ({', '.join('?' * len(run_ids))})", tuple(run_ids))
        for run_id, latency, prompt_tokens, completion_tokens, failed in rows:
            found[run_id].append((latency, prompt_tokens, completion_tokens, bool(failed)))
        return found

    def run_totals(self, run_id: str) -> dict[str, Any]:
        return self.all_run_totals([run_id])[run_id]

    def all_run_totals(self, run_ids: list[str] | None = None) -> dict[str, dict[str, Any]]:
        """Done, errors, latency and tokens per run (all runs, or those asked), in one query."""
        sql = ("SELECT run_id, COUNT(*) AS done, SUM(error IS NOT NULL) AS errors, SUM(latency) AS latency,"
               " SUM(prompt_tokens) AS prompt_tokens, SUM(completion_tokens) AS completion_tokens FROM predictions")
        params: tuple[Any, ...] = ()
        if run_ids is not None:
            sql += f" WHERE run_id IN ({', '.join('?' * len(run_ids))})"
            params = tuple(run_ids)
        found = {row["run_id"]: {key: row[key] or 0 for key in TOTAL_KEYS}
                 for row in self._query(sql + " GROUP BY run_id", params)}
        for run_id in run_ids or ():
            found.setdefault(run_id, dict.fromkeys(TOTAL_KEYS, 0))
        return found

    # ---- scores and reports ---------------------------------------------------------------

    def save_scores(self, run_id: str, mode: str, scores: list[SampleScore], report: Report,
                    rows: Sequence[tuple[Any, ...]] | None = None) -> None:
        """The run's verdicts in `mode` (replacing any stored) and its report. `rows`: the verdicts' rows made
        already (sample_score_row), in their order."""
        rows = rows if rows is not None else [sample_score_row(run_id, mode, score) for score in scores]
        report_text = json_text(report.to_json())
        with self._transaction() as db:
            db.execute("DELETE FROM sample_scores WHERE run_id=? AND mode=?", (run_id, mode))
            db.executemany(
                "INSERT INTO sample_scores (run_id, mode, sample_id, subset, correct, error_type, rule, detail, decoded,"
                " metrics, metadata) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                rows,
            )
            db.execute("INSERT OR REPLACE INTO reports (run_id, mode, report, created_at) VALUES (?,?,?,?)",
                       (run_id, mode, report_text, time.time()))
            self._count_bytes(db, [*rows, (run_id, mode, report_text)])

    def load_report(self, run_id: str, mode: str = "official") -> dict[str, Any] | None:
        rows = self._query("SELECT report FROM reports WHERE run_id=? AND mode=?", (run_id, mode))
        return json.loads(rows[0][0]) if rows else None

    def load_reports(self, run_ids: list[str], mode: str = "official") -> dict[str, dict[str, Any]]:
        """The reports of several runs in one query (the jobs panel polls every second); runs without one
        are left out."""
        if not run_ids:
            return {}
        rows = self._query(f"SELECT run_id, report FROM reports WHERE mode=? AND run_id IN ({', '.join('?' * len(run_ids))})",
                           (mode, *run_ids))
        return {run_id: json.loads(text) for run_id, text in rows}

    def load_scores(self, run_id: str, mode: str = "official") -> list[SampleScore]:
        """The stored verdicts of a run, in the order the samples were scored."""
        rows = self._query("SELECT * FROM sample_scores WHERE run_id=? AND mode=? ORDER BY rowid", (run_id, mode))
        return [_score_of(row) for row in rows]

    # ---- response cache -------------------------------------------------------------------

    def cache_put(self, key: str, response: dict[str, Any]) -> None:
        """Committed at once: after a crash, a response that arrived is never requested again."""
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO cache (key, response, created_at) VALUES (?, ?, ?)",
                (key, json_text(response), time.time()),
            )

    def cache_get(self, key: str) -> dict[str, Any] | None:
        return self.cache_get_many([key]).get(key)

    # Keys asked in one query (SQLite allows at least 999 bound values).
    CACHE_KEYS_PER_QUERY = 500

    def cache_get_many(self, keys: Sequence[str]) -> dict[str, dict[str, Any]]:
        """The cached responses of these keys, by key (a key with none is left out), in few queries."""
        found: dict[str, dict[str, Any]] = {}
        for start in range(0, len(keys), self.CACHE_KEYS_PER_QUERY):
            part = keys[start:start + self.CACHE_KEYS_PER_QUERY]
            rows = self._query(f"SELECT key, response FROM cache WHERE key IN ({', '.join('?' * len(part))})", tuple(part))
            found.update((key, json.loads(response)) for key, response in rows)
        return found

    # ---- whole runs as raw rows (hub sync export and import) ------------------------------

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
            rows = {"runs": [{key: value for key, value in dict(r).items() if key not in Store.LOCAL_COLUMNS}
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


def sample_score_row(run_id: str, mode: str, score: SampleScore) -> tuple[Any, ...]:
    """A verdict's sample_scores row, its JSON texts made (a run makes them as its verdicts come, not at its end)."""
    return (run_id, mode, score.sample_id, score.subset, int(score.correct), storable_text(score.error_type),
            storable_text(score.rule), storable_text(score.detail), _safe_dumps(score.decoded),
            _safe_dumps(score.metrics), _safe_dumps(score.metadata))


def _safe_dumps(value: Any) -> str | None:
    try:
        return json_or_null(value)
    except (ValueError, TypeError, RecursionError):  # ints too long to print, tuple keys, nesting too deep
        return json.dumps(repr(type(value)))
