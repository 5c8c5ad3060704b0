"""What the app's page costs a visitor's browser: the renderer's main-thread work for one page load, and for one
event after it, beside the same event on a bare Gradio page (one button, one HTML: what Gradio costs with nothing
else on the page, the ideal).

Starts `python app.py` as a new user would (fresh TOOLBOARD_HOME holding a few uploaded runs besides the published
rows, a free port) and drives Debian's Chromium (/usr/bin/chromium) with playwright. Each figure is the renderer's
own count of its busy time (the DevTools `Performance.getMetrics` TaskDuration):
- a page load: a fresh browser context opens the app and waits until the board shows and the page has settled;
- an event: on a loaded page, the Queue tab's Refresh (one queued server call answering one HTML), pressed
  `--events` times, each ANSWER_WAIT_MS after its queue join was answered; the page's own work meanwhile (its rate
  over IDLE_WINDOW_MS before the presses, times the presses' time) is taken off, and the rest is shared out over
  the presses. Once on a fresh page, once on a page whose every tab has been opened (Gradio draws a tab's
  components when it first opens; Evaluate's jobs panel then ticks every 5 s).

With `--project DIR` a second checkout (e.g. the commit before a change, from `git worktree add`) is measured in
the same run, the two apps alternately, so the two columns compare like with like.

Usage: python benchmarks/page_cost.py [--loads 5] [--events 15] [--runs 3] [--project DIR]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.app_speed import free_port, started_app  # noqa: E402
from benchmarks.screenshots import CHROMIUM_ARGS, tab_button, tab_names  # noqa: E402

SETTLE_MS = 1500
# A window of whole ticks of the jobs panel's idle refresh (ui/evaluate_tab.IDLE_TICK_S, 5 s).
IDLE_WINDOW_MS = 10_000
# After the press's queue join is answered: the server's answer (a query of milliseconds) and the page's handling
# of it (a few hundred milliseconds at most here) are over well within this.
ANSWER_WAIT_MS = 600
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


def wait_for_board(page: Any) -> None:
    page.locator(".board-html").wait_for(timeout=120_000)


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
        wait_for_board(page)
        page.wait_for_timeout(SETTLE_MS)
        return busy_seconds(cdp)


def event_cost(browser: Any, url: str, events: int, app: bool, every_tab: bool = False) -> float:
    """The renderer's busy seconds per Refresh press on a loaded page (the app's Queue tab, or the bare page), its
    idle work over the same time taken off. `every_tab`: each of the app's tabs opened first (Gradio draws a tab's
    components when it is first opened), as by a visitor who has looked around."""
    with measured_page(browser, url) as (page, cdp):
        if app:
            wait_for_board(page)
            for name in tab_names(page) if every_tab else []:
                tab_button(page, name).click()
                page.wait_for_timeout(SETTLE_MS)
            tab_button(page, "Queue").click()
        page.get_by_role("button", name="Refresh", exact=True).wait_for(timeout=120_000)
        page.wait_for_timeout(SETTLE_MS)
        # The page's own work meanwhile (the jobs panel's timer, once Evaluate has been opened, ticks every
        # IDLE_TICK_S): its rate over a window of whole ticks, taken off over the presses' own time.
        started, clock = busy_seconds(cdp), time.monotonic()
        page.wait_for_timeout(IDLE_WINDOW_MS)
        idle_rate = (busy_seconds(cdp) - started) / (time.monotonic() - clock)
        started, clock = busy_seconds(cdp), time.monotonic()
        for _ in range(events):
            with page.expect_response(lambda response: "/gradio_api/queue/join" in response.url, timeout=60_000):
                page.get_by_role("button", name="Refresh", exact=True).click()
            page.wait_for_timeout(ANSWER_WAIT_MS)
        return max(0.0, (busy_seconds(cdp) - started - idle_rate * (time.monotonic() - clock)) / events)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--loads", type=int, default=5)
    parser.add_argument("--events", type=int, default=15)
    parser.add_argument("--runs", type=int, default=3, help="uploaded runs besides the published rows")
    parser.add_argument("--project", type=Path, help="a second checkout, measured in the same run")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    projects = {"this checkout": ROOT, **({str(args.project): args.project.resolve()} if args.project else {})}
    loads: dict[str, list[float]] = {name: [] for name in projects}
    events: dict[str, float] = {}
    looked_around: dict[str, float] = {}
    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=CHROMIUM_ARGS)
        with ExitStack() as started:
            bare_url = started.enter_context(bare_page())
            urls = {name: started.enter_context(started_app(args.runs, project)) for name, project in projects.items()}
            for _ in range(args.loads):  # the apps alternately, so that the machine's moods fall on both
                for name, url in urls.items():
                    loads[name].append(page_load(browser, url))
            for name, url in urls.items():
                events[name] = event_cost(browser, url, args.events, app=True)
                looked_around[name] = event_cost(browser, url, args.events, app=True, every_tab=True)
            bare = event_cost(browser, bare_url, args.events, app=False)
        browser.close()
    print(f"renderer busy time (page loads: median of {args.loads}; one event: the mean over {args.events} presses"
          " on one page)")
    for name in projects:
        per_event = events[name]
        ratio = f"{per_event / bare:.1f} x" if bare > 0 else "(the bare page's took no measurable time)"
        print(f"  {name}: page load {statistics.median(loads[name]):.2f} s, one event {per_event * 1000:.0f} ms,"
              f" {ratio} the bare page's {bare * 1000:.0f} ms; {looked_around[name] * 1000:.0f} ms once every tab"
              " has been opened")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
