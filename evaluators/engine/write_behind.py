"""Storing finished work without delaying the next requests.

Bookkeeping (storing a prediction, caching its response, scoring it) waits FLUSH_DELAY after the
first item it has not stored, then stores all it holds in one transaction. An answer's task sends
its sample's next request a few loop turns after the answer arrives: a flush run in the very next
turn sat on that path (measured at concurrency 8: ~0.5 ms of every slot's ~2.5 ms between an answer
and its next request). After the delay it runs between answers, and gathers those of that time into
one transaction. The store lags the network by at most that delay.

A batch the store cannot write (the disk is full, the file was damaged) is kept and tried again with
the next flush; its error is kept in `failure` so the run stops sending and says why, instead of the
event loop printing "Exception in callback" while the samples vanish.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from evaluators.core.types import Prediction, Sample
from evaluators.engine.store import Evidence, JSONText, Store

# Seconds from the first unstored item to the flush: well past the loop turns that send the next request, and
# short enough that an interrupted run loses next to nothing it had received (resumed, it asks those again).
FLUSH_DELAY = 0.02


class WriteBehind:
    def __init__(self, store: Store, run_id: str, on_stored: Callable[[list[tuple[Sample, Prediction]]], None]):
        self.store = store
        self.run_id = run_id
        self.on_stored = on_stored
        self._responses: list[tuple[str, dict[str, Any]]] = []
        self._predictions: list[tuple[Sample, Prediction, int, dict[str, Any] | JSONText | None,
                                      list[dict[str, Any]] | JSONText | None]] = []
        self._timer: asyncio.TimerHandle | None = None
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
        if self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(FLUSH_DELAY, self.flush)

    @property
    def unsaved(self) -> int:
        """Predictions not in the store yet."""
        return len(self._predictions)

    def flush(self) -> None:
        if self._timer is not None:  # called before its time (the run's end): the timer has nothing left to do
            self._timer.cancel()
            self._timer = None
        if not self._responses and not self._predictions:
            return
        responses, predictions = self._responses, self._predictions
        try:
            stored = self.store.save_batch(self.run_id, responses,
                                           [(s.subset, p, attempts, Evidence(s.gold, request, events))
                                            for s, p, attempts, request, events in predictions])
        except Exception as error:  # noqa: BLE001 - kept for the next flush; the run reads `failure`
            self.failure = error
            return
        self._responses, self._predictions = [], []
        self.failure = None
        self.on_stored([(item[0], prediction) for item, prediction in zip(predictions, stored, strict=True)])
