"""Builds the Gradio app from its tabs and launches it (locally or as a Hugging Face Space)."""

from __future__ import annotations

import atexit
import contextlib
import gc
import logging
import os
import sys
import threading
import time
import urllib.request
from typing import Any, Literal, TypedDict

import gradio as gr
from starlette.middleware import Middleware

from evaluators.core.environment import DECLARED, read_other, read_setting
from evaluators.core.errors import ToolboardError
from evaluators.core.limits import echoed
from evaluators.core.registry import all_benchmarks
from evaluators.engine.sdk_transport import load_sdk
from evaluators.service.ownership import MAX_TOKEN_CHARS, MIN_TOKEN_CHARS, new_token
from ui import about_tab, evaluate_tab, explore_tab, jobs_panel, leaderboard_tab, model_tab, overview_tab, queue_tab, submit_tab
from ui.asset_cache import FrontendFiles
from ui.context import READ_EVENT, AppContext, context_from_env
from ui.format import markdown_text, spoken_list
from ui.tab_select import select_tab_js
from ui.visitor import BROWSER_STORAGE_KEY

TITLE = "Toolboard — how well do LLMs call tools?"
CSS = """
.turn { border-left: 3px solid #999; padding-left: .6em; margin: .4em 0; }
.turn-agent { border-color: #3b82f6; } .turn-user { border-color: #10b981; } .turn-execution { border-color: #f59e0b; }
/* The board (ui/board_html.py): a compact table, one line per row; figures never break, their interval a quieter
   second part; rank and model stay while the rest scrolls sideways inside the board. */
.board-html { font-size: var(--text-md); }
.board-scroll { overflow-x: auto; max-height: 620px; overflow-y: auto; margin: 4px 0 12px;
  border: 1px solid var(--border-color-primary); border-radius: var(--radius-md); }
.board-table { border-collapse: separate; border-spacing: 0; width: max-content; min-width: 100%; margin: 0 !important; }
.board-table caption { caption-side: top; text-align: left; padding: 4px 8px; font-weight: 600; }
.board-table th, .board-table td { padding: 3px 8px !important; border: none !important;
  border-bottom: 1px solid var(--border-color-primary) !important; text-align: left; vertical-align: top;
  background: var(--background-fill-primary); }
.board-table thead th { position: sticky; top: 0; z-index: 3; vertical-align: bottom; font-weight: 600;
  word-break: normal !important; overflow-wrap: normal !important; hyphens: none; background: var(--background-fill-secondary); }
.board-table th button { all: unset; cursor: pointer; white-space: nowrap; }
.board-table th button:hover, .board-table th button:focus-visible { text-decoration: underline; }
.board-table th.sorted { color: var(--color-accent); }
.board-table .arrow { font-size: .8em; margin-left: 2px; }
.board-table td.fig, .board-table td.num, .board-table td.rank { white-space: nowrap; text-align: right;
  font-variant-numeric: tabular-nums; }
.board-table th.fig, .board-table th.num, .board-table th.rank { text-align: right; }
.board-html .ci { font-size: .8em; color: var(--body-text-color-subdued); }
.board-table td.best { background: rgba(34, 197, 94, 0.18); }
.board-table td.best .v { font-weight: 700; }
.board-table td.other { white-space: nowrap; max-width: 16em; overflow: hidden; text-overflow: ellipsis; }
.board-table td.reason { min-width: 16em; max-width: 26em; white-space: normal; }
.board-table td.model { white-space: nowrap; max-width: 22em; overflow: hidden; text-overflow: ellipsis; }
.board-table .rank { position: sticky; left: 0; z-index: 2; width: 2.6em; min-width: 2.6em; }
.board-ranked .model { position: sticky; left: 2.6em; z-index: 2; box-shadow: 1px 0 0 var(--border-color-primary); }
.board-apart .model { position: sticky; left: 0; z-index: 2; box-shadow: 1px 0 0 var(--border-color-primary); }
.board-table thead .rank, .board-table thead .model { z-index: 4; }
.board-html .newest { color: #d97706; }
/* The phone's card parts of each row (its labels, the rank's #, "More figures") only on a phone. */
.board-sortbar, .board-table .hash, .board-table td.card-more { display: none; }
.board-line { font-weight: 600; margin: 4px 0; }
.board-legend, .board-legend p { font-size: var(--text-sm); color: var(--body-text-color-subdued); }
/* The API page's endpoint descriptions keep their line breaks: start_run lists its settings a line each. */
h3 > .desc { white-space: pre-line; }
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
  .board > .board-main, .board > .board-view { order: 1; }
  .board > .board-filters { order: 2; }
  .tab-wrapper button { padding-left: 6px !important; padding-right: 6px !important; }
  h1 { font-size: 1.5rem !important; }
  /* A phone: the table's rows drawn as cards (no pinned columns eating the width): rank, model, the sorted figure,
     the reason; the other cells, each with its label, once the card's "More figures" is open. */
  .board-sortbar { display: block; }
  .board-sortbar button { margin: 2px; padding: 2px 8px; border: 1px solid var(--border-color-primary);
    border-radius: 12px; font-size: var(--text-sm); }
  .board-sortbar button.sorted { background: var(--color-accent-soft); font-weight: 600; }
  .board-scroll { overflow: visible; max-height: none; border: none; }
  .board-table, .board-table tbody, .board-table caption { display: block; width: auto; min-width: 0; }
  .board-table caption { padding: 8px 0 4px; }
  .board-table thead { display: none; }
  .board-table tr.board-card { display: flex; flex-wrap: wrap; align-items: baseline; column-gap: 8px;
    border: 1px solid var(--border-color-primary); border-radius: var(--radius-md); padding: 6px 10px; margin: 0 0 6px; }
  .board-table tr.board-card > td { display: none; position: static; padding: 0 !important; max-width: none;
    text-align: left; background: none; box-shadow: none; border-bottom: none !important; }
  .board-table tr.board-card > td.rank { display: block; width: auto; min-width: 2.2em; font-weight: 700; }
  .board-table .hash { display: inline; }
  .board-table tr.board-card > td.model { display: block; flex: 1 1 60%; font-weight: 600; white-space: normal;
    overflow-wrap: anywhere; }
  .board-table tr.board-card > td.card-main { display: block; flex-basis: 100%; white-space: nowrap; }
  .board-table tr.board-card > td.reason { display: block; flex-basis: 100%; font-size: var(--text-sm); min-width: 0; }
  .board-table td.reason::before { content: "Not ranked: "; }
  .board-table tr.board-card > td.card-more { display: block; flex-basis: 100%; font-size: var(--text-sm); }
  .board-table tr.board-card:has(details[open]) > td:is(.fig, .num, .other):not(:empty) { display: block;
    flex-basis: 100%; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
  .board-table tr.board-card:has(details[open]) > td.card-more { order: 1; }
  /* A cell's label (the table's own style gives each column's text: ui/board_html.phone_labels). */
  .board-table tr.board-card > td::before { display: block; float: left; width: 9em; margin-right: 8px; color: var(--body-text-color-subdued);
    font-size: var(--text-sm); white-space: normal; }
}
"""

# The styles of the tabs that draw their own HTML (the overview's table and cards, the queue's cards).
CSS += overview_tab.CSS + queue_tab.CSS + jobs_panel.CSS


def keep_or_make_token(context: AppContext, token: object, request: gr.Request | None) -> str:
    """The browser's visitor token: the one it keeps, else (first visit, or storage cleared) its session's on a public
    deployment (what the page did before this answer reached it is then already this token's), a new one otherwise."""
    if isinstance(token, str) and MIN_TOKEN_CHARS <= len(token) <= MAX_TOKEN_CHARS:
        return token
    session = getattr(request, "session_hash", None)
    return context.visitors.session_token(session) if context.public and session else new_token()


def header() -> str:
    """The line under the title: the registered benchmarks by title."""
    titles = spoken_list([benchmark.title for benchmark in all_benchmarks()])
    return f"{titles}, scored as the official checkers score them, beside the published numbers."


CACHE_CLEANUP = (30 * 60, 60 * 60)  # (how often, how old) in seconds


def build_app(context: AppContext) -> gr.Blocks:
    # Uploads never checked (and old downloads) must not pile up in the server's temp folder: every 30
    # minutes, Gradio deletes this app's cached files older than an hour. (Built before its `with`: Gradio's
    # `__enter__` is untyped.)
    demo = gr.Blocks(title=TITLE, delete_cache=CACHE_CLEANUP)
    # Before the block's events exist: `queue()` builds the server app, which `__exit__` builds again with every
    # route. Called here it builds an empty one; called inside the block it cost another full build (0.5 s).
    demo.queue(default_concurrency_limit=8)
    with demo:
        gr.Markdown(f"# {TITLE}\n{header()}")
        if context.notice:
            gr.Markdown(f"⚠️ {markdown_text(context.notice)}")
        # Who this browser is, kept in its storage across reloads: it owns the runs it starts (public mode).
        visitor = gr.BrowserState(None, storage_key=BROWSER_STORAGE_KEY, secret=context.visitors.browser_secret() or None)
        with gr.Tabs():
            with gr.Tab("Leaderboard", id=leaderboard_tab.TAB_ID):
                board = leaderboard_tab.build(context)
            with gr.Tab("Overview", id="overview") as overview_tab_item:
                overview = overview_tab.build(context)
            with gr.Tab("Model", id=model_tab.TAB_ID):
                model = model_tab.build(context, visitor)
            with gr.Tab("Evaluate"):
                jobs = evaluate_tab.build(context, visitor)
            with gr.Tab("Submit"):
                submit_tab.build(context, visitor)
            with gr.Tab("Explore") as explore_tab_item:
                explore = explore_tab.build(context, visitor)
            with gr.Tab("Queue", id="queue") as queue_tab_item:
                queue = queue_tab.build(context)
            with gr.Tab("About"):
                about = about_tab.build(context)
        # Every visit sees the current store (runs finished since the page was built, uploads added), in
        # the view the page's address names (a shared link).
        # The board in the page was built at start-up: a plain visit to an unchanged board redraws nothing (one
        # call); a shared link or a changed store is drawn, chart included, in that same call.
        demo.load(board.load, None, board.load_outputs, api_visibility="private", show_progress="hidden", **READ_EVENT,
                  **board.event_options)
        # The overview is drawn when its tab opens (it is read by fewer visitors than the board, and is the page's
        # widest HTML): never with the page.
        overview_tab_item.select(overview.refresh, overview.inputs, overview.table, api_visibility="private",
                                 **READ_EVENT)
        # A model's page by address (?model=NAME, the board's and the overview's links): its tab selected by the
        # page's script (ui/tab_select.py: no event answers into the tabs), its page filled in one call.
        demo.load(None, None, None, js=model.select_from_url_js, api_visibility="private")
        demo.load(model.open_from_url, visitor, model.url_outputs, api_visibility="private", **READ_EVENT)
        # The queue is read when its tab is opened (and by its button), not polled.
        queue_tab_item.select(queue.refresh, None, queue.cards, api_visibility="private", **READ_EVENT)
        # Other results datasets (TOOLBOARD_RESULTS) older than OTHER_RESULTS_MAX_AGE, and Hub-reported rows older
        # than HUB_REPORTED_MAX_AGE, are read again in the background.
        def reread_aged_sources() -> None:
            context.refresh_other_results()
            context.refresh_hub_reported()

        demo.load(reread_aged_sources, None, None, api_visibility="private", **READ_EVENT)
        # Each benchmark's own table one click from the overview, with that benchmark's views, columns and sort: the
        # Leaderboard tab selected by the page's script (ui/tab_select.py), the board drawn by the server.
        for button, name in overview.open_buttons:
            button.click(None, None, None, js=select_tab_js(leaderboard_tab.TAB_ID), api_visibility="private")
            button.click(lambda *values, name=name: board.open_benchmark(name, *values),
                         board.inputs, board.outputs, api_visibility="private", **READ_EVENT, **board.event_options)
        # Other results datasets (re)loaded from the About tab (private deployments): the board and the overview
        # redraw with their rows.
        if about.loaded is not None:
            about.loaded.then(board.refresh, board.inputs, board.outputs, **leaderboard_tab.REDRAW).then(
                overview.refresh, overview.inputs, overview.table, api_visibility="private", **READ_EVENT)
        # Runs finished since the page loaded are listed as soon as the Explore tab is opened.
        explore_tab_item.select(explore["refresh_pickers"], visitor, explore["run_pickers"], api_visibility="private",
                                **READ_EVENT)
        # The visitor's own jobs and runs once the browser's token is known: both at once, neither waits on the other.
        def visitor_token(token: object, request: gr.Request) -> str:
            return keep_or_make_token(context, token, request)

        token_known = demo.load(visitor_token, visitor, visitor, api_visibility="private")
        token_known.then(jobs["refresh_jobs"], visitor, jobs["jobs"], api_visibility="private")
        token_known.then(explore["reload"], visitor, explore["run_controls"], api_visibility="private")
    return demo


class LaunchOptions(TypedDict):
    """The keywords of gr.Blocks.launch that launch_options gives, typed as that method takes them."""

    css: str
    max_file_size: str | int | None
    footer_links: list[Literal["api", "gradio", "settings", "runs"] | dict[str, str]]
    app_kwargs: dict[str, Any]


def launch_options(context: AppContext) -> LaunchOptions:
    """What Gradio 6 takes at launch rather than in gr.Blocks (the page's CSS) and the app's limits; the
    tests launch with the same options."""
    # In bytes: Gradio reads "<whole number>mb", which would round a fractional TOOLBOARD_MAX_UPLOAD_MB (0.3 to 0).
    # Gradio's own front-end files from memory (ui.asset_cache): a first visit fetches ~90 of them.
    return {"css": CSS, "max_file_size": context.max_upload_bytes, "footer_links": ["api", "gradio"],
            "app_kwargs": {"middleware": [Middleware(FrontendFiles)]}}


def launch(context: AppContext | None = None, server_name: str | None = None) -> gr.Blocks:
    context = context or context_from_env()
    # On exit: cancel running jobs and flush what they stored, so a resume repeats nothing.
    atexit.register(context.close)
    demo = build_app(context)
    # The SDK in the background while the server starts: a visitor's first run then sends at once.
    threading.Thread(target=load_sdk, name="toolboard-sdk-import", daemon=True).start()
    # What start-up built (the app, the published tables) lives as long as the process: kept out of the garbage
    # collector's full passes, which would otherwise walk it again and again under a crowd's allocations.
    gc.collect()
    gc.freeze()
    launch_patiently(demo, **launch_options(context), server_name=server_name)
    return demo


# Gradio's words when its own check that the page answers (one HEAD with a 3 s timeout, made after the server has
# started) got no answer in time: a busy machine can miss it though the server is up.
UNANSWERED_CHECK = "When localhost is not accessible"


def launch_patiently(demo: gr.Blocks, **options: Any) -> None:
    """`demo.launch(**options)`; a launch whose only fault is Gradio's impatient page check goes on once the page
    answers within a minute (then, unless `prevent_thread_lock`, it serves until stopped, as launch would)."""
    try:
        demo.launch(**options)
    except ValueError as exc:
        if UNANSWERED_CHECK not in str(exc) or not demo.local_url or not page_answers(demo.local_url, 60.0):
            raise
        if not options.get("prevent_thread_lock"):
            demo.block_thread()


def page_answers(url: str, patience: float) -> bool:
    """Whether `url` answers 200 within `patience` seconds."""
    deadline = time.monotonic() + patience
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError):
            with urllib.request.urlopen(url, timeout=10) as answer:
                if answer.status == 200:
                    return True
        time.sleep(0.5)
    return False


def log_level() -> str:
    """TOOLBOARD_LOG_LEVEL in any case (debug is DEBUG), its declared default when unset; a name Python's logging
    does not know is refused."""
    given = read_setting("log_level") or DECLARED["log_level"].default
    if given.upper() not in logging.getLevelNamesMapping():
        raise ToolboardError(f"{DECLARED['log_level'].name} must be a log level such as DEBUG, INFO, WARNING or ERROR "
                             f"(any case; unset: {DECLARED['log_level'].default}), not {echoed(given)!r}")
    return given.upper()


def main() -> None:
    """`python app.py`: a setting the app cannot start with is one line on stderr and exit status 2, as the
    command line's errors are, not a traceback."""
    # The app must start offline (a laptop with no network, a Space behind a firewall).
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    # HTTP clients log every request URL at INFO: endpoint URLs are the user's business, not the log's (from the
    # start: the hub pull and the Hub's reported results run while the app's context is built).
    for noisy in ("httpx", "httpx2", "openai"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    try:
        logging.basicConfig(level=log_level(), format="%(levelname)s %(name)s: %(message)s")
        context = context_from_env()
    except ToolboardError as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    # A Space sets the host through GRADIO_SERVER_NAME; locally the app stays on this machine.
    launch(context, server_name=read_other("GRADIO_SERVER_NAME") or "127.0.0.1")
