"""One interface for the runs going on in the background, embedded (jobs.JobManager: an event loop in
this process) or queued (queue_jobs.QueueJobs: Celery workers). The app and the CLI hold either as a
`RunJobs` and use nothing else of it."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from evaluators.engine.admission import AdmissionPolicy
    from evaluators.engine.settings import RunRequest

log = logging.getLogger(__name__)

# What a front door's services say of a run that failed with this error (run id, error), or None to leave the
# engine's words: e.g. the app names the other Data sources when the run's data could not be downloaded.
ExplainFailure = Callable[[str, BaseException], str | None]


def failure_message(run_id: str, error: BaseException, explain: ExplainFailure | None = None) -> str:
    """A failed run's message: `explain`'s words for `error` when it has some, else the error with its type."""
    if explain is not None:
        try:
            explained = explain(run_id, error)
        except Exception as problem:  # noqa: BLE001 - the run's own failure is still told
            log.warning("run %s: explaining its failure: %s", run_id, problem)
            explained = None
        if explained:
            return explained
    return f"{type(error).__name__}: {error}"


class RunJob(Protocol):
    """What the jobs panel reads of one run's job."""

    @property
    def run_id(self) -> str: ...

    @property
    def action(self) -> str: ...  # start, resume or rerun-errors

    @property
    def status(self) -> str: ...

    @property
    def progress(self) -> dict[str, Any]: ...

    @property
    def message(self) -> str: ...

    @property
    def owner(self) -> str | None: ...


class RunJobs(Protocol):
    """Starts, cancels, resumes and reports runs in the background. `owner`: the visitor's hash (None: the
    operator); `api_key`: a key typed for this run only (else the configured variable's)."""

    # The deployment's limits on runs and uploads, checked as runs are started.
    admission: AdmissionPolicy

    def start(self, request: RunRequest, owner: str | None = None) -> str:
        """Create the run the checked request describes and have it executed; its id. A start over the limits,
        or an endpoint that does not answer, raises here."""
        ...

    def resume(self, run_id: str, api_key: str | None = None, owner: str | None = None) -> None: ...

    def rerun_errors(self, run_id: str, api_key: str | None = None, owner: str | None = None) -> None: ...

    def cancel(self, run_id: str) -> None: ...

    def wait(self, run_id: str, timeout: float | None = None) -> str | None:
        """Block until the run's job has ended here (tests and scripts): its final status (finished, cancelled,
        failed, interrupted…), or None if it had not ended within `timeout` seconds."""
        ...

    def shutdown(self) -> None: ...

    def check_time_limits(self) -> list[str]:
        """Stop the runs over their time limit; their ids."""
        ...

    def job(self, run_id: str) -> RunJob | None: ...

    def is_active(self, run_id: str) -> bool: ...

    def active_count(self) -> int: ...

    def active_count_of(self, owner: str | None) -> int: ...

    def status_of(self, run_id: str, stored_status: str) -> str:
        """A run's status as users should read it, given the one stored."""
        ...
