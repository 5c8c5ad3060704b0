"""Background jobs for the app: runs execute on one event loop in a daemon thread, so they go on
when the browser tab closes, share the global concurrency limit, and report live progress.

Everything durable lives in the store; this keeps only what a running job needs in memory (its
progress, its cancel switch and, for the run only, the API key typed into the form).

A public deployment admits runs under limits (an AdmissionPolicy the service hands in, see admission.py): how
many run at once, how many per visitor, how many one visitor may start a day, and how long one run may take in
all. Admission is checked and the slot taken under one lock, so concurrent starts can never exceed the limits.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, final

from evaluators.core.errors import ToolboardError
from evaluators.engine.admission import NO_LIMITS, AdmissionPolicy, NoRoomError
from evaluators.engine.endpoint_guard import check_run_keys
from evaluators.engine.job_manager import ExplainFailure, RunJobs, failure_message
from evaluators.engine.local_model import is_local
from evaluators.engine.preflight import UNLISTED_REFUSED, UnlistedModelRule
from evaluators.engine.runner import Progress, RunIsLiveError, RunOutcome, execute, start_run
from evaluators.engine.settings import RunConfig, RunRequest, require_run_request
from evaluators.engine.store import Store

log = logging.getLogger(__name__)

ACTIVE = ("queued", "running", "cancelling")
# A run the store calls running whose lease another process holds (the CLI, another app).
RUNNING_ELSEWHERE = "running elsewhere"
# What an interrupted run says when its process could not (killed, or its store refused the last write).
STOPPED_UNSEEN = ("no process is running it: it stopped before it could say why (killed, or its store refused "
                  "writes); resume to finish")


def status_without_a_job(store: Store, run_id: str, stored_status: str) -> str:
    """A stored run's status as users should read it when no job of this process drives it: one another
    process executes right now (it holds the run's lease) is running elsewhere; one the store calls running
    that nothing drives was interrupted and can be resumed."""
    if stored_status != "finished" and store.run_is_live(run_id):
        return RUNNING_ELSEWHERE
    if stored_status in ("running", "created"):
        return "interrupted"
    return stored_status


def shown_message(stored_status: str, shown_status: str, message: str | None) -> str:
    """A run's message, saying why it is interrupted when its process could not say so itself."""
    if shown_status == "interrupted" and stored_status != "interrupted" and not message:
        return STOPPED_UNSEEN
    return message or ""
LIVE_ELSEWHERE_MESSAGE = ("run {run_id} is being executed right now by another process (e.g. the command line):"
                          " wait for it to end, or stop it there, before resuming it here")
# How often the time limit and the room on disk are checked while runs go (tests call the checks themselves).
LIMITS_CHECK_SECONDS = 5.0


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
    started: float = field(default_factory=time.monotonic)
    owner: str | None = None
    future: Future[RunOutcome] | None = None
    cancel: asyncio.Event | None = None
    # Stopped by a deployment's limit (its time, the room on disk): its message says which, and it ends cancelled.
    stopped_by_limit: bool = False
    # Set once the job's end is recorded (status, message, after-run work): what `wait` waits for.
    ended: threading.Event = field(default_factory=threading.Event)


@final  # mypy then checks that it implements every method of RunJobs
class JobManager(RunJobs):
    """Starts, cancels, resumes and reports runs in the background, on an event loop in this process."""

    def __init__(self, store: Store, on_finished: Callable[[str], None] | None = None,
                 admission: AdmissionPolicy | None = None, clock: Callable[[], float] = time.monotonic,
                 explain_failure: ExplainFailure | None = None, unlisted: UnlistedModelRule = UNLISTED_REFUSED):
        """`clock` measures how long runs take (for the time limit); tests pass one they move by hand.
        `explain_failure`: the front door's words for a run that failed (see job_manager.failure_message).
        `admission` and `unlisted`: the deployment's limits and its rule for models an endpoint does not list."""
        self.store = store
        self.on_finished = on_finished
        self.explain_failure = explain_failure
        self.admission = admission or NO_LIMITS
        self.unlisted = unlisted
        self.clock = clock
        self._jobs: dict[str, Job] = {}
        # Slots taken by starts still loading their samples, by owner: counted as active runs.
        self._reserved: dict[object, str | None] = {}
        # Seconds each run has executed in this process, over all its starts and resumes.
        self._seconds_used: dict[str, float] = {}
        self._lock = threading.Lock()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="toolboard-jobs", daemon=True)
        self._thread.start()
        if self.admission.max_run_seconds is not None or self.admission.watches_room:
            asyncio.run_coroutine_threadsafe(self._watch_limits(), self._loop)

    # ---- actions ---------------------------------------------------------------------------

    def start(self, request: RunRequest, owner: str | None = None) -> str:
        """Create a run from a checked request and execute it in the background. A start over the limits,
        or an endpoint that does not answer, raises here, before anything runs. `owner`: the visitor's hash
        (None: the operator)."""
        require_run_request(request)
        slot = object()
        with self._lock:
            self._check_admission(owner)
            self._reserved[slot] = owner
        try:
            run_id, samples = start_run(request, self.store, owner=owner, unlisted=self.unlisted)
            self._launch(run_id, "start", samples, request.api_key, rerun_errors=False, owner=owner, slot=slot)
        finally:
            with self._lock:
                self._reserved.pop(slot, None)
        return run_id

    def resume(self, run_id: str, api_key: str | None = None, owner: str | None = None) -> None:
        self._check_idle(run_id)
        check_run_keys(RunConfig.from_json(self.store.get_run(run_id).config), api_key)
        if self.store.get_run(run_id).status == "finished":
            raise ToolboardError(f"run {run_id} is finished: nothing to resume (re-run errors re-sends failed requests)")
        self._launch(run_id, "resume", None, api_key, rerun_errors=False, owner=owner)

    def rerun_errors(self, run_id: str, api_key: str | None = None, owner: str | None = None) -> None:
        self._check_idle(run_id)
        check_run_keys(RunConfig.from_json(self.store.get_run(run_id).config), api_key)
        if not self.store.run_totals(run_id)["errors"]:
            raise ToolboardError(f"run {run_id} has no request errors to re-send")
        self._launch(run_id, "rerun-errors", None, api_key, rerun_errors=True, owner=owner)

    def cancel(self, run_id: str) -> None:
        job = self._jobs.get(run_id)
        if job is None or job.status not in ACTIVE or job.cancel is None:
            if self.store.has_run(run_id) and self.store.run_is_live(run_id):
                raise ToolboardError(f"run {run_id} is executed by another process (e.g. the command line): stop it there")
            raise ToolboardError(f"run {run_id} is not running")
        job.status = "cancelling"
        self._loop.call_soon_threadsafe(job.cancel.set)

    def check_time_limits(self) -> list[str]:
        """Cancel the runs that have used up their time (AdmissionPolicy.max_run_seconds); returns their ids.
        Called every few seconds while the app runs."""
        limit = self.admission.max_run_seconds
        if limit is None:
            return []
        stopped = []
        for job in list(self._jobs.values()):
            if job.status not in ("queued", "running") or job.cancel is None:
                continue
            if self._seconds_of(job) >= limit:
                self._stop_by_limit(job, self._over_time_message(limit))
                stopped.append(job.run_id)
        return stopped

    def check_room_limits(self) -> list[str]:
        """Cancel the runs whose store or visitor has passed a limit on disk while they write (AdmissionPolicy.check_room:
        a run's size is not known when it starts); returns their ids. Called every few seconds while the app
        runs, so a run overshoots by at most what it writes meanwhile; what it finished is kept, and it resumes
        once there is room."""
        stopped = []
        full: dict[str | None, str | None] = {}  # the room of each owner with runs going on, looked at once
        for job in list(self._jobs.values()):
            if job.status not in ("queued", "running") or job.cancel is None:
                continue
            if job.owner not in full:
                try:
                    self.admission.check_room(self.store, job.owner)
                    full[job.owner] = None
                except NoRoomError as refused:
                    full[job.owner] = f"stopped: {refused}".replace(" (nothing was stored)", "; what it finished is kept")
            message = full[job.owner]
            if message is not None:
                self._stop_by_limit(job, message)
                stopped.append(job.run_id)
        return stopped

    def _stop_by_limit(self, job: Job, message: str) -> None:
        job.stopped_by_limit = True
        job.message = message
        job.status = "cancelling"
        if job.cancel is not None:
            self._loop.call_soon_threadsafe(job.cancel.set)

    def wait(self, run_id: str, timeout: float | None = None) -> str | None:
        """Block until the run's job has ended here (tests and scripts): its final status, or None on timeout."""
        job = self._jobs.get(run_id)
        if job is None:
            return self.store.get_run(run_id).status
        return job.status if job.ended.wait(timeout) else None

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
        # What the loop still runs (e.g. SDK connections closing) is ended before it stops.
        try:
            asyncio.run_coroutine_threadsafe(_cancel_other_tasks(), self._loop).result(timeout=10)
        except Exception:  # noqa: BLE001 - shutting down either way
            pass
        self._loop.call_soon_threadsafe(self._loop.stop)

    # ---- views -----------------------------------------------------------------------------

    def job(self, run_id: str) -> Job | None:
        return self._jobs.get(run_id)

    def active_count(self) -> int:
        """Runs going on, with starts still loading their samples."""
        return len(self._active_owners())

    def active_count_of(self, owner: str | None) -> int:
        """The runs `owner` has going on (None: the operator's)."""
        return self._active_owners().count(owner)

    def _active_owners(self) -> list[str | None]:
        jobs = [job.owner for job in list(self._jobs.values()) if job.status in ACTIVE]
        return [*jobs, *list(self._reserved.values())]

    def is_active(self, run_id: str) -> bool:
        job = self._jobs.get(run_id)
        return job is not None and job.status in ACTIVE

    def status_of(self, run_id: str, stored_status: str) -> str:
        """A run's status as users should read it: a run another process executes right now (it holds
        the run's lease) is running elsewhere; one the store calls running that nothing drives was
        interrupted (the app or the CLI stopped) and can be resumed."""
        job = self._jobs.get(run_id)
        if job is not None and job.status in ACTIVE:
            return job.status
        return status_without_a_job(self.store, run_id, stored_status)

    # ---- internals -------------------------------------------------------------------------

    def _check_idle(self, run_id: str) -> None:
        self.store.get_run(run_id)
        if self.is_active(run_id):
            raise ToolboardError(f"run {run_id} is already running")
        if self.store.run_is_live(run_id):
            raise ToolboardError(LIVE_ELSEWHERE_MESSAGE.format(run_id=run_id))

    def _check_admission(self, owner: str | None, run_id: str | None = None) -> None:
        """Refuse a start or resume over the limits. The caller holds self._lock and takes the slot under it."""
        limits = self.admission
        if limits.max_active is not None and self.active_count() >= limits.max_active:
            raise ToolboardError(f"{limits.max_active} runs are going on already (the most this deployment runs at "
                                 "once); try again when one has finished")
        if limits.max_active_per_owner is not None and self.active_count_of(owner) >= limits.max_active_per_owner:
            raise ToolboardError(f"you have {limits.max_active_per_owner} run(s) going on already (the most one visitor "
                                 "runs at once here); wait for it to finish, or cancel it")
        limits.check_runs_quota(self.store, owner, pending=list(self._reserved.values()).count(owner))
        limits.check_room(self.store, owner)
        if limits.max_run_seconds is not None and run_id is not None \
                and self._seconds_used.get(run_id, 0.0) >= limits.max_run_seconds:
            raise ToolboardError(f"run {run_id} has used all its time: {self._over_time_message(limits.max_run_seconds)}")

    def _seconds_of(self, job: Job) -> float:
        """How long the job's run has executed in this process, this execution included."""
        return self._seconds_used.get(job.run_id, 0.0) + self.clock() - job.started

    @staticmethod
    def _over_time_message(limit: float) -> str:
        return (f"a run may take at most {limit / 60:g} minutes in all on this deployment, so it was stopped; what it"
                " finished is kept")

    async def _watch_limits(self) -> None:
        while True:
            await asyncio.sleep(LIMITS_CHECK_SECONDS)
            for check in (self.check_time_limits, self.check_room_limits):
                try:
                    await asyncio.to_thread(check)  # the room's reads of the store must not hold up the loop
                except Exception as exc:  # noqa: BLE001 - the watch goes on
                    log.warning("checking runs' limits: %s", exc)

    def _launch(self, run_id: str, action: str, samples: list | None, api_key: str | None, *, rerun_errors: bool,
                owner: str | None = None, slot: object | None = None) -> None:
        # The cancel switch exists before the job runs, so a cancel right after the start is never lost.
        job = Job(run_id=run_id, action=action, cancel=asyncio.Event(), owner=owner, started=self.clock())
        with self._lock:
            if self.is_active(run_id):
                raise ToolboardError(f"run {run_id} is already running")
            if slot is None:
                self._check_admission(owner, run_id)
            # The start's reserved slot becomes this job in one step: the count never dips in between.
            self._reserved.pop(slot, None)
            self._jobs[run_id] = job

        def on_progress(progress: Progress) -> None:
            job.progress = progress.snapshot()

        async def run() -> RunOutcome:
            if job.status == "queued":
                job.status = "running"
            run = self.store.get_run(run_id)
            if is_local(run.base_url):
                from evaluators.engine.local_model_server import resolve  # its HTTP server machinery only when used

                # Starting a local model server blocks: off the loop, so other jobs go on meanwhile.
                await asyncio.to_thread(resolve, run.base_url)
            return await execute(self.store, run_id, samples, rerun_errors=rerun_errors, on_progress=on_progress,
                                 cancel=job.cancel, api_key=api_key)

        job.future = asyncio.run_coroutine_threadsafe(run(), self._loop)
        job.future.add_done_callback(lambda future: self._finish(job, future))

    def _finish(self, job: Job, future: Future[RunOutcome]) -> None:
        try:
            self._record_end(job, future)
            with contextlib.suppress(sqlite3.Error):  # the store may be closing
                self.store.checkpoint()  # a run's writes leave the log at its largest size until emptied
        finally:
            job.ended.set()

    def _record_end(self, job: Job, future: Future[RunOutcome]) -> None:
        with self._lock:
            self._seconds_used[job.run_id] = self._seconds_of(job)
        try:
            outcome = future.result()
        except RunIsLiveError:
            # Another process took the run between our check and our start: it is that process's run
            # (its status is not ours to overwrite), and which host and process it is is not the page's business.
            job.status = "failed"
            job.message = LIVE_ELSEWHERE_MESSAGE.format(run_id=job.run_id)
            return
        except Exception as exc:  # noqa: BLE001 - shown on the jobs panel, the run stays resumable
            job.status = "failed"
            job.message = failure_message(job.run_id, exc, self.explain_failure)
            exc.__traceback__ = None  # its frames hold the run's API key; nothing keeps them alive
            log.warning("run %s failed: %s", job.run_id, job.message)
            try:
                self.store.set_status(job.run_id, "failed", job.message)
            except Exception:  # noqa: BLE001 - the store may be closing
                pass
            return
        job.status = outcome.status
        job.progress = outcome.progress.snapshot()
        if job.stopped_by_limit and outcome.status == "cancelled":
            done = f"{job.progress.get('done', 0)}/{job.progress.get('total', 0)} done"
            job.message = f"{done}; {job.message}"
            try:
                self.store.set_status(job.run_id, "cancelled", job.message)
            except Exception:  # noqa: BLE001 - the store may be closing
                pass
        if outcome.status == "finished" and self.on_finished is not None:
            try:
                self.on_finished(job.run_id)
            except Exception as exc:  # noqa: BLE001 - e.g. a hub push failing must not fail the run
                log.warning("after run %s: %s", job.run_id, exc)
