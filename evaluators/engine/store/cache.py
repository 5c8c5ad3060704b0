"""The response cache: a model's answer to a request, by its key (see client.cache_key), kept in the store so a
run that resumes never asks again what was answered. A run's batch of predictions writes its cached answers in
the same transaction (PredictionQueries.save_batch)."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import Any

from evaluators.engine.store.connection import StoreConnection
from evaluators.engine.store.values import json_text

CACHE_INSERT_SQL = "INSERT OR REPLACE INTO cache (key, response, created_at) VALUES (?, ?, ?)"


class ResponseCache(StoreConnection):
    """The cache table: responses by key."""

    def cache_put(self, key: str, response: dict[str, Any]) -> None:
        """Committed at once: after a crash, a response that arrived is never requested again."""
        with self._lock:
            self._db.execute(CACHE_INSERT_SQL, (key, json_text(response), time.time()))

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
