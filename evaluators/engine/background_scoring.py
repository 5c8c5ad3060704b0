"""Scoring a run's predictions while the run goes, on a thread of its own instead of the event loop.

A benchmark's `score` is pure, but not always quick: a multi-turn item may be replayed in an environment
worker (tens of ms, more while the worker serves rollouts), and on the event loop that time held back every
answer waiting to send its next request (measured: about a sixth of the loop's time at concurrency 32). Here
each stored batch is scored on one scoring thread; the verdicts and their store rows come back to the loop,
which counts them in the progress (so `on_progress` is called on the loop, once a sample, as before: a sample
counts as done once scored).

A batch whose scoring raised is left out: the run's final scoring (runner.score_run) scores those samples
again, and raises there, in the run's own flow, instead of in a callback nobody sees.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from evaluators.core.registry import MODES, Benchmark
from evaluators.core.types import Prediction, Sample, SampleScore
from evaluators.engine.store import sample_score_row

Verdicts = dict[str, tuple[SampleScore, tuple[Any, ...]]]  # by mode: the verdict and its store row


class BackgroundScoring:
    def __init__(self, benchmark: Benchmark, run_id: str,
                 on_scored: Callable[[Sample, Prediction, SampleScore], None]):
        """`on_scored(sample, prediction, official verdict)` is called on the loop once a sample is scored."""
        self.benchmark = benchmark
        self.run_id = run_id
        self.on_scored = on_scored
        self.scored: dict[str, dict[str, SampleScore]] = {mode: {} for mode in MODES}
        self.rows: dict[str, dict[str, tuple[Any, ...]]] = {mode: {} for mode in MODES}
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="toolboard-score")
        self._pending: dict[asyncio.Future[list[Verdicts]], int] = {}  # each batch not recorded yet: its size
        self._closed = False

    def submit(self, finished: list[tuple[Sample, Prediction]]) -> None:
        """Score stored samples on the scoring thread (called on the loop, e.g. by WriteBehind once stored). Once
        closed, nothing more is scored here: the run's final scoring scores what is left."""
        if self._closed:
            return
        future = asyncio.get_running_loop().run_in_executor(self._executor, self._score, finished)
        self._pending[future] = len(finished)
        future.add_done_callback(lambda done: self._record(done, finished))

    def _score(self, finished: list[tuple[Sample, Prediction]]) -> list[Verdicts]:
        """On the scoring thread: each sample's verdict in every mode, with its row."""
        batch = []
        for sample, prediction in finished:
            verdicts: Verdicts = {}
            for mode in MODES:
                verdict = self.benchmark.score(sample, prediction, mode)
                verdicts[mode] = (verdict, sample_score_row(self.run_id, mode, verdict))
            batch.append(verdicts)
        return batch

    def _record(self, future: asyncio.Future[list[Verdicts]], finished: list[tuple[Sample, Prediction]]) -> None:
        """On the loop: keep the verdicts and count the samples."""
        self._pending.pop(future, None)
        if future.cancelled() or future.exception() is not None:
            return  # scored again (and the error raised) by the run's final scoring
        for (sample, prediction), verdicts in zip(finished, future.result(), strict=True):
            for mode, (verdict, row) in verdicts.items():
                self.scored[mode][sample.id] = verdict
                self.rows[mode][sample.id] = row
            self.on_scored(sample, prediction, verdicts[MODES[0]][0])

    @property
    def unscored(self) -> int:
        """Samples submitted and not scored yet."""
        return sum(self._pending.values())

    async def wait(self) -> None:
        """Until every submitted batch is scored and recorded."""
        while self._pending:
            await asyncio.wait(set(self._pending))
            await asyncio.sleep(0)  # the done callbacks (_record) run before this returns

    def close(self) -> None:
        """Stop the scoring thread; batches not started are dropped (a run that stops is scored when resumed)."""
        self._closed = True
        self._executor.shutdown(wait=False, cancel_futures=True)
