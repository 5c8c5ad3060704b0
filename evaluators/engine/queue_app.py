"""Queue mode's settings and its Celery app: runs go to Celery workers over Redis (broker and result
backend) when TOOLBOARD_BROKER_URL is set; unset, runs execute inside the app's process (jobs.py).

Delivery: a task is acknowledged only when it ends (`acks_late`), and a pool process that dies takes its
task back to the queue at once (`reject_on_worker_lost`); a worker that dies as a whole leaves its task
unacknowledged, and Redis hands it to another worker once the visibility timeout has passed
(TOOLBOARD_QUEUE_VISIBILITY_S, a few minutes rather than Celery's hour). A live worker keeps its task
from being handed out again by touching its delivery in Redis while the run goes (queue_worker.py), so a
run longer than the timeout is never executed twice. Workers take one task at a time per process
(no prefetch): a queued run waits in Redis, where the app can count its place, not in a busy worker.

Celery is imported only in queue mode (queue_worker.make_celery): the embedded mode never loads it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, TypedDict

from evaluators.core.environment import declared_number, read_number, read_setting
from evaluators.core.errors import ToolboardError

BROKER_ENV = "TOOLBOARD_BROKER_URL"
DEFAULT_VISIBILITY_S = declared_number("queue_visibility_s")
DEFAULT_QUEUE = "toolboard"
# A run may take this long on a worker before it is stopped (soft limit: it ends as failed, saying so);
# the hard limit, a minute later, kills the process if the soft one could not stop it.
DEFAULT_TIME_LIMIT_S = declared_number("queue_time_limit_s")
HARD_LIMIT_GRACE_S = 60.0
# How long a key typed into the form waits in Redis for its run (the worker reads it, the app deletes it
# when the run ends): long enough for a run to wait in the queue, short enough not to linger.
DEFAULT_SECRET_TTL_S = declared_number("queue_secret_ttl_s")
RUN_TASK = "toolboard.run"
# Results (a finished run's whole record) are kept this long in Redis for the app to import.
RESULT_EXPIRES_S = 7 * 24 * 3600
# How often a worker reports progress (task state) and touches its delivery; the issue asks for <= 2 s.
PROGRESS_EVERY_S = 1.0


class TaskResult(TypedDict, total=False):
    """What a run's task returns through the result backend (Celery's JSON in Redis): the queue's own result
    format. `document` (finished runs only) is the run's whole record, run_document.export_run's JSON document
    (the versioned run document the app's store imports, all or nothing, in place of its placeholder); never the
    publishing format, and never a key (the document names the key's variable, without credentials in URLs)."""

    status: Literal["finished", "cancelled", "failed"]
    worker: str  # the worker's name (worker@host)
    message: str  # why a run failed or was cancelled
    progress: dict[str, Any]  # a cancelled run: how far it went (done, total, …)
    document: dict[str, Any]


@dataclass(frozen=True)
class QueueSettings:
    broker_url: str
    visibility_s: float = DEFAULT_VISIBILITY_S
    queue: str = DEFAULT_QUEUE
    time_limit_s: float = DEFAULT_TIME_LIMIT_S
    secret_ttl_s: float = DEFAULT_SECRET_TTL_S

    def __repr__(self) -> str:  # a broker URL may hold a password
        return f"QueueSettings(broker={shown_url(self.broker_url)!r}, queue={self.queue!r})"


def settings_from_env() -> QueueSettings | None:
    """Queue mode's settings from the environment, or None (embedded mode) when TOOLBOARD_BROKER_URL is unset."""
    url = read_setting("broker_url")
    if not url:
        return None
    if not url.startswith(("redis://", "rediss://", "unix://")):
        raise ToolboardError(f"{BROKER_ENV} must be a Redis URL (redis://host:port/db), not {shown_url(url)!r}")
    return QueueSettings(url, read_number("queue_visibility_s", unit="seconds"),
                         read_setting("queue_name") or DEFAULT_QUEUE,
                         read_number("queue_time_limit_s", unit="seconds"),
                         read_number("queue_secret_ttl_s", unit="seconds"))


def shown_url(url: str) -> str:
    """A broker URL as it may be shown: redact.without_credentials (imported when needed: it brings the store)."""
    from evaluators.engine.redact import without_credentials

    return without_credentials(url)


def celery_config(settings: QueueSettings) -> dict[str, Any]:
    """The Celery settings of app and workers (see the module docstring for why each)."""
    transport = {
        "visibility_timeout": settings.visibility_s,
        # Look for deliveries whose worker died every fifth of the timeout, on every look.
        "unacked_restore_interval": max(1.0, settings.visibility_s / 5),
        "unacked_restore_throttle": 1,
    }
    return {
        "broker_url": settings.broker_url,
        "result_backend": settings.broker_url,
        "broker_transport_options": transport,
        "result_backend_transport_options": {"retry_policy": {"timeout": 5.0}},
        "broker_connection_retry_on_startup": True,
        "task_default_queue": settings.queue,
        "task_acks_late": True,
        "task_reject_on_worker_lost": True,
        # No STARTED state: a second delivery of a run would write it over the run's result (progress reports
        # come from the execution itself).
        "task_track_started": False,
        "task_serializer": "json",
        "result_serializer": "json",
        "accept_content": ["json"],
        "result_expires": RESULT_EXPIRES_S,
        "task_soft_time_limit": settings.time_limit_s,
        "task_time_limit": settings.time_limit_s + HARD_LIMIT_GRACE_S,
        "worker_prefetch_multiplier": 1,
        "worker_disable_prefetch": True,
        "worker_hijack_root_logger": False,
    }


def redis_client(settings: QueueSettings) -> Any:
    """A Redis client on the broker (queue positions, key references, cancel flags, run locks)."""
    import redis

    return redis.Redis.from_url(settings.broker_url, socket_connect_timeout=5, socket_timeout=10)


def check_broker(settings: QueueSettings) -> None:
    """Refuse at once, with the reason, when the broker cannot be reached."""
    import redis

    try:
        redis_client(settings).ping()
    except redis.RedisError as error:
        raise ToolboardError(f"the run queue ({shown_url(settings.broker_url)}) cannot be reached ({type(error).__name__}:"
                             f" {str(error).replace(settings.broker_url, shown_url(settings.broker_url))}); nothing"
                             " was created: try again, or ask the operator to start Redis") from None


# Redis keys of our own beside Celery's (all under one prefix, so an operator can find them).
def secret_key(reference: str) -> str:
    return f"toolboard:secret:{reference}"


def cancel_key(run_id: str) -> str:
    return f"toolboard:cancel:{run_id}"


def task_key(run_id: str) -> str:
    """The run's latest sending: its task id, action, the reference of a typed key (queue_jobs._record_sending)."""
    return f"toolboard:task:{run_id}"


def resend_key(run_id: str) -> str:
    """Held by the process that sends a lost run again (one per visibility timeout)."""
    return f"toolboard:resend:{run_id}"


def done_key(run_id: str) -> str:
    return f"toolboard:done:{run_id}"


def lock_key(run_id: str) -> str:
    return f"toolboard:running:{run_id}"
