"""What the app's page costs a visitor's browser: the renderer's main-thread work for one page load, and for one
event after it, beside the same event on a bare Gradio page (one button, one HTML: what Gradio costs with nothing
else on the page, the ideal).

Starts `python app.py` as a new user would (fresh TOOLBOARD_HOME holding a few uploaded runs besides the published
rows, a free port) and drives Debian's Chromium (/usr/bin/chromium) with playwright. Each figure is the renderer's
own count of its busy time (the DevTools `Performance.getMetrics` TaskDuration):
- a page load: a fresh browser context opens the app and waits until the board shows and the page has settled;
- an event: on a loaded page, the Queue tab's Refresh (one server call answering one HTML), pressed `--events`
  times, each after the last answer has shown; the same page's idle work over the same time is taken off. Once on a
  fresh page, once on a page whose every tab has been opened (Gradio draws a tab's components when it first opens).

With `--project DIR` a second checkout (e.g. the commit before a change, from `git worktree add`) is measured in
the same run, the two apps alternately, so the two columns compare like with like.

Usage: python benchmarks/page_cost.py [--loads 5] [--events 10] [--runs 3] [--project DIR]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.app_speed import free_port, started_app  # noqa: E402
from benchmarks.screenshots import CHROMIUM_ARGS, tab_button, tab_names  # noqa: E402

SETTLE_MS = 1500
BARE_HTML = "<p>" + "queued run " * 40 + "</p>"


@contextmanager
def bare_page() -> Iterator[str]:
    """A Gradio page of one Refresh button answering one HTML, in this process."""
    import gradio as gr

    with gr.Blocks() as demo:
        button = gr.Button("Refresh")
        cards = gr.HTML("")
        button.click(lambda: BARE_HTML, None, cards)
    demo.launch(prevent_thread_lock=True, quiet=True, server_port=free_port())
    try:
        yield demo.local_url
    finally:
        demo.close()


def busy_seconds(cdp: Any) -> float:
    metrics = {metric["name"]: metric["value"] for metric in cdp.send("Performance.getMetrics")["metrics"]}
    return float(metrics["TaskDuration"])


@contextmanager
def measured_page(browser: Any, url: str) -> Iterator[tuple[Any, Any]]:
    """A page of a fresh browser context at `url`, and its DevTools session counting the renderer's work."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        page = context.new_page()
        cdp = context.new_cdp_session(page)
        cdp.send("Performance.enable")
        page.goto(url)
        yield page, cdp
    finally:
        context.close()


def page_load(browser: Any, url: str) -> float:
    """The renderer's busy seconds from navigation until the board shows and the page settles."""
    with measured_page(browser, url) as (page, cdp):
        page.locator(".board-html").wait_for(timeout=120_000)
        page.wait_for_timeout(SETTLE_MS)
        return busy_seconds(cdp)


def event_cost(browser: Any, url: str, events: int, app: bool, every_tab: bool = False) -> float:
    """The renderer's busy seconds per Refresh press on a loaded page (the app's Queue tab, or the bare page), its
    idle work over the same time taken off. `every_tab`: each of the app's tabs opened first (Gradio draws a tab's
    components when it is first opened), as by a visitor who has looked around."""
    with measured_page(browser, url) as (page, cdp):
        if app:
            page.locator(".board-html").wait_for(timeout=120_000)
            for name in tab_names(page) if every_tab else []:
                tab_button(page, name).click()
                page.wait_for_timeout(SETTLE_MS)
            tab_button(page, "Queue").click()
        page.get_by_role("button", name="Refresh", exact=True).wait_for(timeout=120_000)
        page.wait_for_timeout(SETTLE_MS)
        started = busy_seconds(cdp)
        page.wait_for_timeout(SETTLE_MS * 2)
        idle_per_ms = (busy_seconds(cdp) - started) / (SETTLE_MS * 2)
        waited_ms = 0
        started = busy_seconds(cdp)
        for _ in range(events):
            with page.expect_response(lambda response: "/gradio_api/queue/data" in response.url
                                      or "/gradio_api/run/" in response.url, timeout=60_000):
                page.get_by_role("button", name="Refresh", exact=True).click()
            page.wait_for_timeout(400)
            waited_ms += 400
        return max(0.0, (busy_seconds(cdp) - started - idle_per_ms * waited_ms) / events)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--loads", type=int, default=5)
    parser.add_argument("--events", type=int, default=10)
    parser.add_argument("--runs", type=int, default=3, help="uploaded runs besides the published rows")
    parser.add_argument("--project", type=Path, help="a second checkout, measured in the same run")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    projects = {"this checkout": ROOT, **({str(args.project): args.project.resolve()} if args.project else {})}
    loads: dict[str, list[float]] = {name: [] for name in projects}
    events: dict[str, list[float]] = {name: [] for name in projects}
    looked_around: dict[str, list[float]] = {name: [] for name in projects}
    bare = 0.0
    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=CHROMIUM_ARGS)
        with ExitStack() as started:
            bare_url = started.enter_context(bare_page())
            urls = {name: started.enter_context(started_app(args.runs, project)) for name, project in projects.items()}
            for _ in range(args.loads):  # the apps alternately, so that the machine's moods fall on both
                for name, url in urls.items():
                    loads[name].append(page_load(browser, url))
            for name, url in urls.items():
                events[name].append(event_cost(browser, url, args.events, app=True))
                looked_around[name].append(event_cost(browser, url, args.events, app=True, every_tab=True))
            bare = event_cost(browser, bare_url, args.events, app=False)
        browser.close()
    print(f"renderer busy seconds (median of {args.loads} page loads; per event over {args.events} presses)")
    for name in projects:
        per_event = events[name][0]
        ratio = f"{per_event / bare:.1f} x" if bare > 0 else "(the bare page's took no measurable time)"
        print(f"  {name}: page load {statistics.median(loads[name]):.2f} s, one event {per_event * 1000:.0f} ms,"
              f" {ratio} the bare page's {bare * 1000:.0f} ms; {looked_around[name][0] * 1000:.0f} ms once every tab"
              " has been opened")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
