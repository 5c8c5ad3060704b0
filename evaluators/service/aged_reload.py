"""A source of board rows read from elsewhere (other results datasets, the Hub's reported results) reloaded in
the background when a page loads and its last read is older than a maximum age: the page shows the rows it has
meanwhile, the next page load shows the new ones. At most one reload runs at a time, and visitors arriving while one
is under way start none."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)


class AgedReload:
    """When `reload` last read its source (on `clock`), and the background reload under way, if any."""

    def __init__(self, name: str, max_age: float, reload: Callable[[], object], clock: Callable[[], float]):
        self.name = name
        self.max_age = max_age
        self._reload = reload
        self._clock = clock
        self._loaded_at: float | None = None
        self._running: threading.Thread | None = None
        self._lock = threading.Lock()

    def mark_loaded(self) -> None:
        """The source was just read (at start, or by hand): its age counts from now."""
        self._loaded_at = self._clock()

    def is_stale(self) -> bool:
        return self._loaded_at is not None and self._clock() - self._loaded_at >= self.max_age

    def start_if_stale(self) -> threading.Thread | None:
        """Start a reload on a thread of its own when the last read is older than max_age and none is under way;
        its thread, or None. A source never read (not configured) is never reloaded."""
        if not self.is_stale():
            return None
        with self._lock:
            if (self._running is not None and self._running.is_alive()) or not self.is_stale():
                return None  # another visitor started it
            self.mark_loaded()  # visitors arriving meanwhile start no second reload
            self._running = threading.Thread(target=self._reload_logging_failures, name=f"{self.name}-reload",
                                             daemon=True)
            self._running.start()
            return self._running

    def _reload_logging_failures(self) -> None:
        try:
            self._reload()
        except Exception as exc:  # noqa: BLE001 - a reload never breaks the board; the last rows stay
            log.warning("could not reload %s: %s", self.name, exc)
