"""Uploads as a front door takes them: read a predictions file once (within the deployment's size limit), hold
what was read for the visitor's session (HeldUploads, bounded), check and score it against the data the visitor
picked (again with other data, without the file), then add it to the board for its visitor (daily quota) and push
it to the hub."""

from __future__ import annotations

import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path

from evaluators.core.errors import ToolboardError
from evaluators.service.app_services import AppServices, resolve_data_dir
from evaluators.service.data_sources import download_failure_message
from evaluators.service.submissions import ReadUpload, Submission, check_read, read_upload, store_submission

# What the uploads read and held for visitors' sessions may take in all, how many there may be, and how long one
# is kept after its last use: a check against other data needs no new upload within that time.
MAX_HELD_BYTES = 512 * 1024 * 1024
MAX_HELD_UPLOADS = 64
HELD_SECONDS = 30 * 60


class HeldUploads:
    """Uploads read once and held by key for their visitors' sessions (never the file): the least recently used
    go first when there are more than `max_uploads` or they take more than `max_bytes`, and any unused for
    `seconds`. Thread-safe."""

    def __init__(self, max_bytes: int = MAX_HELD_BYTES, max_uploads: int = MAX_HELD_UPLOADS,
                 seconds: float = HELD_SECONDS, clock: Callable[[], float] = time.monotonic):
        self.max_bytes, self.max_uploads, self.seconds, self.clock = max_bytes, max_uploads, seconds, clock
        self._held: OrderedDict[str, tuple[ReadUpload, float]] = OrderedDict()
        self._lock = threading.Lock()

    def hold(self, upload: ReadUpload) -> str:
        """Keep `upload`; the key to get it back."""
        key = secrets.token_urlsafe(16)
        with self._lock:
            self._held[key] = (upload, self.clock())
            self._evict()
        return key

    def get(self, key: str | None) -> ReadUpload | None:
        """The upload held under `key` (its time renewed), or None when it was never held, dropped or let go."""
        with self._lock:
            self._evict()
            found = self._held.get(key or "")
            if found is None:
                return None
            self._held[key or ""] = (found[0], self.clock())
            self._held.move_to_end(key or "")
            return found[0]

    def drop(self, key: str | None) -> None:
        with self._lock:
            self._held.pop(key or "", None)

    def held_bytes(self) -> int:
        with self._lock:
            return sum(upload.held_bytes for upload, _ in self._held.values())

    def __len__(self) -> int:
        with self._lock:
            return len(self._held)

    def _evict(self) -> None:
        now = self.clock()
        for key in [key for key, (_, used) in self._held.items() if now - used > self.seconds]:
            del self._held[key]
        total = sum(upload.held_bytes for upload, _ in self._held.values())
        while self._held and (len(self._held) > self.max_uploads or total > self.max_bytes):
            _, (upload, _) = self._held.popitem(last=False)
            total -= upload.held_bytes


def read_uploaded_file(services: AppServices, path: Path) -> ReadUpload:
    """The file read once, within the deployment's upload size limit (see submissions.read_upload)."""
    return read_upload(path, services.max_upload_bytes)


def check_read_upload(services: AppServices, upload: ReadUpload, benchmark: str, language: str | None,
                      data_source: str, data_folder: str) -> Submission:
    """An upload read before, checked and scored (nothing stored); `data_source` as a form offers it (see
    resolve_data_dir)."""
    data_dir = resolve_data_dir(services, data_source, data_folder, benchmark, language)
    try:
        return check_read(upload, benchmark, language=language, data_dir=data_dir)
    except ToolboardError as error:  # data that could not be downloaded: the other Data sources, as Start says
        explained = download_failure_message(error, benchmark, data_dir, services.public)
        if explained is None:
            raise
        raise ToolboardError(explained) from None


def check_upload(services: AppServices, path: Path, benchmark: str, language: str | None, data_source: str,
                 data_folder: str) -> Submission:
    """The file checked and scored (nothing stored); `data_source` as a form offers it (see resolve_data_dir)."""
    return check_read_upload(services, read_uploaded_file(services, path), benchmark, language, data_source, data_folder)


def add_upload(services: AppServices, submission: Submission, model: str, notes: str, owner: str | None) -> str:
    """Store a checked submission as a run under `model` (the visitor's daily quota allowing), and push it to
    the hub when one is configured: the new run's id. One scored on the built-in example is stored (its owner
    finds it in Explore) but stays off the board."""
    run_id = store_submission(services.store, submission, model, notes, owner=owner, admission=services.limits)
    services.after_run(run_id)
    return run_id
