"""Builds the Gradio app from its tabs and launches it (locally or as a Hugging Face Space)."""

from __future__ import annotations

import atexit
import logging
import os

import gradio as gr

from evaluators.core.registry import all_benchmarks
from ui import about_tab, evaluate_tab, explore_tab, leaderboard_tab, submit_tab
from ui.context import AppContext, context_from_env
from ui.format import markdown_text, spoken_list
from ui.visitor import BROWSER_STORAGE_KEY, MAX_TOKEN_CHARS, MIN_TOKEN_CHARS, new_token

TITLE = "Toolboard — how well do LLMs call tools?"
CSS = """
.turn { border-left: 3px solid #999; padding-left: .6em; margin: .4em 0; }
.turn-agent { border-color: #3b82f6; } .turn-user { border-color: #10b981; } .turn-execution { border-color: #f59e0b; }
"""


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
        with gr.Tabs():
            with gr.Tab("Leaderboard"):
                board = leaderboard_tab.build(context)
            with gr.Tab("Evaluate"):
                jobs = evaluate_tab.build(context, visitor)
            with gr.Tab("Submit"):
                submit_tab.build(context)
            with gr.Tab("Explore"):
                explore = explore_tab.build(context, visitor)
            with gr.Tab("About"):
                about_tab.build()
        # Every visit sees the current store: runs finished since the page was built, uploads added.
        demo.load(board.refresh, board.filters, board.table, api_visibility="private")
        demo.load(board.chart, board.chart_inputs, board.plot, api_visibility="private")
        # The visitor's own jobs and runs once the browser's token is known.
        demo.load(keep_or_make_token, visitor, visitor, api_visibility="private").then(
            jobs["refresh_jobs"], visitor, jobs["jobs"], api_visibility="private").then(
            explore["reload"], visitor, explore["run_controls"], api_visibility="private")
        # Inside the block: configuring the queue after it would build the server app a second time.
        demo.queue(default_concurrency_limit=8)
    return demo


def launch(context: AppContext | None = None, **options) -> gr.Blocks:
    context = context or context_from_env()
    # On exit: cancel running jobs and flush what they stored, so a resume repeats nothing.
    atexit.register(context.close)
    demo = build_app(context)
    max_mb = context.max_upload_bytes / 1024 / 1024
    demo.launch(css=CSS, max_file_size=f"{max_mb:.0f}mb", footer_links=["api", "gradio"], **options)
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
