"""Queue mode, the app's side: starting a run creates it in the app's store (checked exactly as in the
embedded mode: endpoints, key, samples), marks it `queued` and sends one Celery task; the app returns
at once with the run id. A watcher thread follows each queued run's task state in the result backend
(queued with its place in the queue, running on which worker with its progress) and, when the task
ends, imports the finished run's record (the run document the task returns, queue_app.TaskResult) into
the store in place of the placeholder (one transaction) and calls `on_finished` (where the app publishes
it, above the engine), or marks the run cancelled or failed with the reason. The same interface as
jobs.JobManager, so the jobs panel and the forms work the same in both modes.

Nothing is half-created: the broker is pinged before the run is created, and a run whose task could not
be sent is removed again. A key typed into the form goes to Redis under a random reference that expires
(TOOLBOARD_QUEUE_SECRET_TTL_S) and is deleted when the run ends; the task carries only the reference.

A task the broker lost (Redis restarted without persistence; the app killed between marking a run queued
and sending it) is sent again: a followed run whose task is nowhere (not waiting in the queue, not taken
by a worker, no state or result, its run not held by a worker) at every poll for longer than the visibility
timeout is sent again under a new task id, as it was sent (QueueJobs._find_lost has the exact rule).
"""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, final

from evaluators.core.errors import ToolboardError
from evaluators.engine.admission import NO_LIMITS, AdmissionPolicy
from evaluators.engine.endpoint_guard import check_run_keys
from evaluators.engine.job_manager import ExplainFailure, RunJobs, failure_message
from evaluators.engine.jobs import LIVE_ELSEWHERE_MESSAGE, RUNNING_ELSEWHERE
from evaluators.engine.preflight import UNLISTED_REFUSED, UnlistedModelRule
from evaluators.engine.queue_app import (
    RESULT_EXPIRES_S,
    RUN_TASK,
    QueueSettings,
    cancel_key,
    check_broker,
    done_key,
    lock_key,
    redis_client,
    resend_key,
    secret_key,
    task_key,
)
from evaluators.engine.queue_worker import UNACKED, make_celery
from evaluators.engine.redact import without_credentials
from evaluators.engine.run_document import export_run, import_run
from evaluators.engine.runner import start_run
from evaluators.engine.settings import RunConfig, RunRequest, require_run_request
from evaluators.engine.store import RunRow, Store

log = logging.getLogger(__name__)

ACTIVE = ("queued", "running", "cancelling")
# The id of a start's slot while its run is being checked and created (not stored yet, so counted apart).
STARTING_PREFIX = "starting-"
# The statuses of a run the app's store holds only as a placeholder while a worker executes it: the
# worker's record replaces it.
PLACEHOLDER_STATUSES = ("queued", "running", "cancelling", "interrupted")
POLL_SECONDS = 1.0
# A task found nowhere is lost once it has been so at this many polls in a row, over longer than the visibility
# timeout, with no look further than LOOK_GAP_S (or three poll intervals) from the one before (a watcher that
# stalled or could not reach Redis starts counting again: its looks must follow the task all the time).
LOST_MIN_POLLS = 3
LOOK_GAP_S = 5.0
LOST_NOTE = "its task was lost from the queue (the broker restarted?)"


@dataclass
class QueuedJob:
    """What the jobs panel reads of a queued run (the shape of jobs.Job)."""

    run_id: str
    action: str = "start"
    status: str = "queued"
    progress: dict[str, Any] = field(default_factory=dict)
    message: str = ""
    owner: str | None = None
    key_reference: str | None = None
    # The Celery task id of this sending (run id + a suffix: a revoked id stays revoked in workers for hours,
    # so a run sent again after a cancel needs a new one).
    task_id: str = ""
    # The run's status before it was sent (a finished run re-sending its errors goes back to it if that fails).
    previous: str | None = None
    previous_message: str | None = None
    ended: threading.Event = field(default_factory=threading.Event)
    # The task's arguments as sent (a lost task is sent again with them; None for a run followed again after
    # the app restarted, rebuilt from the store then) and the task ids of this run's earlier sendings.
    task_settings: dict[str, Any] | None = None
    earlier_task_ids: list[str] = field(default_factory=list)
    # Since when (the watcher's clock) and at how many polls in a row its task was found nowhere.
    missing_since: float | None = None
    missing_polls: int = 0
    # Said beside its place in line while it waits (e.g. that it was sent again).
    note: str = ""
    # False for a run followed again after the app restarted whose sending's record (task_key) is gone too: how
    # it was sent (its action, the reference of a typed key) is unknown here.
    sending_known: bool = True

    def task_ids(self) -> list[str]:
        return [self.task_id, *self.earlier_task_ids]


@final  # mypy then checks that it implements every method of RunJobs
class QueueJobs(RunJobs):
    """Runs executed by Celery workers; see the module docstring."""

    def __init__(self, store: Store, settings: QueueSettings, on_finished: Callable[[str], None] | None = None,
                 admission: AdmissionPolicy | None = None, poll_seconds: float = POLL_SECONDS, public: bool = False,
                 clock: Callable[[], float] = time.monotonic, notify: Callable[[str, str], None] | None = None,
                 explain_failure: ExplainFailure | None = None, unlisted: UnlistedModelRule = UNLISTED_REFUSED):
        """`public`: the app is a public deployment; its runs carry that, and workers apply the public
        endpoint and key rules to them (the endpoint is resolved again where the requests are sent).
        `clock`: seconds, for how long a task has been missing (tests move it themselves). `notify(run_id, text)`:
        told when a lost task is sent again or cannot be (default: a warning in the log). `explain_failure`: the
        front door's words for a run whose task failed (see job_manager.failure_message). `unlisted`: the
        deployment's rule for a model its endpoint does not list (checked here, before the run is queued)."""
        self.store = store
        self.explain_failure = explain_failure
        self.clock = clock
        self.notify = notify or (lambda run_id, text: log.warning("run %s: %s", run_id, text))
        self._look_gap = max(LOOK_GAP_S, 3 * poll_seconds)
        self._holder = uuid.uuid4().hex
        self._last_look: float | None = None
        self.public = public
        self.settings = settings
        self.on_finished = on_finished
        self.admission = admission or NO_LIMITS
        self.unlisted = unlisted
        self.celery = make_celery(settings)
        self.redis = redis_client(settings)
        self._jobs: dict[str, QueuedJob] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        for run in store.list_runs():  # runs queued before the app restarted: followed again
            if run.status in ACTIVE and not store.run_is_live(run.id):
                sending = self._sending_of(run.id) or {}
                self._jobs[run.id] = QueuedJob(run.id, action=str(sending.get("action") or "start"), status=run.status,
                                               owner=run.owner, key_reference=sending.get("reference"),
                                               task_id=str(sending.get("task_id") or run.id),
                                               previous=sending.get("previous"),
                                               previous_message=sending.get("previous_message"),
                                               sending_known=bool(sending.get("action")))
        self._watcher = threading.Thread(target=self._watch, args=(poll_seconds,), name="toolboard-queue", daemon=True)
        self._watcher.start()

    # ---- actions ---------------------------------------------------------------------------

    def start(self, request: RunRequest, owner: str | None = None) -> str:
        """Create the run from a checked request (as in the embedded mode) and queue it; returns its id at once."""
        _check_no_credentials(require_run_request(request).config)
        slot = QueuedJob(f"{STARTING_PREFIX}{uuid.uuid4().hex}", owner=owner)
        with self._lock:  # the slot is taken under the lock: concurrent starts never exceed the limits
            self._check_admission(owner)
            self._jobs[slot.run_id] = slot
        try:
            check_broker(self.settings)
            run_id, _ = start_run(request, self.store, owner=owner, unlisted=self.unlisted)
            self._send(run_id, "start", request.api_key, owner, created_here=True)
        finally:
            with self._lock:
                self._jobs.pop(slot.run_id, None)
        return run_id

    def resume(self, run_id: str, api_key: str | None = None, owner: str | None = None) -> None:
        """Queue an interrupted or cancelled run again: a worker that holds its earlier answers goes on from
        them, another starts it over (answers from before may be asked again)."""
        run = self._idle_run(run_id)
        if run.status == "finished":
            raise ToolboardError(f"run {run_id} is finished: nothing to resume (re-run errors re-sends failed requests)")
        check_run_keys(RunConfig.from_json(run.config), api_key)
        _check_no_credentials(RunConfig.from_json(run.config))
        check_broker(self.settings)
        self._send(run_id, "resume", api_key, owner)

    def rerun_errors(self, run_id: str, api_key: str | None = None, owner: str | None = None) -> None:
        """Queue a finished run to re-send its failed requests; its record goes with the task, so any worker can."""
        run = self._idle_run(run_id)
        if not self.store.run_totals(run_id)["errors"]:
            raise ToolboardError(f"run {run_id} has no request errors to re-send")
        check_run_keys(RunConfig.from_json(run.config), api_key)
        _check_no_credentials(RunConfig.from_json(run.config))
        check_broker(self.settings)
        document = export_run(self.store, run_id) if run.status == "finished" else None
        self._send(run_id, "rerun-errors", api_key, owner, document=document)

    def cancel(self, run_id: str) -> None:
        """Revoke the run's task, queued or running: a queued one never starts (any worker, even one started
        later, checks the cancel flag first); a running one stops at its next progress report and keeps what
        it has answered."""
        job = self._jobs.get(run_id)
        if job is None or job.status not in ACTIVE:
            raise ToolboardError(f"run {run_id} is not running")
        self.redis.set(cancel_key(run_id), "1", ex=RESULT_EXPIRES_S)
        self.celery.control.revoke(job.task_ids())
        if job.status == "queued":
            for task_id in job.task_ids():
                self._remove_from_queue(task_id)
            self._end(job, "cancelled", "cancelled while queued")
        else:
            job.status = "cancelling"
            self.store.set_status(run_id, "cancelling", "cancelling…")

    def wait(self, run_id: str, timeout: float | None = None) -> str | None:
        """Block until the run's task has ended here (tests and scripts); its status, or None on timeout."""
        job = self._jobs.get(run_id)
        if job is None:
            return self.store.get_run(run_id).status
        return job.status if job.ended.wait(timeout) else None

    def shutdown(self) -> None:
        self._stop.set()
        self._watcher.join(5)

    def check_time_limits(self) -> list[str]:
        """The workers enforce the time limit per run (TOOLBOARD_QUEUE_TIME_LIMIT_S); nothing to do here."""
        return []

    # ---- views (as jobs.JobManager) ----------------------------------------------------------

    def job(self, run_id: str) -> QueuedJob | None:
        return self._jobs.get(run_id)

    def is_active(self, run_id: str) -> bool:
        job = self._jobs.get(run_id)
        return job is not None and job.status in ACTIVE

    def active_count(self) -> int:
        return sum(job.status in ACTIVE for job in list(self._jobs.values()))

    def active_count_of(self, owner: str | None) -> int:
        return sum(job.status in ACTIVE and job.owner == owner for job in list(self._jobs.values()))

    def status_of(self, run_id: str, stored_status: str) -> str:
        """As JobManager.status_of: a run executed by another process here (the CLI without --queue) is running
        elsewhere; one the store calls running that nothing drives was interrupted."""
        job = self._jobs.get(run_id)
        if job is not None and job.status in ACTIVE:
            return job.status
        if stored_status != "finished" and self.store.run_is_live(run_id):
            return RUNNING_ELSEWHERE
        if stored_status in ("running", "created", "queued", "cancelling"):
            return "interrupted"
        return stored_status

    # ---- internals -------------------------------------------------------------------------

    def _idle_run(self, run_id: str) -> RunRow:
        run = self.store.get_run(run_id)
        if self.is_active(run_id):
            raise ToolboardError(f"run {run_id} is already queued or running")
        if self.store.run_is_live(run_id):
            raise ToolboardError(LIVE_ELSEWHERE_MESSAGE.format(run_id=run_id))
        with self._lock:
            self._check_admission(run.owner)
        return run

    def _check_admission(self, owner: str | None) -> None:
        limits = self.admission
        if limits.max_active is not None and self.active_count() >= limits.max_active:
            raise ToolboardError(f"{limits.max_active} runs are queued or going on already (the most this deployment"
                                 " takes at once); try again when one has finished")
        if limits.max_active_per_owner is not None and self.active_count_of(owner) >= limits.max_active_per_owner:
            raise ToolboardError(f"you have {limits.max_active_per_owner} run(s) queued or going on already (the most"
                                 " one visitor has at once here); wait for it to finish, or cancel it")
        starting = sum(job.run_id.startswith(STARTING_PREFIX) and job.owner == owner for job in list(self._jobs.values()))
        limits.check_runs_quota(self.store, owner, pending=starting)
        limits.check_room(self.store, owner)

    def _send(self, run_id: str, action: str, api_key: str | None, owner: str | None, *, created_here: bool = False,
              document: dict[str, Any] | None = None) -> None:
        """Mark the run queued and send its task; undone (the run removed if it was created for this) when the
        task cannot be sent."""
        run = self.store.get_run(run_id)
        reference = uuid.uuid4().hex if api_key else None
        job = QueuedJob(run_id, action=action, owner=owner, key_reference=reference, message="waiting for a worker",
                        previous=run.status, previous_message=run.message,
                        task_settings=self._task_settings(run, action, document))
        try:
            self.redis.delete(cancel_key(run_id), done_key(run_id))
            if reference:
                self.redis.set(secret_key(reference), api_key, ex=int(self.settings.secret_ttl_s))
            task_id = self._record_sending(job)  # found again after a restart, even if the app dies right here
            self.store.set_status(run_id, "queued", "waiting for a worker")
            self._publish(job, task_id)
        except Exception as error:  # noqa: BLE001 - the broker went away between the check and the send
            if reference:
                self._forget_key(reference)
            if created_here:
                self.store.delete_run(run_id)
            else:
                self.store.set_status(run_id, run.status, run.message)
            raise ToolboardError(f"the run could not be queued ({type(error).__name__}); nothing was"
                                 f" {'created' if created_here else 'changed'}: try again") from None
        with self._lock:
            self._jobs[run_id] = job

    def _task_settings(self, run: RunRow, action: str, document: dict[str, Any] | None) -> dict[str, Any]:
        """What the task tells a worker about the run (never a key)."""
        return {"benchmark": run.benchmark, "language": run.language, "model": run.model, "base_url": run.base_url,
                "config": run.config, "fingerprint": run.fingerprint, "total": run.total, "owner": run.owner,
                "action": action, "document": document, "public": self.public}

    def _record_sending(self, job: QueuedJob) -> str:
        """A new task id for a sending of the run (run id + a suffix: a revoked id stays revoked in workers for
        hours), written with how the run is sent to Redis, where an app that restarts finds it again."""
        task_id = f"{job.run_id}.{uuid.uuid4().hex[:8]}"
        record = {"task_id": task_id, "action": job.action, "reference": job.key_reference, "previous": job.previous,
                  "previous_message": job.previous_message}
        self.redis.set(task_key(job.run_id), json.dumps(record), ex=RESULT_EXPIRES_S)
        return task_id

    def _publish(self, job: QueuedJob, task_id: str) -> None:
        """Send the run's task under `task_id`, which the run is followed by from now on, even if the sending
        fails (it may have reached the broker all the same); earlier ids are still looked for."""
        if job.task_id and job.task_id != task_id:
            job.earlier_task_ids.append(job.task_id)
        job.task_id = task_id
        self.celery.send_task(RUN_TASK, args=(job.run_id, job.task_settings, job.key_reference), task_id=task_id,
                              queue=self.settings.queue)

    def _watch(self, poll_seconds: float) -> None:
        while not self._stop.wait(poll_seconds):
            try:
                self.poll()
            except Exception as error:  # noqa: BLE001 - Redis restarting: tried again next time
                log.warning("following queued runs: %s", error)

    def poll(self) -> None:
        """Bring every queued or running run up to date with its task (the watcher calls it every second), and
        send again the task of a run that the broker has lost."""
        try:
            self._poll()
        except Exception:
            self._last_look = None  # this look was not whole: a missing task is counted again from the next
            raise

    def _poll(self) -> None:
        now = self.clock()
        continuous = self._last_look is not None and now - self._last_look <= self._look_gap
        self._last_look = None
        jobs = [job for job in list(self._jobs.values()) if job.status in ACTIVE and job.task_id]
        backend = self.celery.backend
        # One read for state and info, every poll of every run; then the places in line of those without a state.
        metas = {job.run_id: backend.get_task_meta(job.task_id) for job in jobs}
        waiting = [job for job in jobs if metas[job.run_id]["status"] == "PENDING"]
        positions = self._queue_positions([task_id for job in waiting for task_id in job.task_ids()])
        for job in jobs:
            meta = metas[job.run_id]
            state, info = meta["status"], meta.get("result")
            if state == "FAILURE":
                info = backend.exception_to_python(info)
            if state == "PENDING":
                known = positions or {}
                places = [known[task_id] for task_id in job.task_ids() if task_id in known]
                job.message = " ".join(filter(None, (f"queued: {min(places)} in line" if places
                                                     else "queued: waiting for a worker", job.note and f"({job.note})")))
            elif state == "RETRY":  # a second delivery waiting for the worker that holds the run: nothing new
                continue
            elif state in ("STARTED", "PROGRESS"):
                self._running(job, info if isinstance(info, dict) else {})
            elif state == "SUCCESS":
                self._ended_with(job, info if isinstance(info, dict) else {})
            elif state == "REVOKED":
                self._end(job, "cancelled", "cancelled")
            elif state == "FAILURE":
                self._end(job, "failed", failure_message(job.run_id, info, self.explain_failure)
                          if isinstance(info, BaseException) else str(info))
        if positions is None:  # the queue could not be read: nothing is known missing from this look
            return
        unseen = [job for job in waiting if job.status in ACTIVE and not any(task_id in positions
                                                                                for task_id in job.task_ids())]
        for job in jobs:
            if job not in unseen:
                job.missing_since, job.missing_polls = None, 0
        for job in self._find_lost(unseen, now, continuous):
            self._send_again(job)
        self._last_look = now

    def _find_lost(self, unseen: list[QueuedJob], now: float, continuous: bool) -> list[QueuedJob]:
        """The runs whose task is lost, among these followed runs whose task has no state and is not waiting in the
        queue. A run's task is lost when, at every poll for longer than the visibility timeout (and at least
        LOST_MIN_POLLS polls in a row, each within LOOK_GAP_S of the one before), none of its sendings' task ids is
        waiting in the queue or taken by a worker (kombu's `unacked` hash: a worker that took a task holds it
        there until the run ends, or gives it back), none has a state or a result, no worker holds the run's lock
        (toolboard:running:<run>, renewed every second while it executes) and it has not ended on a worker
        (toolboard:done:<run>). A live worker renews its lock and state every second, and a dead worker's
        delivery stays in `unacked` until Redis hands it out again: only a task that the broker itself lost
        looks so that long. Another follower's newer sending of the run (task_key) is followed instead."""
        if not unseen:
            return []
        taken = self._taken([task_id for job in unseen for task_id in job.task_ids()])
        with self.redis.pipeline() as pipe:
            for job in unseen:
                pipe.exists(lock_key(job.run_id), done_key(job.run_id))
                pipe.get(task_key(job.run_id))
            replies = pipe.execute()
        lost = []
        for index, job in enumerate(unseen):
            held, record = replies[2 * index], replies[2 * index + 1]
            if held or taken.intersection(job.task_ids()) or self._follow_sending_with_state(job) \
                    or self._follow_newer_sending(job, record):
                job.missing_since, job.missing_polls = None, 0
                continue
            if not continuous or job.missing_since is None:
                job.missing_since, job.missing_polls = now, 0
            job.missing_polls += 1
            if job.missing_polls >= LOST_MIN_POLLS and now - job.missing_since > self.settings.visibility_s:
                lost.append(job)
        return lost

    def _taken(self, task_ids: list[str]) -> set[str]:
        """Which of these task ids a worker has taken and not yet acknowledged (a message is not parsed: a re-send of
        errors carries a whole run record; an id found anywhere in it counts, erring on the side of taken)."""
        wanted = {task_id: task_id.encode() for task_id in task_ids}
        found: set[str] = set()
        for _tag, raw in self.redis.hscan_iter(UNACKED, count=500):
            found.update(task_id for task_id, needle in wanted.items() if needle in raw)
        return found

    def _follow_sending_with_state(self, job: QueuedJob) -> bool:
        """True when one of the run's sendings has a state (read again: it may have come since the poll began);
        an earlier sending that has one is followed from now on."""
        for task_id in job.task_ids():
            if self.celery.backend.get_task_meta(task_id)["status"] != "PENDING":
                if task_id != job.task_id:
                    job.earlier_task_ids = [other for other in job.task_ids() if other != task_id]
                    job.task_id = task_id
                return True
        return False

    def _follow_newer_sending(self, job: QueuedJob, record: bytes | None) -> bool:
        """True when another process following this run (the app and `run --queue` on one store) has sent it
        again: its sending is followed from now on."""
        task_id = _record(record).get("task_id")
        if not task_id or task_id in job.task_ids():
            return False
        job.earlier_task_ids.append(job.task_id)
        job.task_id = str(task_id)
        return True

    def _send_again(self, job: QueuedJob) -> None:
        """Send a lost task again, as it was sent, under a new task id; or end the run saying why it cannot be."""
        job.missing_since, job.missing_polls = None, 0
        run_id = job.run_id
        if job.status not in ACTIVE:  # cancelled meanwhile
            return
        if job.previous is None and not job.sending_known and self.store.load_report(run_id) is not None:
            job.previous = "finished"  # it had finished: it stays the finished run it was
        if job.status == "cancelling":
            self._end(job, "cancelled", f"cancelled; {LOST_NOTE}")
            return
        if not job.sending_known:
            self._end(job, "failed", f"{LOST_NOTE}, and with it how it was sent (this app restarted meanwhile):"
                                     " resume it")
            return
        if job.key_reference and not self.redis.exists(secret_key(job.key_reference)):
            self._end(job, "failed", f"{LOST_NOTE}, and the API key typed for it with it: resume it, typing the key"
                                     " again")
            return
        if job.task_settings is None:  # followed again after the app restarted
            if job.action == "rerun-errors" and job.previous == "finished":
                self._end(job, "failed", f"{LOST_NOTE}: re-send its errors again")
                return
            job.task_settings = self._task_settings(self.store.get_run(run_id), job.action, None)
        if not self._claim_sending_again(run_id):
            return  # another process following the run sends it again: that sending is followed once seen
        try:
            self._publish(job, self._record_sending(job))
        except Exception as error:  # noqa: BLE001 - the broker away again: still queued, tried again later
            job.note = (f"{LOST_NOTE}; sending it again failed ({type(error).__name__}): trying again in"
                        f" {self.settings.visibility_s:g} s")
            job.message = f"queued: waiting for a worker ({job.note})"
            self.notify(run_id, job.note)
            return
        job.note = f"{LOST_NOTE}; sent again"
        job.message = f"queued: waiting for a worker ({job.note})"
        if job.status == "running":  # its state was lost while it ran, and its worker is gone
            job.status, job.progress = "queued", {}
        self.store.set_status(run_id, "queued", job.message)
        self.notify(run_id, job.note)

    def _claim_sending_again(self, run_id: str) -> bool:
        """One process sends a lost run again per visibility timeout (the app and `run --queue` may follow the same
        run): the claim is a Redis key this process holds."""
        key, holder = resend_key(run_id), self._holder
        ttl = max(1, int(self.settings.visibility_s))
        if self.redis.set(key, holder, nx=True, ex=ttl):
            return True
        return (self.redis.get(key) or b"").decode() == holder

    def _running(self, job: QueuedJob, info: dict[str, Any]) -> None:
        worker = info.get("worker") or info.get("hostname") or "a worker"
        if job.status == "queued":
            job.status, job.note = "running", ""
            self.store.set_status(job.run_id, "running", f"running on {worker}")
        if "done" in info:
            job.progress = info
        if job.status == "running":
            job.message = f"running on {worker}"

    def _ended_with(self, job: QueuedJob, outcome: dict[str, Any]) -> None:
        status = outcome.get("status")
        if status == "finished":
            try:
                self._import(job.run_id, outcome)
            except Exception as error:  # noqa: BLE001 - the result stays in Redis: tried again at the next poll
                job.message = (f"finished on {outcome.get('worker', 'a worker')}; storing it here failed ({error});"
                               " trying again")
                log.warning("run %s: %s", job.run_id, job.message)
                return
            self._end(job, "finished", "")
            if self.on_finished is not None:
                try:
                    self.on_finished(job.run_id)
                except Exception as error:  # noqa: BLE001 - e.g. a hub push failing must not fail the run
                    log.warning("after run %s: %s", job.run_id, error)
            return
        if status == "cancelled" and isinstance(outcome.get("progress"), dict):
            done = outcome["progress"]
            self._end(job, "cancelled", f"{done.get('done', 0)}/{done.get('total', 0)} done; resume to finish")
            return
        self._end(job, status if status in ("cancelled", "failed") else "failed", str(outcome.get("message") or status))

    def _import(self, run_id: str, outcome: dict[str, Any]) -> None:
        """The finished run's record (the result's run document, queue_app.TaskResult: a RunDocument's JSON values,
        checked by the model as import_run reads it) in place of the placeholder."""
        document = outcome.get("document")
        if isinstance(document, str):
            document = json.loads(document)
        import_run(self.store, document, replacing=PLACEHOLDER_STATUSES)
        if self.store.get_run(run_id).status != "finished":
            raise ToolboardError("the worker's record of the run is not a finished run")

    def _end(self, job: QueuedJob, status: str, message: str) -> None:
        job.status = status
        job.message = message
        if status != "finished":
            # A finished run whose re-sent errors did not come back stays the finished run it was.
            kept = (job.previous, f"{job.previous_message or ''} (re-sending its errors: {status}, {message})") \
                if job.previous == "finished" else (status, message)
            try:
                self.store.set_status(job.run_id, *kept)
            except Exception as error:  # noqa: BLE001 - the store may be closing
                log.warning("run %s: %s", job.run_id, error)
        if job.key_reference:
            self._forget_key(job.key_reference)
        job.task_settings = None
        for task_id in job.task_ids():
            try:
                self.celery.AsyncResult(task_id).forget()
            except Exception:  # noqa: BLE001 - it expires by itself
                pass
        job.ended.set()

    def _forget_key(self, reference: str) -> None:
        try:
            self.redis.delete(secret_key(reference))
        except Exception:  # noqa: BLE001 - it expires by itself
            pass

    def _sending_of(self, run_id: str) -> dict[str, Any] | None:
        """The record of the run's latest sending (see _record_sending), or None: Redis away or without it (then
        the run is followed by its id, as runs sent before task ids had suffixes)."""
        try:
            value = self.redis.get(task_key(run_id))
        except Exception:  # noqa: BLE001 - Redis away
            return None
        return _record(value) or None

    def _remove_from_queue(self, task_id: str) -> None:
        """Take a cancelled run's message out of the queue (workers would skip it anyway, by its cancel flag)."""
        try:
            for raw in self.redis.lrange(self.settings.queue, 0, -1):
                if _message_task_id(raw) == task_id:
                    self.redis.lrem(self.settings.queue, 1, raw)
        except Exception as error:  # noqa: BLE001 - the cancel flag still stops it
            log.warning("taking %s out of the queue: %s", task_id, error)

    def _queue_positions(self, task_ids: list[str]) -> dict[str, int] | None:
        """The place in line (1: next) of each of these waiting tasks, read from the queue's Redis list (workers
        take from its right end); None when the queue cannot be read. A message is looked into only for the ids
        asked (a re-send of errors carries a whole run record: nothing is parsed)."""
        if not task_ids:
            return {}
        try:
            messages = self.redis.lrange(self.settings.queue, 0, -1)
        except Exception:  # noqa: BLE001 - the places are a courtesy; nothing is taken for missing then
            return None
        wanted = {task_id: task_id.encode() for task_id in task_ids}
        positions = {}
        for index, raw in enumerate(messages):
            for task_id, needle in wanted.items():
                if needle in raw and task_id not in positions:
                    positions[task_id] = len(messages) - index
        return positions


def _record(value: bytes | None) -> dict[str, Any]:
    """A sending's record as _record_sending writes it; a bare task id as the app wrote it before."""
    if not value:
        return {}
    text = value.decode("utf-8", "replace")
    try:
        record = json.loads(text)
    except ValueError:
        return {"task_id": text}
    return record if isinstance(record, dict) else {"task_id": text}


def _message_task_id(raw: bytes) -> str | None:
    try:
        task_id = json.loads(raw)["headers"]["id"]
    except (ValueError, KeyError, TypeError):
        return None
    return task_id if isinstance(task_id, str) else None


def _check_no_credentials(config: RunConfig) -> None:
    """A base URL holding credentials (user:pass@, a key in its query) would travel in the task message and
    stay in Redis: refused in queue mode, with what to do instead."""
    urls = [config.model.base_url, *(endpoint.base_url for endpoint in config.roles.values())]
    if any(without_credentials(url) != url for url in urls):
        raise ToolboardError("in queue mode an endpoint URL may not hold credentials (user:password@ or a key in its"
                             " query): they would travel in the task; give the key as an API key instead")

