"""Background jobs for the app: runs execute on one event loop in a daemon thread, so they go on
when the browser tab closes, share the global concurrency limit, and report live progress.

Everything durable lives in the store; this keeps only what a running job needs in memory (its
progress, its cancel switch and, for the run only, the API key typed into the form).
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from evaluators.core.errors import ToolboardError
from evaluators.engine.http_pool import workers_for
from evaluators.engine.local_model import is_local
from evaluators.engine.local_model import resolve as resolve_local
from evaluators.engine.runner import Progress, RunOutcome, execute, start_run
from evaluators.engine.settings import RunConfig
from evaluators.engine.store import Store

log = logging.getLogger(__name__)

ACTIVE = ("queued", "running", "cancelling")


async def _cancel_other_tasks() -> None:
    tasks = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


@dataclass
class Job:
    run_id: str
    action: str  # start, resume or rerun-errors
    status: str = "queued"
    progress: dict[str, Any] = field(default_factory=dict)
    message: str = ""
    started: float = field(default_factory=time.time)
    future: Future[RunOutcome] | None = None
    cancel: asyncio.Event | None = None


class JobManager:
    """Starts, cancels, resumes and reports runs in the background."""

    def __init__(self, store: Store, on_finished: Callable[[str], None] | None = None):
        self.store = store
        self.on_finished = on_finished
        self._jobs: dict[str, Job] = {}
        self._lock = threading.Lock()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="toolboard-jobs", daemon=True)
        self._thread.start()

    # ---- actions ---------------------------------------------------------------------------

    def start(self, config: RunConfig, api_key: str | None = None) -> str:
        """Create a run and execute it in the background. Bad settings raise here, before anything runs."""
        run_id, samples = start_run(config, self.store)
        self._launch(run_id, "start", samples, api_key, rerun_errors=False)
        return run_id

    def resume(self, run_id: str, api_key: str | None = None) -> None:
        self._check_idle(run_id)
        if self.store.get_run(run_id).status == "finished":
            raise ToolboardError(f"run {run_id} is finished: nothing to resume (re-run errors re-sends failed requests)")
        self._launch(run_id, "resume", None, api_key, rerun_errors=False)

    def rerun_errors(self, run_id: str, api_key: str | None = None) -> None:
        self._check_idle(run_id)
        if not self.store.run_totals(run_id)["errors"]:
            raise ToolboardError(f"run {run_id} has no request errors to re-send")
        self._launch(run_id, "rerun-errors", None, api_key, rerun_errors=True)

    def cancel(self, run_id: str) -> None:
        job = self._jobs.get(run_id)
        if job is None or job.status not in ACTIVE or job.cancel is None:
            raise ToolboardError(f"run {run_id} is not running")
        job.status = "cancelling"
        self._loop.call_soon_threadsafe(job.cancel.set)

    def wait(self, run_id: str, timeout: float | None = None) -> RunOutcome | None:
        """Block until the job ends (for tests and scripts); None if it failed."""
        job = self._jobs[run_id]
        assert job.future is not None
        try:
            return job.future.result(timeout)
        except Exception:  # noqa: BLE001 - the failure is recorded on the job
            return None

    def shutdown(self) -> None:
        for job in list(self._jobs.values()):
            if job.status in ACTIVE and job.cancel is not None:
                self._loop.call_soon_threadsafe(job.cancel.set)
        for job in list(self._jobs.values()):
            if job.future is not None:
                try:
                    job.future.result(timeout=10)
                except Exception:  # noqa: BLE001 - shutting down either way
                    pass
        # What the loop still runs (HTTP worker processes, kept from run to run) is ended before it stops.
        try:
            asyncio.run_coroutine_threadsafe(_cancel_other_tasks(), self._loop).result(timeout=10)
        except Exception:  # noqa: BLE001 - shutting down either way
            pass
        self._loop.call_soon_threadsafe(self._loop.stop)

    # ---- views -----------------------------------------------------------------------------

    def job(self, run_id: str) -> Job | None:
        return self._jobs.get(run_id)

    def active_count(self) -> int:
        return sum(job.status in ACTIVE for job in list(self._jobs.values()))

    def is_active(self, run_id: str) -> bool:
        job = self._jobs.get(run_id)
        return job is not None and job.status in ACTIVE

    def status_of(self, run_id: str, stored_status: str) -> str:
        """A run's status as users should read it: a run the store calls running but no job here
        drives was interrupted (the app restarted) and can be resumed."""
        job = self._jobs.get(run_id)
        if job is not None and job.status in ACTIVE:
            return job.status
        if stored_status in ("running", "created"):
            return "interrupted"
        return stored_status

    # ---- internals -------------------------------------------------------------------------

    def _check_idle(self, run_id: str) -> None:
        self.store.get_run(run_id)
        if self.is_active(run_id):
            raise ToolboardError(f"run {run_id} is already running")

    def _launch(self, run_id: str, action: str, samples: list | None, api_key: str | None, *, rerun_errors: bool) -> None:
        # The cancel switch exists before the job runs, so a cancel right after the start is never lost.
        job = Job(run_id=run_id, action=action, cancel=asyncio.Event())
        with self._lock:
            if self.is_active(run_id):
                raise ToolboardError(f"run {run_id} is already running")
            self._jobs[run_id] = job

        def on_progress(progress: Progress) -> None:
            job.progress = progress.snapshot()

        async def run() -> RunOutcome:
            if job.status == "queued":
                job.status = "running"
            run = self.store.get_run(run_id)
            if is_local(run.base_url):
                # Starting a local model server blocks: off the loop, so other jobs go on meanwhile.
                await asyncio.to_thread(resolve_local, run.base_url)
            # This loop keeps its HTTP worker processes from run to run, so their start is paid once.
            http_workers = workers_for(RunConfig.from_json(run.config).concurrency, cheap_start=True)
            return await execute(self.store, run_id, samples, rerun_errors=rerun_errors, on_progress=on_progress,
                                 cancel=job.cancel, api_key=api_key, http_workers=http_workers)

        job.future = asyncio.run_coroutine_threadsafe(run(), self._loop)
        job.future.add_done_callback(lambda future: self._finish(job, future))

    def _finish(self, job: Job, future: Future[RunOutcome]) -> None:
        try:
            outcome = future.result()
        except Exception as exc:  # noqa: BLE001 - shown on the jobs panel, the run stays resumable
            job.status = "failed"
            job.message = f"{type(exc).__name__}: {exc}"
            exc.__traceback__ = None  # its frames hold the run's API key; nothing keeps them alive
            log.warning("run %s failed: %s", job.run_id, job.message)
            try:
                self.store.set_status(job.run_id, "failed", job.message)
            except Exception:  # noqa: BLE001 - the store may be closing
                pass
            return
        job.status = outcome.status
        job.progress = outcome.progress.snapshot()
        if outcome.status == "finished" and self.on_finished is not None:
            try:
                self.on_finished(job.run_id)
            except Exception as exc:  # noqa: BLE001 - e.g. a hub push failing must not fail the run
                log.warning("after run %s: %s", job.run_id, exc)
