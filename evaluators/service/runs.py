"""Runs evaluated here, as a front door acts on them: the jobs a visitor may see and their live state, one
run's detail, what its owner may do (cancel, resume, re-send the failed requests, share the outputs), and the
public queue every visitor sees (what runs, never whose, where or with what key).
Starting a run goes through the run request (evaluators/service/run_request.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from evaluators.core.display_names import benchmark_title, subset_title
from evaluators.core.errors import ToolboardError
from evaluators.core.limits import MAX_MODEL_NAME_CHARS, shown_text
from evaluators.engine.endpoint_guard import check_endpoint_allowed
from evaluators.engine.jobs import shown_message
from evaluators.engine.settings import describe_requests
from evaluators.engine.store import RunRow
from evaluators.service.app_services import AppServices
from evaluators.service.ownership import check_may_see_job, check_owns, find_run, owns

# Each action, as a refusal names it ("only they can <verb> it").
ACTIONS = {"cancel": "cancel", "resume": "resume", "rerun": "re-send the errors of", "share": "share"}


@dataclass(frozen=True)
class JobState:
    """A run evaluated here as its jobs panel shows it: live progress while this process runs it, else what
    the store holds. Messages have the server's paths taken out (public deployment)."""

    run: RunRow
    status: str  # the live status (e.g. "running elsewhere" for a run another process executes)
    progress: dict[str, Any]  # the job's last progress here ({} when this process has no job for the run)
    active: bool  # this process is running it now
    done: int  # samples stored
    errors: int  # request errors stored
    message: str  # the job's message, else the stored one (saying why a run is interrupted when nobody did)
    live_message: str  # the message of this process's job for the run ("" when none)
    report: dict[str, Any] | None  # the official report once finished
    owned: bool  # the visitor asking started it (always on a private deployment)
    requests: str  # what the run sends (describe_requests: profile, prompts, sampling), without server paths

    @property
    def live(self) -> dict[str, Any]:
        """The progress of a run going on here ({} otherwise)."""
        return self.progress if self.active else {}



def visible_jobs(services: AppServices, owner: str | None = None) -> list[JobState]:
    """Runs evaluated here (not uploads), newest first; on a public deployment only `owner`'s."""
    shown = [run for run in services.store.list_runs() if run.source == "endpoint" and owns(services.public, run, owner)]
    # One query for the runs shown (the panel polls every second), not one per run nor for every run.
    all_totals = services.store.all_run_totals([run.id for run in shown])
    finished = tuple(run.id for run in shown if run.status == "finished")
    # Parsed once per change of the store, not on every tick of every open page.
    reports = services.board_view(("job reports", finished), lambda: services.store.load_reports(list(finished)))
    return [_state(services, run, all_totals[run.id], reports.get(run.id), owner) for run in shown]


def job_state(services: AppServices, run_id: str, owner: str | None = None) -> JobState:
    """One run's state, for whoever may see it (its owner while it runs; once finished, whoever may see its
    outputs); otherwise refused as an id with no run is (ownership.run_not_found)."""
    run = find_run(services.store, run_id, services.public)
    check_may_see_job(services.public, run, owner)
    return _state(services, run, services.store.run_totals(run_id), services.store.load_report(run_id), owner,
                  detail=True)


def _state(services: AppServices, run: RunRow, totals: dict[str, int], report: dict[str, Any] | None,
           owner: str | None, detail: bool = False) -> JobState:
    """`detail`: with what the run sends and its live message (one run's detail), which the jobs table,
    polled every second for every run, does not show."""
    jobs = services.jobs
    job = jobs.job(run.id)
    status = jobs.status_of(run.id, run.status)
    live_message = job.message if job is not None and job.message else ""
    message = live_message or shown_message(run.status, status, run.message)
    return JobState(run=run, status=status, progress=dict(job.progress) if job is not None and job.progress else {},
                    active=job is not None and jobs.is_active(run.id), done=totals["done"], errors=totals["errors"],
                    message=services.redact_paths(message),
                    live_message=services.redact_paths(live_message) if detail else "",
                    report=report, owned=owns(services.public, run, owner),
                    requests=services.redact_paths(describe_requests(run.config)) if detail else "")


def live_status(services: AppServices, run_id: str, owner: str | None = None) -> str:
    """The run's status as the jobs manager sees it now, for whoever may see the run (a refusal names no server
    path, and reads the same for a run the visitor may not see as for no run)."""
    run = find_run(services.store, run_id, services.public)
    check_may_see_job(services.public, run, owner)
    return services.jobs.status_of(run_id, run.status)


def requests_of(services: AppServices, run_id: str) -> str:
    """What a stored run sends (describe_requests), as the message of a started run says it: its request
    profile's note can name the server's data folder, which visitors of a public deployment never read."""
    return services.redact_paths(describe_requests(find_run(services.store, run_id).config))


def act_on_run(services: AppServices, action: str, run_id: str, api_key: str | None, owner: str | None) -> str:
    """Cancel, resume, re-send the errors of, or share a run; only its owner may on a public deployment.
    The message is plain text (as API callers get it). A run the visitor may not see is refused as an id with no
    run is; one they may see but not act on, with its reason."""
    run_id = (run_id or "").strip()
    if not run_id:
        raise ToolboardError("type or pick a run id first")
    if action not in ACTIONS:
        raise ToolboardError(f"unknown action {action!r}: one of {', '.join(ACTIONS)}")
    run = find_run(services.store, run_id, services.public)
    check_owns(services.public, run, owner, ACTIONS[action])
    if action == "cancel":
        services.jobs.cancel(run_id)
        return f"Cancelling {run_id}…"
    if action == "share":
        return share_outputs(services, run)
    check_endpoint_allowed(run.config["model"]["base_url"])
    if action == "resume":
        services.jobs.resume(run_id, api_key=api_key or None, owner=owner)
        return f"Resumed {run_id}."
    services.jobs.rerun_errors(run_id, api_key=api_key or None, owner=owner)
    return f"Re-sending the failed requests of {run_id}."


def share_outputs(services: AppServices, run: RunRow) -> str:
    """Show a finished run's outputs to every visitor (the caller checked it is theirs)."""
    if run.status != "finished":
        raise ToolboardError(f"run {run.id} has not finished: share it once it has")
    services.store.set_shared(run.id, True)
    services.after_run(run.id)  # the hub copy says shared too, so a restarted Space keeps it shared
    return f"The outputs of {run.id} are now shown to every visitor in the Explore tab."


# ---- the public queue: every run evaluated here, for anyone -----------------------------------------------------

# A queue entry's statuses, as the queue groups them.
PENDING_STATUSES = ("created", "queued")
RUNNING_STATUSES = ("running", "running elsewhere", "cancelling")
# At most this many finished runs are listed (the newest): the queue is about what is going on.
MAX_FINISHED_SHOWN = 50


@dataclass(frozen=True)
class QueueEntry:
    """One run evaluated on this deployment as anyone may see it: what was asked and how far it is, never who
    asked, the endpoint, its key, the notes or the outputs (a public deployment's visitors read every entry)."""

    benchmark: str  # the benchmark's display title
    language: str | None  # the view the run covers, when the benchmark has languages
    language_title: str | None  # what a person reads for it ("English")
    model: str  # as the run names it (server paths taken out on a public deployment)
    status: str  # the live status (jobs manager)
    done: int  # items answered or failed so far
    total: int  # items the run asks
    created_at: float
    started_at: float | None
    finished_at: float | None

    @property
    def stage(self) -> str:
        """"pending", "running" or "finished" (failed, cancelled and interrupted runs count as finished)."""
        if self.status in PENDING_STATUSES:
            return "pending"
        return "running" if self.status in RUNNING_STATUSES else "finished"


def public_queue(services: AppServices) -> list[QueueEntry]:
    """Every run evaluated here (not uploads): pending and running ones first, oldest first (the order they are
    served in), then at most MAX_FINISHED_SHOWN finished ones, newest first. The same for every visitor, and on
    a public deployment model names pass the server-path redaction like every text a visitor reads."""
    runs = [run for run in services.store.list_runs() if run.source == "endpoint"]
    totals = services.store.all_run_totals([run.id for run in runs])
    redact = services.redact_paths if services.public else (lambda text: text)
    entries = [QueueEntry(benchmark=benchmark_title(run.benchmark), language=run.language,
                          language_title=subset_title(run.benchmark, run.language) if run.language else None,
                          model=redact(str(shown_text(run.model, MAX_MODEL_NAME_CHARS))),
                          status=services.jobs.status_of(run.id, run.status),
                          done=int(totals[run.id]["done"]), total=int(run.total), created_at=run.created_at,
                          started_at=run.started_at, finished_at=run.finished_at) for run in runs]
    waiting = sorted((e for e in entries if e.stage != "finished"), key=lambda e: (e.stage != "running", e.created_at))
    finished = [e for e in entries if e.stage == "finished"][:MAX_FINISHED_SHOWN]  # list_runs: newest first
    return waiting + finished
