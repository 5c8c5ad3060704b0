"""The Evaluate tab's jobs panel: the runs a visitor may see, their progress, and what they may do with
them (cancel, resume, re-send errors, share). On a public deployment a visitor sees and acts on their
own runs only (evaluators/service/runs.py and ownership.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gradio as gr
import pandas as pd

from evaluators.core.display_names import subset_title
from evaluators.core.errors import ToolboardError
from evaluators.core.registry import get_benchmark
from evaluators.engine.jobs import ACTIVE, RUNNING_ELSEWHERE
from evaluators.service.board import EXAMPLE_DATA_LABEL, run_on_example_data
from evaluators.service.runs import act_on_run, job_state, visible_jobs
from ui.context import AppContext, as_markdown, plain_error
from ui.format import markdown_text, user_error
from ui.report_view import SCORED_AT_THE_END, score_text
from ui.visitor import owner_of

JOB_COLUMNS = ("run_id", "benchmark", "language", "model", "status", "score", "done", "total", "errors", "req/s", "eta_s",
               "message")
# The page's table (the API keeps JOB_COLUMNS): one short word per header, benchmark and language by their
# titles, progress as done/total. Fixed widths (px) wide enough for each header on one line: with more
# columns than fit, the table scrolls sideways instead of breaking its headers letter by letter.
RUN_HEADER = "Run"
STATUS_HEADER = "Status"
PAGE_WIDTHS = {RUN_HEADER: 240, "Benchmark": 150, "Language": 100, "Model": 170, STATUS_HEADER: 100, "Score": 190,
               "Done": 84, "Errors": 72, "Req/s": 72, "ETA": 72, "Message": 320}
PAGE_CLASS = "jobs-table"
# On a phone the columns a person follows a run by (benchmark, model, status, score, progress); the others stay in the
# row's detail below the table (clicking a row picks its run). Positions are 1-based, as CSS counts.
# Each with its share of the screen's width (the header and the rows are two tables: the same shares keep
# them aligned).
# The benchmark stays: two runs of one model differ by it.
PHONE_COLUMNS = {"Benchmark": 24, "Model": 20, STATUS_HEADER: 23, "Score": 18, "Done": 15}
_HIDDEN_ON_PHONE = ", ".join(f":nth-child({position})" for position, header in enumerate(PAGE_WIDTHS, 1)
                             if header not in PHONE_COLUMNS)
_PHONE_WIDTHS = "\n".join(
    f"  .{PAGE_CLASS} :is(tr, .virtual-row) > :nth-child({list(PAGE_WIDTHS).index(header) + 1}) {{ width: {share}% !important;\n    flex: 0 0 {share}% !important; }}"
    for header, share in PHONE_COLUMNS.items())
CSS = f"""
/* Jobs: headers on one line (never broken inside a word); cells break between words only; run ids whole. */
.{PAGE_CLASS} th, .{PAGE_CLASS} th * {{ white-space: nowrap !important; word-break: normal !important;
  overflow-wrap: normal !important; hyphens: none; }}
.{PAGE_CLASS} :is(td, .body-cell), .{PAGE_CLASS} :is(td, .body-cell) * {{ word-break: normal !important;
  overflow-wrap: normal !important; }}
.{PAGE_CLASS} :is(tr, .virtual-row) > :is(td, .body-cell):first-child * {{ white-space: nowrap !important; }}
@media (max-width: 640px) {{
  /* A phone: four columns that share the screen's width, small type, no column menus. */
  .{PAGE_CLASS} :is(tr, .virtual-row) > :is({_HIDDEN_ON_PHONE}) {{ display: none !important; }}
  .{PAGE_CLASS} :is(tr, .virtual-row) > * {{ min-width: 0 !important; max-width: none !important; box-sizing: border-box;
    padding-left: 4px !important; padding-right: 4px !important; font-size: var(--text-sm) !important; }}
{_PHONE_WIDTHS}
  .{PAGE_CLASS} table {{ table-layout: fixed !important; width: 100% !important; min-width: 0 !important; }}
  .{PAGE_CLASS} .cell-menu-button {{ display: none !important; }}
  .{PAGE_CLASS} :is(th, td, .body-cell) * {{ font-size: 12px !important; }}
  .{PAGE_CLASS} :is(th, td, .body-cell) .cell-wrap {{ padding-left: 2px !important; padding-right: 2px !important; }}
  .{PAGE_CLASS} :is(td, .body-cell) * {{ white-space: normal !important; }}
  .{PAGE_CLASS} :is(tr, .virtual-row) > :is(td, .body-cell):nth-child({list(PAGE_WIDTHS).index("Model") + 1}) * {{
    overflow-wrap: anywhere !important; }}
}}
"""


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


def benchmark_title(name: str) -> str:
    try:
        return get_benchmark(name).title
    except ToolboardError:
        return name


def as_page_table(table: pd.DataFrame) -> pd.DataFrame:
    """The API's jobs table as the page shows it: display names, short headers, figures as text (so an
    empty one is blank, never "NaN")."""
    rows = []
    for job in table.to_dict("records"):
        benchmark = str(job["benchmark"])
        rows.append([job["run_id"], benchmark_title(benchmark),
                     subset_title(benchmark, job["language"]) if job["language"] else "", job["model"], job["status"],
                     job["score"], f"{job['done']}/{job['total']}", str(job["errors"]), _figure(job["req/s"], "{:.1f}"),
                     _figure(job["eta_s"], "{:.0f} s"), job["message"]])
    return pd.DataFrame(rows, columns=list(PAGE_WIDTHS))


def _figure(value: Any, form: str) -> str:
    return "" if value is None or pd.isna(value) else form.format(value)


def page_jobs_table(context: AppContext, owner: str | None = None) -> pd.DataFrame:
    """`jobs_table` as the page shows it."""
    return as_page_table(jobs_table(context, owner))


def jobs_dataframe(context: AppContext) -> gr.Dataframe:
    """The page's jobs table (built once for every visitor: on a public deployment it lists nobody's runs
    until the page loads)."""
    return gr.Dataframe(page_jobs_table(context), interactive=False, label="Jobs", max_height=320, wrap=True,
                        column_widths=[f"{width}px" for width in PAGE_WIDTHS.values()], elem_classes=[PAGE_CLASS])


# A run whose progress the page follows: while the visitor has one, the jobs panel refreshes every second.
LIVE_STATUSES = (*ACTIVE, RUNNING_ELSEWHERE)


def any_live(table: pd.DataFrame) -> bool:
    """Whether the page's jobs table (`page_jobs_table`) lists a run going on."""
    return bool(table[STATUS_HEADER].isin(LIVE_STATUSES).any())


def job_score(status: str, report: dict[str, Any] | None, live: dict[str, Any] | None = None) -> str:
    """A finished run's headline score (`overall 61.7%`); for a run going on here, the share of the items it
    has scored so far that were correct (the runner scores each sample as it is stored; the headline, often
    a mean over categories, comes with the report at the end)."""
    if status in LIVE_STATUSES:
        counts = live or {}
        scored = counts.get("scored") or 0
        if scored:
            return f"so far {counts['correct'] / scored:.1%} of {scored} items correct"
        return SCORED_AT_THE_END
    return score_text(report) if status == "finished" else ""


def time_left(status: str, progress: dict[str, Any]) -> float | None:
    """Seconds left, estimated, for a run that is going on (queued or running); None for one cancelling,
    cancelled or ended, whose last estimate no longer means anything."""
    if status not in ("queued", "running"):
        return None
    return progress.get("eta_s")


def pace_text(progress: dict[str, Any]) -> str:
    """How fast requests go; a run whose samples all came from the response cache sent none, and says so rather
    than "0.0 requests/s"."""
    if not progress.get("requests") and progress.get("done_now"):
        return "no request sent (answers from the response cache)"
    return f"{progress['requests_per_s']:.1f} requests/s"


def job_detail(context: AppContext, run_id: str, owner: str | None = None) -> tuple[str, dict[str, Any] | None]:
    """Per-subset progress (live, or from the store) and the finished report."""
    run_id = (run_id or "").strip()
    if not run_id:
        return "Pick a run in the jobs table (or type its id).", None
    job = job_state(context, run_id, owner)
    run, status = job.run, job.status
    language = f" ({markdown_text(subset_title(run.benchmark, run.language))})" if run.language else ""
    lines = [f"**{markdown_text(run.model)}** on **{markdown_text(benchmark_title(run.benchmark))}**{language} — {status}"]
    if run_on_example_data(run):  # the built-in example's few items measure no model
        lines[0] += f" · {EXAMPLE_DATA_LABEL}: not on the leaderboard"
    if job.progress:
        progress = job.progress
        lines.append(f"{progress['done']}/{progress['total']} samples, {progress['errors']} request errors, "
                     + pace_text(progress)
                     + (f", about {eta:.0f} s left" if (eta := time_left(status, progress)) else ""))
        for name, counts in progress["per_subset"].items():
            lines.append(f"- {markdown_text(subset_title(run.benchmark, name))}: {counts['done']}/{counts['total']}")
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
    """(plain-text message, the visitor's jobs table as the API gives it); the page shows the message through
    as_markdown."""
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
    return as_markdown(message), as_page_table(table)


def detail_view(context: AppContext, chosen: str, token: Any,
                request: gr.Request | None) -> tuple[str, dict[str, Any] | None]:
    try:
        return job_detail(context, chosen, owner_of(context, token, request))
    except Exception as exc:  # noqa: BLE001
        return user_error(exc, context.redact_paths), None


def visitor_jobs(context: AppContext) -> Callable[[Any, gr.Request], pd.DataFrame]:
    """The page's refresh of the visitor's jobs table."""
    def refresh(token: Any, request: gr.Request) -> pd.DataFrame:
        try:
            return page_jobs_table(context, owner_of(context, token, request))
        except ToolboardError:
            return page_jobs_table(context, None)

    return refresh
