"""What a queue worker does with a run: the same runner as the embedded mode (runner.execute), on the
worker's own store and response cache (its TOOLBOARD_HOME), reporting progress as the task's state.

The task's message holds the run's settings (endpoint URL, model, key variable name), never a key: the
worker reads the key from its own environment (the variable the settings name), or, for a key typed into
the app's form, from a short-lived reference in Redis that the app wrote and deletes when the run ends.

While the run goes, every PROGRESS_EVERY_S the worker: publishes the task state `PROGRESS` (per-subset
done/total, errors, requests/s, ETA, which worker), touches its delivery in Redis (so a live run is never
handed to a second worker), renews the run's lock, and looks for a cancel flag. A delivery of a run that
another live worker holds the lock of is sent again to be tried later: a run executes on one worker at a time.

The task returns a queue_app.TaskResult through the result backend (JSON in Redis): for a finished run
`{"status": "finished", "worker": …, "document": <the run document>}` (run_document.export_run), which the
app imports in place of its placeholder; `cancelled` and `failed` say why. The queue carries runs in this
format of its own: publishing a finished run (the results dataset) is the app's business, above the engine.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import socket
import time
import uuid
from collections.abc import Iterator
from typing import Any

from evaluators.core.errors import ToolboardError
from evaluators.engine.endpoint_guard import PUBLIC_MODE_ENV
from evaluators.engine.queue_app import (
    PROGRESS_EVERY_S,
    RESULT_EXPIRES_S,
    RUN_TASK,
    QueueSettings,
    TaskResult,
    cancel_key,
    celery_config,
    done_key,
    lock_key,
    redis_client,
    secret_key,
)
from evaluators.engine.store import Store

log = logging.getLogger(__name__)

PROGRESS_STATE = "PROGRESS"
# A worker's hold on a run: renewed every PROGRESS_EVERY_S; a worker that died frees it within this time.
LOCK_SECONDS = 10
# kombu's Redis transport keeps unacknowledged deliveries in a hash (tag -> [message, exchange, routing key])
# and in a sorted set scored by delivery time, from which it hands out again those older than the timeout.
UNACKED = "unacked"
UNACKED_INDEX = "unacked_index"


def make_celery(settings: QueueSettings) -> Any:
    """The Celery app of the app and the workers for these settings (queue_app.celery_config), with the run
    task registered."""
    from celery import Celery

    app = Celery("toolboard")
    app.conf.update(celery_config(settings))
    register_tasks(app, settings)
    return app


def register_tasks(app: Any, settings: QueueSettings) -> None:
    @app.task(bind=True, name=RUN_TASK)
    def run_task(self: Any, run_id: str, run: dict[str, Any], key_reference: str | None = None) -> TaskResult:
        return execute_queued_run(self, settings, run_id, run, key_reference)


def worker_name(task: Any) -> str:
    """The worker's name as Celery knows it (`--hostname`, e.g. worker@host)."""
    return task.request.hostname or socket.gethostname()


def execute_queued_run(task: Any, settings: QueueSettings, run_id: str, run: dict[str, Any],
                       key_reference: str | None) -> TaskResult:
    """Execute one queued run on this worker and say how it ended (see the module docstring)."""
    from celery.exceptions import Ignore, SoftTimeLimitExceeded

    redis = redis_client(settings)
    if redis.exists(cancel_key(run_id)):
        return {"status": "cancelled", "message": "cancelled while queued"}
    # A second delivery of a run leaves the task's state alone (Ignore): the state is the run's own execution's.
    if redis.exists(done_key(run_id)):  # handed out again after the run had ended
        raise Ignore()
    holder = f"{worker_name(task)} pid {os.getpid()} ({uuid.uuid4().hex[:6]})"
    if not redis.set(lock_key(run_id), holder, nx=True, ex=LOCK_SECONDS):
        # Another worker holds the run: alive, or died less than LOCK_SECONDS ago. Sent again to be tried a
        # little later (within the visibility timeout, so the wait itself is not handed out again): never dropped.
        task.apply_async(args=(run_id, run, key_reference), task_id=task.request.id, queue=settings.queue,
                         countdown=min(LOCK_SECONDS, settings.visibility_s / 2))
        raise Ignore()
    store = Store()
    try:
        _prepare(store, run_id, run)
        api_key = _typed_key(redis, key_reference)
        rerun_errors = run.get("action") == "rerun-errors"
        try:
            with _public_rules(bool(run.get("public"))):
                outcome, document = asyncio.run(_execute(task, redis, store, run_id, run["total"], api_key, holder,
                                                         rerun_errors))
        except SoftTimeLimitExceeded:
            return {"status": "failed", "message": f"stopped: the run took longer than {settings.time_limit_s:g} s, the"
                                                   " queue's time limit per run (TOOLBOARD_QUEUE_TIME_LIMIT_S)"}
        if outcome.status == "cancelled":
            return {"status": "cancelled", "progress": outcome.progress.snapshot(), "worker": worker_name(task)}
        if outcome.status != "finished":
            return {"status": outcome.status, "message": store.get_run(run_id).message or "", "worker": worker_name(task)}
        redis.set(done_key(run_id), "1", ex=RESULT_EXPIRES_S)
        return {"status": "finished", "worker": worker_name(task), "document": document}
    finally:
        store.close()
        if (redis.get(lock_key(run_id)) or b"").decode() == holder:
            redis.delete(lock_key(run_id))


@contextlib.contextmanager
def _public_rules(public: bool) -> Iterator[None]:
    """While a public deployment's run executes here, the public rules apply to it as they do in the app (no
    loopback or private endpoints, no keys from this machine's environment): the worker resolves the endpoint
    again, so the app's check alone would not hold. A pool process executes one run at a time."""
    if not public:
        yield
        return
    before = os.environ.get(PUBLIC_MODE_ENV)
    os.environ[PUBLIC_MODE_ENV] = "1"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(PUBLIC_MODE_ENV, None)
        else:
            os.environ[PUBLIC_MODE_ENV] = before


def _prepare(store: Store, run_id: str, run: dict[str, Any]) -> None:
    """The run in this worker's store: as the app's record sent with the task (re-sending a finished run's
    errors), as this worker left it (a delivery handed out again, a resume), else created from the settings."""
    from evaluators.engine.run_document import import_run

    if run.get("document") and not store.has_run(run_id):
        import_run(store, run["document"])
    if not store.has_run(run_id):
        store.create_run(run["benchmark"], run.get("language"), run["model"], run["base_url"], run["config"],
                         run["fingerprint"], run["total"], owner=run.get("owner"), run_id=run_id)


def deliveries_of(redis: Any, task_id: str) -> list[bytes]:
    """The unacknowledged deliveries of the task (Celery does not tell a task its delivery tag)."""
    tags = []
    wanted = task_id.encode()
    for tag, raw in redis.hscan_iter(UNACKED, count=500):
        if wanted not in raw:  # most deliveries are other runs': not parsed (one may carry a whole run record)
            continue
        try:
            if json.loads(raw)[0]["headers"]["id"] == task_id:
                tags.append(tag)
        except (ValueError, KeyError, IndexError, TypeError):
            continue
    return tags


def _typed_key(redis: Any, reference: str | None) -> str | None:
    if not reference:
        return None
    value = redis.get(secret_key(reference))
    if value is None:
        raise ToolboardError("the API key typed for this run has expired while the run was queued "
                             "(TOOLBOARD_QUEUE_SECRET_TTL_S): start the run again")
    key: str = value.decode("utf-8")
    return key


async def _execute(task: Any, redis: Any, store: Store, run_id: str, total: int, api_key: str | None,
                   holder: str, rerun_errors: bool) -> tuple[Any, dict[str, Any]]:
    """runner.execute with the worker's duties on the side: progress, delivery, lock and cancel, every
    PROGRESS_EVERY_S (Redis calls off the event loop); then the finished run's document ({} for a run that did
    not finish)."""
    from evaluators.engine.run_document import export_run
    from evaluators.engine.runner import execute

    cancel = asyncio.Event()
    latest: dict[str, Any] = {"run_id": run_id, "done": 0, "total": total, "errors": 0, "per_subset": {},
                              "requests_per_s": 0.0, "eta_s": None}
    # Read here: the task's request is local to this thread, and the duties run on another.
    task_id, worker = task.request.id, worker_name(task)

    def on_progress(progress: Any) -> None:
        latest.update(progress.snapshot())

    def duties() -> bool:
        task.update_state(task_id=task_id, state=PROGRESS_STATE, meta={**latest, "worker": worker})
        tags = deliveries_of(redis, task_id)
        with redis.pipeline() as pipe:
            if tags:  # a live run's delivery is never handed out again
                pipe.zadd(UNACKED_INDEX, dict.fromkeys(tags, time.time()), xx=True)
            pipe.set(lock_key(run_id), holder, ex=LOCK_SECONDS)
            pipe.exists(cancel_key(run_id))
            return bool(pipe.execute()[-1])

    ended = asyncio.Event()

    async def on_the_side() -> None:
        while not ended.is_set():
            try:
                if await asyncio.to_thread(duties):
                    cancel.set()
            except Exception as error:  # noqa: BLE001 - Redis restarting: the run goes on, tried again next time
                log.warning("run %s: reporting progress: %s", run_id, error)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(ended.wait(), PROGRESS_EVERY_S)

    side = asyncio.create_task(on_the_side())
    try:
        outcome = await execute(store, run_id, rerun_errors=rerun_errors, on_progress=on_progress, cancel=cancel,
                                api_key=api_key)
        # Written while the duties go on: a large run's record keeps the run's lock and delivery alive meanwhile.
        document = await asyncio.to_thread(export_run, store, run_id) if outcome.status == "finished" else {}
        return outcome, document
    finally:
        # Waited for, not cancelled: a progress report still under way must not land after the task's result.
        ended.set()
        await side
