"""Storing finished work without delaying the next requests.

Bookkeeping (storing a prediction, caching its response, scoring it) waits until the event loop
has sent the requests that are ready, then runs once per loop turn in one transaction. On a run
with 64 requests in flight this keeps the critical path (response in -> next request out) short;
the store lags the network by one loop turn, well under a millisecond.

A batch the store cannot write (the disk is full, the file was damaged) is kept and tried again on
the next turn; its error is kept in `failure` so the run stops sending and says why, instead of the
event loop printing "Exception in callback" while the samples vanish.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from evaluators.core.types import Prediction, Sample
from evaluators.engine.store import Evidence, JSONText, Store


class WriteBehind:
    def __init__(self, store: Store, run_id: str, on_stored: Callable[[list[tuple[Sample, Prediction]]], None]):
        self.store = store
        self.run_id = run_id
        self.on_stored = on_stored
        self._responses: list[tuple[str, dict[str, Any]]] = []
        self._predictions: list[tuple[Sample, Prediction, int, dict[str, Any] | JSONText | None,
                                      list[dict[str, Any]] | JSONText | None]] = []
        self._scheduled = False
        self.failure: Exception | None = None

    def add_response(self, key: str, response: dict[str, Any]) -> None:
        self._responses.append((key, response))
        self._schedule()

    def add_prediction(self, sample: Sample, prediction: Prediction, attempts: int,
                       request: dict[str, Any] | JSONText | None = None, events: list[dict[str, Any]] | JSONText | None = None) -> None:
        """`request`: the request as sent, `events`: the sample's model calls (see store.Evidence), kept in the
        sample's row with its gold answer."""
        self._predictions.append((sample, prediction, attempts, request, events))
        self._schedule()

    def _schedule(self) -> None:
        if not self._scheduled:
            self._scheduled = True
            asyncio.get_running_loop().call_soon(self.flush)

    @property
    def unsaved(self) -> int:
        """Predictions not in the store yet."""
        return len(self._predictions)

    def flush(self) -> None:
        self._scheduled = False
        if not self._responses and not self._predictions:
            return
        responses, predictions = self._responses, self._predictions
        try:
            stored = self.store.save_batch(self.run_id, responses,
                                           [(s.subset, p, attempts, Evidence(s.gold, request, events))
                                            for s, p, attempts, request, events in predictions])
        except Exception as error:  # noqa: BLE001 - kept for the next turn; the run reads `failure`
            self.failure = error
            return
        self._responses, self._predictions = [], []
        self.failure = None
        self.on_stored([(item[0], prediction) for item, prediction in zip(predictions, stored, strict=True)])
