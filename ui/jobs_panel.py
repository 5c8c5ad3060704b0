"""The Evaluate tab's jobs panel: the runs a visitor may see, their progress, and what they may do with
them (cancel, resume, re-send errors, share). On a public deployment a visitor sees and acts on their
own runs only (evaluators/service/runs.py and ownership.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gradio as gr
import pandas as pd

from evaluators.core.errors import ToolboardError
from evaluators.engine.jobs import RUNNING_ELSEWHERE
from evaluators.publish.board_table import EXAMPLE_DATA_LABEL, run_on_example_data
from evaluators.service.runs import act_on_run, job_state, visible_jobs
from ui.context import AppContext, as_markdown, plain_error
from ui.format import markdown_text, user_error
from ui.report_view import SCORED_AT_THE_END, score_text
from ui.visitor import owner_of

JOB_COLUMNS = ("run_id", "benchmark", "language", "model", "status", "score", "done", "total", "errors", "req/s", "eta_s",
               "message")


def jobs_table(context: AppContext, owner: str | None = None) -> pd.DataFrame:
    """Runs evaluated here, newest first, with live progress for the running ones; on a public deployment
    only the visitor's own."""
    rows = []
    for job in visible_jobs(context, owner):
        run, live = job.run, job.live
        eta = time_left(job.status, live)
        rows.append({
            "run_id": run.id, "benchmark": run.benchmark, "language": run.language or "", "model": run.model,
            "status": job.status, "score": job_score(job.status, job.report, live),
            "done": live.get("done", job.done), "total": run.total, "errors": live.get("errors", job.errors),
            "req/s": round(live["requests_per_s"], 1) if live else None,
            "eta_s": round(eta, 1) if eta is not None else None,
            "message": f"{EXAMPLE_DATA_LABEL} (not on the board) · {job.message}" if run_on_example_data(run)
            else job.message,
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
    job = job_state(context, run_id, owner)
    run, status = job.run, job.status
    lines = [f"**{markdown_text(run.model)}** on **{run.benchmark}**{' (' + run.language + ')' if run.language else ''}"
             f" — {status}"]
    if run_on_example_data(run):  # the built-in example's few items measure no model
        lines[0] += f" · {EXAMPLE_DATA_LABEL}: not on the leaderboard"
    if job.progress:
        progress = job.progress
        lines.append(f"{progress['done']}/{progress['total']} samples, {progress['errors']} request errors, "
                     f"{progress['requests_per_s']:.1f} requests/s"
                     + (f", about {eta:.0f} s left" if (eta := time_left(status, progress)) else ""))
        for name, counts in progress["per_subset"].items():
            lines.append(f"- {name}: {counts['done']}/{counts['total']}")
        lines.append("")  # ends the list: the next line is not part of its last item
    else:
        lines.append(f"{job.done}/{run.total} samples stored, {job.errors} request errors")
    lines.append(markdown_text(job.requests))
    if job.live_message:
        lines.append(f"⚠️ {markdown_text(job.live_message)}")
    elif run.message:
        lines.append(markdown_text(context.redact_paths(run.message)))
    if status == RUNNING_ELSEWHERE:
        lines.append("Another process (e.g. the command line) is executing this run: it can be resumed here only once"
                     " that process has stopped.")
    elif status in ("interrupted", "cancelled", "failed"):
        lines.append("Resume to finish it (type the API key again if the endpoint needs one).")
    if context.public and job.owned and run.status == "finished":
        lines.append("Outputs shared with every visitor." if run.shared else
                     "Only you see this run's outputs in the Explore tab; share them to show them to everyone.")
    return "\n".join(lines), job.report


# ---- as the page and the API act: the visitor who sends the request -----------------------------

def act_as_visitor(context: AppContext, action: str, chosen: str, key: str, token: Any,
                   request: gr.Request | None) -> tuple[str, pd.DataFrame]:
    """(plain-text message, the visitor's jobs table); the page shows the message through as_markdown."""
    owner = None
    try:
        owner = owner_of(context, token, request)
        message = act_on_run(context, action, chosen, key, owner)
    except Exception as exc:  # noqa: BLE001 - every failure is shown on the page
        message = plain_error(exc, context.redact_paths)
    return message, jobs_table(context, owner)


def act_on_page(context: AppContext, action: str, chosen: str, key: str, token: Any,
                request: gr.Request | None) -> tuple[str, pd.DataFrame]:
    message, table = act_as_visitor(context, action, chosen, key, token, request)
    return as_markdown(message), table


def detail_view(context: AppContext, chosen: str, token: Any,
                request: gr.Request | None) -> tuple[str, dict[str, Any] | None]:
    try:
        return job_detail(context, chosen, owner_of(context, token, request))
    except Exception as exc:  # noqa: BLE001
        return user_error(exc, context.redact_paths), None


def visitor_jobs(context: AppContext) -> Callable[[Any, gr.Request], pd.DataFrame]:
    def refresh(token: Any, request: gr.Request) -> pd.DataFrame:
        try:
            return jobs_table(context, owner_of(context, token, request))
        except ToolboardError:
            return jobs_table(context, None)

    return refresh
