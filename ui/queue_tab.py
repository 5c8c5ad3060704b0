"""Queue tab: every run evaluated on this deployment (pending, running, finished) as anyone may see it: the
benchmark, the model, its status and progress, when it started and ended; never who asked, the endpoint, a key
or notes (evaluators/service/runs.py public_queue). Read when the tab is opened and by its Refresh button (no
polling: the jobs panel of the Evaluate tab is where a visitor follows their own runs live). One card per run,
readable on a phone."""

from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import gradio as gr

from evaluators.service.runs import QueueEntry, public_queue
from ui.api import declare_queue_api
from ui.context import AppContext

STAGE_TITLES = {"pending": "Pending", "running": "Running", "finished": "Finished"}
CSS = """
.queue-html { display: flex; flex-direction: column; gap: 12px; }
.queue-html h3 { margin: 8px 0 4px; font-size: var(--text-lg); }
.queue-html ul { list-style: none; margin: 0; padding: 0; display: grid; gap: 8px;
  grid-template-columns: repeat(auto-fill, minmax(280px, 1fr)); }
.queue-html li { border: 1px solid var(--border-color-primary); border-radius: 8px; padding: 8px 10px; }
.queue-html .q-model { font-weight: 700; overflow-wrap: anywhere; }
.queue-html .q-line { font-size: var(--text-sm); color: var(--body-text-color-subdued); }
.queue-html .q-status { white-space: nowrap; font-weight: 700; }
.queue-html .q-num { white-space: nowrap; font-variant-numeric: tabular-nums; }
.queue-html progress { width: 100%; height: 6px; }
"""


def when(timestamp: float | None) -> str:
    """A time as the queue shows it: UTC, to the minute ("2026-11-27 04:12 UTC"); "–" when not known."""
    if timestamp is None:
        return "–"
    return datetime.fromtimestamp(timestamp, UTC).strftime("%Y-%m-%d %H:%M UTC")


def _iso(timestamp: float | None) -> str | None:
    return None if timestamp is None else datetime.fromtimestamp(timestamp, UTC).isoformat(timespec="seconds")


def queue_json(entries: list[QueueEntry]) -> dict[str, Any]:
    """The queue for API callers: {"runs": [...], "counts": {"pending", "running", "finished"}}; times in ISO UTC."""
    runs = [{"benchmark": e.benchmark, "language": e.language, "model": e.model, "status": e.status, "stage": e.stage,
             "done": e.done, "total": e.total, "created": _iso(e.created_at), "started": _iso(e.started_at),
             "finished": _iso(e.finished_at)} for e in entries]
    counts = {stage: sum(e.stage == stage for e in entries) for stage in STAGE_TITLES}
    return {"runs": runs, "counts": counts}


def _card(entry: QueueEntry) -> str:
    benchmark = entry.benchmark + (f" · {entry.language_title}" if entry.language_title else "")
    share = f"{entry.done:,} of {entry.total:,} items" if entry.total else f"{entry.done:,} items"
    times = f"started {when(entry.started_at or entry.created_at)}"
    if entry.finished_at is not None and entry.stage == "finished":
        times += f" · ended {when(entry.finished_at)}"
    bar = (f'<progress max="{entry.total}" value="{min(entry.done, entry.total)}"></progress>'
           if entry.total and entry.stage != "finished" else "")
    return (f'<li data-stage="{entry.stage}"><div class="q-model">{html.escape(entry.model)}</div>'
            f'<div class="q-line">{html.escape(benchmark)}</div>'
            f'<div><span class="q-status">{html.escape(entry.status)}</span> · <span class="q-num">{share}</span></div>'
            f"{bar}<div class=\"q-line\">{times}</div></li>")


def queue_html(entries: list[QueueEntry]) -> str:
    """The runs as cards, grouped by stage (pending, running, finished), each group with its count."""
    groups = []
    for stage, title in STAGE_TITLES.items():
        shown = [e for e in entries if e.stage == stage]
        cards = "".join(_card(e) for e in shown) or '<li class="q-line">none</li>'
        groups.append(f'<section data-stage="{stage}"><h3>{title} ({len(shown)})</h3><ul>{cards}</ul></section>')
    return f'<div class="queue-html" data-runs="{len(entries)}">{"".join(groups)}</div>'


QUEUE_NOTE = ("Every run evaluated on this deployment: what is waiting, what is running and what has finished "
              "(the newest 50). It never shows who started a run, the endpoint it calls, its key or its notes. "
              "Read when you open this tab; press Refresh for the latest. Your own runs, live, are in the Evaluate tab.")


@dataclass
class QueueParts:
    """What the app wires: the cards, refreshed when the tab is selected."""

    cards: gr.HTML
    refresh: Callable[[], str]


def build(context: AppContext) -> QueueParts:
    gr.Markdown(QUEUE_NOTE)

    def refresh() -> str:
        return queue_html(public_queue(context))

    with gr.Row():
        button = gr.Button("Refresh", size="sm", scale=0, min_width=120)
    cards = gr.HTML(refresh(), elem_classes="queue-cards")
    button.click(refresh, None, cards, api_visibility="private", concurrency_limit=None)
    declare_queue_api(context, lambda: queue_json(public_queue(context)))
    return QueueParts(cards, refresh)
