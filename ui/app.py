"""Builds the Gradio app from its tabs and launches it (locally or as a Hugging Face Space)."""

from __future__ import annotations

import atexit
import logging
import os

import gradio as gr

from evaluators.core.registry import all_benchmarks
from evaluators.service.ownership import MAX_TOKEN_CHARS, MIN_TOKEN_CHARS, new_token
from ui import about_tab, evaluate_tab, explore_tab, leaderboard_tab, overview_tab, queue_tab, submit_tab
from ui.context import READ_EVENT, AppContext, context_from_env
from ui.format import markdown_text, spoken_list
from ui.visitor import BROWSER_STORAGE_KEY

TITLE = "Toolboard — how well do LLMs call tools?"
CSS = """
.turn { border-left: 3px solid #999; padding-left: .6em; margin: .4em 0; }
.turn-agent { border-color: #3b82f6; } .turn-user { border-color: #10b981; } .turn-execution { border-color: #f59e0b; }
/* Board headers wrap between words only; with more columns than fit, the table scrolls sideways. */
.board-table th, .board-table th * { word-break: normal !important; overflow-wrap: normal !important; hyphens: none; }
/* Pinned columns (rank, ★, model; the model in the table kept apart) stay while the rest scrolls; the
   offsets are the fixed widths ui/format.py gives the rank and ★ columns. */
.board-ranked :is(tr, .virtual-row) > :nth-child(-n+3), .board-apart :is(tr, .virtual-row) > :nth-child(1) {
  position: sticky !important; z-index: 2; background: var(--background-fill-primary); }
.board-ranked :is(tr, .virtual-row) > :nth-child(1), .board-apart :is(tr, .virtual-row) > :nth-child(1) { left: 0; }
.board-ranked :is(tr, .virtual-row) > :nth-child(2) { left: 40px; }
.board-ranked :is(tr, .virtual-row) > :nth-child(3) { left: 72px; }
.board-ranked :is(tr, .virtual-row) > :nth-child(3), .board-apart :is(tr, .virtual-row) > :nth-child(1) {
  box-shadow: 1px 0 0 var(--border-color-primary); }
.board-legend, .board-legend p { font-size: var(--text-sm); color: var(--body-text-color-subdued); }
.board-status p { font-weight: 600; }
/* Tabs that do not fit are not hidden behind a "more" button: they follow on the bar (wrapping). */
.tab-wrapper { flex-wrap: wrap; height: auto !important; }
.tab-wrapper .overflow-menu { display: contents; }
.tab-wrapper .overflow-menu > button { display: none !important; }
.tab-wrapper .overflow-dropdown button { width: auto !important; }
.tab-wrapper .overflow-dropdown { display: flex !important; flex-flow: row wrap !important; position: static !important;
  box-shadow: none !important; border: none !important; padding: 0 !important; background: none !important; }
@media (max-width: 640px) {
  /* A phone's first screen: the ranked rows; the other filters after them. */
  .board > * { order: 3; }
  .board > .board-main, .board > .board-status, .board > .board-ranked { order: 1; }
  .board > .board-filters { order: 2; }
  .tab-wrapper button { padding-left: 6px !important; padding-right: 6px !important; }
  h1 { font-size: 1.5rem !important; }
}
"""

# The styles of the tabs that draw their own HTML (the overview's table and cards, the queue's cards).
CSS += overview_tab.CSS + queue_tab.CSS


def keep_or_make_token(token: object) -> str:
    """The browser's visitor token: the one it keeps, else a new one (first visit, or storage cleared)."""
    return token if isinstance(token, str) and MIN_TOKEN_CHARS <= len(token) <= MAX_TOKEN_CHARS else new_token()


def header() -> str:
    """The line under the title: the registered benchmarks by title."""
    titles = spoken_list([benchmark.title for benchmark in all_benchmarks()])
    return f"{titles}, scored as the official checkers score them, beside the published numbers."


CACHE_CLEANUP = (30 * 60, 60 * 60)  # (how often, how old) in seconds


def build_app(context: AppContext) -> gr.Blocks:
    # Uploads never checked (and old downloads) must not pile up in the server's temp folder: every 30
    # minutes, Gradio deletes this app's cached files older than an hour.
    with gr.Blocks(title=TITLE, delete_cache=CACHE_CLEANUP) as demo:
        gr.Markdown(f"# {TITLE}\n{header()}")
        if context.notice:
            gr.Markdown(f"⚠️ {markdown_text(context.notice)}")
        # Who this browser is, kept in its storage across reloads: it owns the runs it starts (public mode).
        visitor = gr.BrowserState(None, storage_key=BROWSER_STORAGE_KEY, secret=context.visitors.browser_secret() or None)
        with gr.Tabs() as tabs:
            with gr.Tab("Leaderboard", id="leaderboard"):
                board = leaderboard_tab.build(context)
            with gr.Tab("Overview", id="overview"):
                overview = overview_tab.build(context)
            with gr.Tab("Evaluate"):
                jobs = evaluate_tab.build(context, visitor)
            with gr.Tab("Submit"):
                submit_tab.build(context)
            with gr.Tab("Explore") as explore_tab_item:
                explore = explore_tab.build(context, visitor)
            with gr.Tab("Queue", id="queue") as queue_tab_item:
                queue = queue_tab.build(context)
            with gr.Tab("About"):
                about = about_tab.build(context)
        # Every visit sees the current store (runs finished since the page was built, uploads added), in
        # the view the page's address names (a shared link).
        demo.load(board.restore, None, board.restore_outputs, api_visibility="private", **READ_EVENT).then(
            board.refresh, board.filters, board.table, **leaderboard_tab.TABLE_REDRAW).then(
            board.chart, board.chart_inputs, board.plot, **leaderboard_tab.CHART_REDRAW)
        demo.load(overview.refresh, overview.inputs, overview.table, api_visibility="private", **READ_EVENT)
        # The queue is read when its tab is opened (and by its button), not polled.
        queue_tab_item.select(queue.refresh, None, queue.cards, api_visibility="private", **READ_EVENT)
        # Other results datasets (TOOLBOARD_RESULTS) older than OTHER_RESULTS_MAX_AGE reload in the background.
        def reload_other_results() -> None:
            context.refresh_other_results()

        demo.load(reload_other_results, None, None, api_visibility="private", **READ_EVENT)
        # Each benchmark's own table one click from the overview, with that benchmark's views, columns and sort.
        for button, name in overview.open_buttons:
            button.click(lambda *values, name=name: (gr.Tabs(selected="leaderboard"), *board.open_benchmark(name, *values)),
                         board.open_inputs, [tabs, *board.open_outputs], api_visibility="private")
        # Other results datasets (re)loaded from the About tab (private deployments): the board and the overview
        # redraw with their rows.
        if about.loaded is not None:
            about.loaded.then(board.refresh, board.filters, board.table, **leaderboard_tab.TABLE_REDRAW).then(
                overview.refresh, overview.inputs, overview.table, api_visibility="private", **READ_EVENT)
        # Runs finished since the page loaded are listed as soon as the Explore tab is opened.
        explore_tab_item.select(explore["refresh_pickers"], visitor, explore["run_pickers"], api_visibility="private",
                                **READ_EVENT)
        # The visitor's own jobs and runs once the browser's token is known.
        demo.load(keep_or_make_token, visitor, visitor, api_visibility="private").then(
            jobs["refresh_jobs"], visitor, jobs["jobs"], api_visibility="private").then(
            explore["reload"], visitor, explore["run_controls"], api_visibility="private")
        # Inside the block: configuring the queue after it would build the server app a second time.
        demo.queue(default_concurrency_limit=8)
    return demo


def launch_options(context: AppContext) -> dict[str, object]:
    """What Gradio 6 takes at launch rather than in gr.Blocks (the page's CSS) and the app's limits; the
    tests launch with the same options."""
    max_mb = context.max_upload_bytes / 1024 / 1024
    return {"css": CSS, "max_file_size": f"{max_mb:.0f}mb", "footer_links": ["api", "gradio"]}


def launch(context: AppContext | None = None, **options) -> gr.Blocks:
    context = context or context_from_env()
    # On exit: cancel running jobs and flush what they stored, so a resume repeats nothing.
    atexit.register(context.close)
    demo = build_app(context)
    demo.launch(**launch_options(context), **options)
    return demo


def main() -> None:
    # The app must start offline (a laptop with no network, a Space behind a firewall).
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    logging.basicConfig(level=os.environ.get("TOOLBOARD_LOG_LEVEL", "INFO"), format="%(levelname)s %(name)s: %(message)s")
    # HTTP clients log every request URL at INFO: endpoint URLs are the user's business, not the log's.
    for noisy in ("httpx", "httpx2", "openai"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    # A Space sets the host through GRADIO_SERVER_NAME; locally the app stays on this machine.
    launch(server_name=os.environ.get("GRADIO_SERVER_NAME", "127.0.0.1"))
