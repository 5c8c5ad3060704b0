"""The Evaluate tab's jobs panel: the runs a visitor may see, their progress, and what they may do with
them (cancel, resume, re-send errors, share). On a public deployment a visitor sees and acts on their
own runs only; see ui/visitor.py."""

from __future__ import annotations

from typing import Any

import pandas as pd

from evaluators.core.errors import ToolboardError
from evaluators.engine.endpoint_guard import check_endpoint_allowed
from evaluators.engine.jobs import RUNNING_ELSEWHERE, shown_message
from evaluators.engine.settings import describe_requests
from ui.context import AppContext
from ui.format import markdown_text
from ui.report_view import SCORED_AT_THE_END, score_text
from ui.visitor import check_may_see_job, check_owns, find_run, owns

JOB_COLUMNS = ("run_id", "benchmark", "language", "model", "status", "score", "done", "total", "errors", "req/s", "eta_s",
               "message")
ACTIONS = {"cancel": "cancel", "resume": "resume", "rerun": "re-send the errors of", "share": "share"}


def jobs_table(context: AppContext, owner: str | None = None) -> pd.DataFrame:
    """Runs evaluated here, newest first, with live progress for the running ones; on a public deployment
    only the visitor's own."""
    rows = []
    shown = [run for run in context.store.list_runs() if run.source == "endpoint" and owns(context.public, run, owner)]
    # One query for the runs shown (the panel polls every second), not one per run nor for every run.
    all_totals = context.store.all_run_totals([run.id for run in shown])
    finished = tuple(run.id for run in shown if run.status == "finished")
    # Parsed once per change of the store, not on every tick of every open page.
    reports = context.board_view(("job reports", finished), lambda: context.store.load_reports(list(finished)))
    for run in shown:
        totals = all_totals[run.id]
        job = context.jobs.job(run.id)
        live = job.progress if job is not None and context.jobs.is_active(run.id) else {}
        status = context.jobs.status_of(run.id, run.status)
        eta = time_left(status, live)
        rows.append({
            "run_id": run.id, "benchmark": run.benchmark, "language": run.language or "", "model": run.model,
            "status": status, "score": job_score(status, reports.get(run.id), live),
            "done": live.get("done", totals["done"]), "total": run.total, "errors": live.get("errors", totals["errors"]),
            "req/s": round(live["requests_per_s"], 1) if live else None,
            "eta_s": round(eta, 1) if eta is not None else None,
            "message": context.redact_paths(job.message if job is not None and job.message
                                             else shown_message(run.status, status, run.message)),
        })
    return pd.DataFrame(rows, columns=list(JOB_COLUMNS))


def job_score(status: str, report: dict[str, Any] | None, live: dict[str, Any] | None = None) -> str:
    """A finished run's headline score (`overall 61.7%`); for a run going on here, the share of the items it
    has scored so far that were correct (the runner scores each sample as it is stored; the headline, often
    a mean over categories, comes with the report at the end)."""
    if status in ("queued", "running", "cancelling", RUNNING_ELSEWHERE):
        scored = (live or {}).get("scored") or 0
        if scored:
            return f"so far {live['correct'] / scored:.1%} of {scored} items correct"
        return SCORED_AT_THE_END
    return score_text(report) if status == "finished" else ""


def time_left(status: str, progress: dict[str, Any]) -> float | None:
    """Seconds left, estimated, for a run that is going on (queued or running); None for one cancelling,
    cancelled or ended, whose last estimate no longer means anything."""
    if status not in ("queued", "running"):
        return None
    return progress.get("eta_s")


def job_detail(context: AppContext, run_id: str, owner: str | None = None) -> tuple[str, dict[str, Any] | None]:
    """Per-subset progress (live, or from the store) and the finished report."""
    run_id = (run_id or "").strip()
    if not run_id:
        return "Pick a run in the jobs table (or type its id).", None
    run = find_run(context.store, run_id)
    check_may_see_job(context.public, run, owner)
    job = context.jobs.job(run_id)
    status = context.jobs.status_of(run_id, run.status)
    lines = [f"**{markdown_text(run.model)}** on **{run.benchmark}**{' (' + run.language + ')' if run.language else ''}"
             f" — {status}"]
    if job is not None and job.progress:
        progress = job.progress
        lines.append(f"{progress['done']}/{progress['total']} samples, {progress['errors']} request errors, "
                     f"{progress['requests_per_s']:.1f} requests/s"
                     + (f", about {eta:.0f} s left" if (eta := time_left(status, progress)) else ""))
        for name, counts in progress["per_subset"].items():
            lines.append(f"- {name}: {counts['done']}/{counts['total']}")
        lines.append("")  # ends the list: the next line is not part of its last item
    else:
        totals = context.store.run_totals(run_id)
        lines.append(f"{totals['done']}/{run.total} samples stored, {totals['errors']} request errors")
    lines.append(markdown_text(describe_requests(run.config)))
    if job is not None and job.message:
        lines.append(f"⚠️ {markdown_text(context.redact_paths(job.message))}")
    elif run.message:
        lines.append(markdown_text(context.redact_paths(run.message)))
    if status == RUNNING_ELSEWHERE:
        lines.append("Another process (e.g. the command line) is executing this run: it can be resumed here only once"
                     " that process has stopped.")
    elif status in ("interrupted", "cancelled", "failed"):
        lines.append("Resume to finish it (type the API key again if the endpoint needs one).")
    if context.public and owns(context.public, run, owner) and run.status == "finished":
        lines.append("Outputs shared with every visitor." if run.shared else
                     "Only you see this run's outputs in the Explore tab; share them to show them to everyone.")
    return "\n".join(lines), context.store.load_report(run_id)


def act_on_run(context: AppContext, action: str, run_id: str, api_key: str | None, owner: str | None) -> str:
    """Cancel, resume, re-send the errors of, or share a run; only its owner may on a public deployment.
    The message is plain text (as API callers get it); the page shows it through as_markdown."""
    run_id = (run_id or "").strip()
    if not run_id:
        raise ToolboardError("type or pick a run id first")
    if action not in ACTIONS:
        raise ToolboardError(f"unknown action {action!r}: one of {', '.join(ACTIONS)}")
    run = find_run(context.store, run_id)
    check_owns(context.public, run, owner, ACTIONS[action])
    if action == "cancel":
        context.jobs.cancel(run_id)
        return f"Cancelling {run_id}…"
    if action == "share":
        if run.status != "finished":
            raise ToolboardError(f"run {run_id} has not finished: share it once it has")
        context.store.set_shared(run_id, True)
        context.after_run(run_id)  # the hub copy says shared too, so a restarted Space keeps it shared
        return f"The outputs of {run_id} are now shown to every visitor in the Explore tab."
    check_endpoint_allowed(run.config["model"]["base_url"])
    if action == "resume":
        context.jobs.resume(run_id, api_key=api_key or None, owner=owner)
        return f"Resumed {run_id}."
    context.jobs.rerun_errors(run_id, api_key=api_key or None, owner=owner)
    return f"Re-sending the failed requests of {run_id}."
