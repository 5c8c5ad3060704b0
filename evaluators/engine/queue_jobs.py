"""Queue mode, the app's side: starting a run creates it in the app's store (checked exactly as in the
embedded mode: endpoints, key, samples), marks it `queued` and sends one Celery task; the app returns
at once with the run id. A watcher thread follows each queued run's task state in the result backend
(queued with its place in the queue, running on which worker with its progress) and, when the task
ends, imports the finished run's record into the store in place of the placeholder (one transaction),
or marks the run cancelled or failed with the reason. The same interface as jobs.JobManager, so the
jobs panel and the forms work the same in both modes.

Nothing is half-created: the broker is pinged before the run is created, and a run whose task could not
be sent is removed again. A key typed into the form goes to Redis under a random reference that expires
(TOOLBOARD_QUEUE_SECRET_TTL_S) and is deleted when the run ends; the task carries only the reference.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from evaluators.core.errors import ToolboardError
from evaluators.engine.endpoint_guard import check_run_keys
from evaluators.engine.jobs import LIVE_ELSEWHERE_MESSAGE, RUNNING_ELSEWHERE, Admission
from evaluators.engine.queue_app import (
    RESULT_EXPIRES_S,
    RUN_TASK,
    QueueSettings,
    cancel_key,
    check_broker,
    done_key,
    redis_client,
    secret_key,
    task_key,
)
from evaluators.engine.queue_worker import make_celery
from evaluators.engine.run_document import export_run, import_run, without_credentials
from evaluators.engine.runner import start_run
from evaluators.engine.settings import RunConfig
from evaluators.engine.store import Store

log = logging.getLogger(__name__)

ACTIVE = ("queued", "running", "cancelling")
# The statuses of a run the app's store holds only as a placeholder while a worker executes it: the
# worker's record replaces it.
PLACEHOLDER_STATUSES = ("queued", "running", "cancelling", "interrupted")
POLL_SECONDS = 1.0


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


class QueueJobs:
    """Runs executed by Celery workers; see the module docstring."""

    def __init__(self, store: Store, settings: QueueSettings, on_finished: Callable[[str], None] | None = None,
                 admission: Admission | None = None, poll_seconds: float = POLL_SECONDS, public: bool = False):
        """`public`: the app is a public deployment; its runs carry that, and workers apply the public
        endpoint and key rules to them (the endpoint is resolved again where the requests are sent)."""
        self.store = store
        self.public = public
        self.settings = settings
        self.on_finished = on_finished
        self.admission = admission or Admission()
        self.celery = make_celery(settings)
        self.redis = redis_client(settings)
        self._jobs: dict[str, QueuedJob] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        for run in store.list_runs():  # runs queued before the app restarted: followed again
            if run.status in ACTIVE and not store.run_is_live(run.id):
                task_id = self._task_of(run.id)
                self._jobs[run.id] = QueuedJob(run.id, status=run.status, owner=run.owner, task_id=task_id or run.id)
        self._watcher = threading.Thread(target=self._watch, args=(poll_seconds,), name="toolboard-queue", daemon=True)
        self._watcher.start()

    # ---- actions ---------------------------------------------------------------------------

    def start(self, config: RunConfig, api_key: str | None = None, owner: str | None = None) -> str:
        """Create the run (checked as in the embedded mode) and queue it; returns its id at once."""
        check_run_keys(config, api_key)
        _check_no_credentials(config)
        slot = QueuedJob(f"starting-{uuid.uuid4().hex}", owner=owner)
        with self._lock:  # the slot is taken under the lock: concurrent starts never exceed the limits
            self._check_admission(owner)
            self._jobs[slot.run_id] = slot
        try:
            check_broker(self.settings)
            run_id, _ = start_run(config, self.store, owner=owner, api_key=api_key)
            self._send(run_id, "start", api_key, owner, created_here=True)
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
        self.celery.control.revoke(job.task_id)
        if job.status == "queued":
            self._remove_from_queue(job.task_id)
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

    def _idle_run(self, run_id: str) -> Any:
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
        limits.check_runs_quota(self.store, owner)

    def _send(self, run_id: str, action: str, api_key: str | None, owner: str | None, *, created_here: bool = False,
              document: dict[str, Any] | None = None) -> None:
        """Mark the run queued and send its task; undone (the run removed if it was created for this) when the
        task cannot be sent."""
        run = self.store.get_run(run_id)
        reference = uuid.uuid4().hex if api_key else None
        settings = {"benchmark": run.benchmark, "language": run.language, "model": run.model, "base_url": run.base_url,
                    "config": run.config, "fingerprint": run.fingerprint, "total": run.total, "owner": run.owner,
                    "action": action, "document": document, "public": self.public}
        previous = run.status
        task_id = f"{run_id}.{uuid.uuid4().hex[:8]}"
        try:
            self.redis.delete(cancel_key(run_id), done_key(run_id))
            if reference:
                self.redis.set(secret_key(reference), api_key, ex=int(self.settings.secret_ttl_s))
            self.redis.set(task_key(run_id), task_id, ex=RESULT_EXPIRES_S)  # found again after a restart
            self.store.set_status(run_id, "queued", "waiting for a worker")
            self.celery.send_task(RUN_TASK, args=(run_id, settings, reference), task_id=task_id,
                                  queue=self.settings.queue)
        except Exception as error:  # noqa: BLE001 - the broker went away between the check and the send
            if reference:
                self._forget_key(reference)
            if created_here:
                self.store.delete_run(run_id)
            else:
                self.store.set_status(run_id, previous, run.message)
            raise ToolboardError(f"the run could not be queued ({type(error).__name__}); nothing was"
                                 f" {'created' if created_here else 'changed'}: try again") from None
        with self._lock:
            self._jobs[run_id] = QueuedJob(run_id, action=action, owner=owner, key_reference=reference,
                                           message="waiting for a worker", task_id=task_id, previous=previous,
                                           previous_message=run.message)

    def _watch(self, poll_seconds: float) -> None:
        while not self._stop.wait(poll_seconds):
            try:
                self.poll()
            except Exception as error:  # noqa: BLE001 - Redis restarting: tried again next time
                log.warning("following queued runs: %s", error)

    def poll(self) -> None:
        """Bring every queued or running run up to date with its task (the watcher calls it every second)."""
        jobs = [job for job in list(self._jobs.values()) if job.status in ACTIVE and job.task_id]
        if not jobs:
            return
        positions = self._queue_positions([job.task_id for job in jobs if job.status == "queued"])
        backend = self.celery.backend
        for job in jobs:
            meta = backend.get_task_meta(job.task_id)  # one read for state and info, every poll of every run
            state, info = meta["status"], meta.get("result")
            if state == "FAILURE":
                info = backend.exception_to_python(info)
            if state == "PENDING":
                place = positions.get(job.task_id)
                job.message = f"queued: {place} in line" if place else "queued: waiting for a worker"
            elif state == "RETRY":  # a second delivery waiting for the worker that holds the run: nothing new
                continue
            elif state in ("STARTED", "PROGRESS"):
                self._running(job, info if isinstance(info, dict) else {})
            elif state == "SUCCESS":
                self._ended_with(job, info if isinstance(info, dict) else {})
            elif state == "REVOKED":
                self._end(job, "cancelled", "cancelled")
            elif state == "FAILURE":
                self._end(job, "failed", f"{type(info).__name__}: {info}" if isinstance(info, BaseException) else str(info))

    def _running(self, job: QueuedJob, info: dict[str, Any]) -> None:
        worker = info.get("worker") or info.get("hostname") or "a worker"
        if job.status == "queued":
            job.status = "running"
            self.store.set_status(job.run_id, "running", f"running on {worker}")
        if "done" in info:
            job.progress = info
        if job.status == "running":
            job.message = f"running on {worker}"

    def _ended_with(self, job: QueuedJob, outcome: dict[str, Any]) -> None:
        status = outcome.get("status")
        if status == "duplicate":  # a second delivery dropped; the run goes on where it was
            return
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
        """The finished run's record in place of the placeholder: from the result, or from the results dataset
        the worker pushed it to."""
        if outcome.get("published") == "hub":
            from evaluators.engine.hub_sync import TOKEN_ENV, HubSync

            # The dataset's copy names no endpoint and no folder: the placeholder's settings are put back.
            placeholder = self.store.get_run(run_id)
            HubSync(str(outcome["repo"]), os.environ.get(TOKEN_ENV) or None, self.store).pull_run(
                run_id, replacing=PLACEHOLDER_STATUSES)
            self.store.restore_settings(run_id, placeholder.model, placeholder.base_url, placeholder.config)
        else:
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
        try:
            self.celery.AsyncResult(job.task_id).forget()
        except Exception:  # noqa: BLE001 - it expires by itself
            pass
        job.ended.set()

    def _forget_key(self, reference: str) -> None:
        try:
            self.redis.delete(secret_key(reference))
        except Exception:  # noqa: BLE001 - it expires by itself
            pass

    def _task_of(self, run_id: str) -> str | None:
        try:
            value = self.redis.get(task_key(run_id))
        except Exception:  # noqa: BLE001 - Redis away: the run id, as runs sent before task ids had suffixes
            return None
        return value.decode() if value else None

    def _remove_from_queue(self, task_id: str) -> None:
        """Take a cancelled run's message out of the queue (workers would skip it anyway, by its cancel flag)."""
        try:
            for raw in self.redis.lrange(self.settings.queue, 0, -1):
                if _message_task_id(raw) == task_id:
                    self.redis.lrem(self.settings.queue, 1, raw)
        except Exception as error:  # noqa: BLE001 - the cancel flag still stops it
            log.warning("taking %s out of the queue: %s", task_id, error)

    def _queue_positions(self, task_ids: list[str]) -> dict[str, int]:
        """The place in line (1: next) of each of these waiting tasks, read from the queue's Redis list (workers
        take from its right end). A message is looked into only for the ids asked (a re-send of errors carries a
        whole run record: nothing is parsed)."""
        if not task_ids:
            return {}
        try:
            messages = self.redis.lrange(self.settings.queue, 0, -1)
        except Exception:  # noqa: BLE001 - the places are a courtesy
            return {}
        wanted = {task_id: task_id.encode() for task_id in task_ids}
        positions = {}
        for index, raw in enumerate(messages):
            for task_id, needle in wanted.items():
                if needle in raw and task_id not in positions:
                    positions[task_id] = len(messages) - index
        return positions


def _message_task_id(raw: bytes) -> str | None:
    try:
        return json.loads(raw)["headers"]["id"]
    except (ValueError, KeyError, TypeError):
        return None


def _check_no_credentials(config: RunConfig) -> None:
    """A base URL holding credentials (user:pass@, a key in its query) would travel in the task message and
    stay in Redis: refused in queue mode, with what to do instead."""
    urls = [config.model.base_url, *(endpoint.base_url for endpoint in config.roles.values())]
    if any(without_credentials(url) != url for url in urls):
        raise ToolboardError("in queue mode an endpoint URL may not hold credentials (user:password@ or a key in its"
                             " query): they would travel in the task; give the key as an API key instead")

