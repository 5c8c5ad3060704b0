"""From the Evaluate form's Start to the run's first request, as a visitor meets it (issue 31: within 0.3 s).

Starts `python app.py` as a new user would (a fresh TOOLBOARD_HOME, a free port) and the scripted
OpenAI-compatible server in its own process (tests/scripted_server.py, 0.2 s per answer), opens the app in
Debian's Chromium (1440x900), fills the Evaluate form for the built-in example against the server, and clicks
Start --runs times, each a new run (of a model name of its own, so that no answer comes from the cache). Each time is from the click (the wall clock just before playwright sends it)
to the server's first request of that run (the server's own wall clock, the same machine). The first Start is
the visitor's first run of this app process (the endpoint is looked at, nothing is warm but what the app made
at start-up); the later ones are what a visitor starting runs one after another gets.

Usage: python benchmarks/app_first_request.py [--runs 5] [--timeout 60]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.board_browser_speed import CHROMIUM, started_app  # noqa: E402
from benchmarks.screenshots import CHROMIUM_ARGS  # noqa: E402
from benchmarks.server_process import ServerProcess  # noqa: E402

GOAL_SECONDS = 0.3


def first_request_after(server: ServerProcess, clicked: float, timeout_s: float) -> float:
    deadline = time.monotonic() + timeout_s
    while True:
        first = server.ask("stats")["first_request_at"]
        if first is not None:
            return first - clicked
        if time.monotonic() > deadline:
            raise SystemExit(f"no request reached the server within {timeout_s:g} s of Start")
        time.sleep(0.02)


def wait_until_quiet(server: ServerProcess, timeout_s: float, quiet_s: float = 1.0) -> None:
    """Until the server has had no request for `quiet_s` (the run's answers come every 0.2 s while it goes)."""
    deadline = time.monotonic() + timeout_s
    seen = server.ask("stats")["requests"]
    while True:
        time.sleep(quiet_s)
        now = server.ask("stats")["requests"]
        if now == seen:
            return
        if time.monotonic() > deadline:
            raise SystemExit(f"the run was still sending requests {timeout_s:g} s after Start")
        seen = now


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--timeout", type=float, default=60.0)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    server = ServerProcess(0.2)
    times: list[float] = []
    try:
        with started_app(ROOT, args.timeout) as url, sync_playwright() as driver:
            browser = driver.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1440, "height": 900})
            page.set_default_timeout(args.timeout * 1000)
            page.goto(url)
            page.get_by_role("tab", name="Evaluate").click()
            page.get_by_label("Endpoint base URL").fill(server.base_url)
            page.get_by_label("built-in example").first.check()
            start = page.get_by_role("button", name="Start evaluation")
            for number in range(1, args.runs + 1):
                # A model name of its own: the same requests again would be answered by the response cache.
                page.get_by_label("Model", exact=True).fill(f"scripted-{number}")
                server.ask("reset")
                clicked = time.time()
                start.click()
                times.append(first_request_after(server, clicked, args.timeout))
                wait_until_quiet(server, args.timeout)  # the run ends before the next Start
            browser.close()
    finally:
        server.close()
    print("Start -> first request of the run (s): " + ", ".join(f"{value:.3f}" for value in times))
    later = times[1:]
    print(f"first Start {times[0]:.3f} s; later Starts median {statistics.median(later):.3f} s, max {max(later):.3f} s"
          if later else f"first Start {times[0]:.3f} s")
    met = max(times) <= GOAL_SECONDS
    print(f"goal: every Start's first request within {GOAL_SECONDS} s: {'PASS' if met else 'FAIL'}")
    return 0 if met else 1


if __name__ == "__main__":
    raise SystemExit(main())
