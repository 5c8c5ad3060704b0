"""Headless Chromium for tests: Debian's /usr/bin/chromium driven by playwright (no browser download)."""

from __future__ import annotations

import os
import re
import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.acebench_fixtures import EXAMPLE_DIR

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"

# Generous: CI machines are shared and slow (on 2 cores under a load of 15, Gradio's first page alone can take
# most of a minute). Each wait ends as soon as the page's state is there: a long one costs nothing on a quiet machine.
TIMEOUT_MS = 120_000
# The tab buttons a visitor sees: on a phone the tabs past the bar's width are buttons of its overflow list, which
# the app's CSS shows on the bar (Gradio also keeps a visually hidden copy of the bar, to measure it).
TAB_BUTTONS = ".tab-wrapper > :not(.visually-hidden) button"
# How long a click on a tab button may take to select it before it is made again (see open_tab).
TAB_SELECT_WAIT_MS = 5_000

class SharedChromium:
    """One Chromium per test process, kept from one browser test to the next: starting playwright's driver and the
    browser costs about 0.8 s, which every browser test paid. Each test still gets fresh pages in contexts of its
    own (their own storage, cookies and cache), closed when the test ends. Sync playwright marks the main thread's
    event loop as running while it is started, so `asyncio.run` there fails: the browser is closed before any test
    that does not use it (the autouse fixture in conftest.py), and at the end of the session."""

    def __init__(self) -> None:
        self.driver_manager: Any = None
        self.browser: Any = None

    def get(self) -> Any:
        if self.browser is not None and self.browser.is_connected():
            return self.browser
        self.close()
        playwright = pytest.importorskip("playwright.sync_api")
        self.driver_manager = playwright.sync_playwright()
        driver = self.driver_manager.start()
        self.browser = driver.chromium.launch(
            executable_path=CHROMIUM, headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run"],
        )
        return self.browser

    def close(self) -> None:
        browser, manager = self.browser, self.driver_manager
        self.browser = self.driver_manager = None
        try:
            if browser is not None and browser.is_connected():
                browser.close()
        finally:
            if manager is not None:
                manager.__exit__(None, None, None)


SHARED_CHROMIUM = SharedChromium()


@contextmanager
def headless_chromium() -> Iterator[Any]:
    """Debian's Chromium, headless, with the flags this closed network needs. The browser is the process's shared
    one (SharedChromium); every context (so every page) the test opened in it is closed afterwards."""
    browser = SHARED_CHROMIUM.get()
    before = set(browser.contexts)
    try:
        yield browser
    finally:
        for context in [context for context in browser.contexts if context not in before]:
            context.close()


@contextmanager
def browser_page() -> Iterator[tuple[Any, list[str]]]:
    """A page in headless Chromium, and the page and console errors it collects."""
    problems: list[str] = []
    with headless_chromium() as browser:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
        page.on("console", lambda message: problems.append(f"console {message.type}: {message.text}")
                if message.type == "error" else None)
        page.set_default_timeout(TIMEOUT_MS)
        yield page, problems


def keep_screenshot(target: Any, name: str, full_page: bool = False) -> None:
    """A screenshot of a page or a locator in the folder TOOLBOARD_SHOTS names, for a person checking a layout by
    eye; nothing when it is unset (a full-page shot costs up to a second, and no test reads it)."""
    folder = os.environ.get("TOOLBOARD_SHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        target.screenshot(path=str(Path(folder) / f"{name}.png"), **({"full_page": True} if full_page else {}))


def wait_for_board(page: Any, state: str = "") -> None:
    """Until the board the page shows is the one whose state (its URL query, the root's data-board-state) holds
    `state`, and the board's script is wired (a header's or a sort button's click is then heard): a click before
    that, on a busy machine, would be lost or answered for the board the page was built with."""
    page.wait_for_function("""(state) => {
        const board = document.querySelector('.board-html');
        return !!board && typeof window.toolboardTyped === 'function' && (board.dataset.boardState || '').includes(state);
    }""", arg=state)


def open_charts(page: Any) -> Any:
    """Unfold the board's Charts (folded on arrival) and wait for its plot; the plot's locator."""
    page.locator("#board-charts button").first.click()
    plot = page.locator("#board-charts .js-plotly-plot")
    plot.wait_for()
    return plot


def wait_until(page: Any, holds: Callable[[], bool], failure: str | Callable[[], str], every_ms: int = 100) -> None:
    """Until `holds()` is true, checked every `every_ms` for up to TIMEOUT_MS; then fails saying `failure` (or what
    `failure()` says of the page then)."""
    deadline = time.monotonic() + TIMEOUT_MS / 1000
    while not holds():
        if time.monotonic() > deadline:
            raise AssertionError(failure if isinstance(failure, str) else failure())
        page.wait_for_timeout(every_ms)


def open_tab(page: Any, name: str) -> None:
    """Open the app's tab `name` as a visitor would: a click on its button on the screen, until the bar marks that
    tab selected. While a page settles, Gradio measures its tab bar again and moves buttons between the bar and its
    overflow list; on a busy machine a click can then land on a button being replaced and be lost (seen once in CI:
    the tab never opened), so it is made again."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    button = page.locator(TAB_BUTTONS).filter(has_text=re.compile(f"^{re.escape(name)}$")).first
    selected = page.get_by_role("tab", name=name, exact=True, selected=True)
    deadline = time.monotonic() + TIMEOUT_MS / 1000
    while True:
        button.wait_for()
        box = button.bounding_box()
        assert box is not None and box["x"] + box["width"] <= page.viewport_size["width"], f"tab {name} is off the screen"
        button.click()
        try:
            selected.wait_for(timeout=TAB_SELECT_WAIT_MS)
            return
        except PlaywrightTimeout:
            if time.monotonic() > deadline:
                raise AssertionError(f"a click on the {name} tab never selected it") from None


def start_example_run(page: Any, base_url: str, api_key: str | None = None) -> str:
    """Start a run of the built-in example from the Evaluate tab as a visitor would; its run id."""
    open_tab(page, "Evaluate")
    page.get_by_label("Endpoint base URL").fill(base_url)
    if api_key:
        page.get_by_placeholder("sk-… (optional)").fill(api_key)
    page.get_by_label("Model", exact=True).fill("browser-model")
    page.get_by_label("built-in example").first.check()
    page.get_by_role("button", name="Start evaluation").click()
    page.get_by_text(re.compile("Started run")).wait_for()
    return re.search(r"Started run (\S+)\.", page.get_by_text(re.compile("Started run")).inner_text()).group(1)


def data_folders(app: Any) -> set[str]:
    """The data folders the app read: its synthetic data, its default folder and each run's own (the built-in
    example's folder sits inside the project, where no temp or home pattern would see it)."""
    folders = {str(app.data), *(str(folder) for folder in [app.context.default_data_dir] if folder)}
    for run in app.context.store.list_runs():
        folder = run.config.get("data_dir")
        if folder:
            folders |= {str(folder), str(Path(folder).resolve())}
    return folders


def assert_no_data_folders(page: Any, app: Any, within: Any = None) -> None:
    """No data folder the app used shows on the page (or in the `within` locator's part of it)."""
    shown = (within or page.locator("body")).inner_text()
    leaked = sorted(folder for folder in data_folders(app) if folder in shown)
    if leaked:
        at = shown.index(leaked[0])
        raise AssertionError(f"the page shows the server's data folder {leaked[0]}: …{shown[max(at - 200, 0):at + 200]}…")


def check_example_predictions(page: Any, timeout_s: float = 120.0) -> None:
    """On the Submit tab: upload the built-in example's predictions and press Check and score until it scores.
    The browser uploads the file in the background: a press before the upload ends is answered "Upload a
    predictions file first." (as a visitor's would be), so it is pressed again once the upload is in."""
    page.locator("input[type=file][accept*=jsonl]").set_input_files(str(EXAMPLE_DIR / "predictions.jsonl"))
    # The file box offers Clear once the browser's upload has landed. Pressing before that is answered "Upload a
    # predictions file first", and the press again below; on a very busy machine such a press can still be queued
    # when Add is pressed, and its answer then wipes Add's.
    page.locator("#submit-file button[aria-label=Clear]").wait_for()
    page.get_by_label("built-in example").last.check()
    outcome = page.get_by_text(re.compile("^Scored|^Upload a predictions file first"))
    deadline = time.monotonic() + timeout_s
    while True:
        page.get_by_role("button", name="Check and score").click()
        outcome.first.wait_for()
        if outcome.first.inner_text().startswith("Scored"):
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"the upload never arrived in {timeout_s:.0f} s")
        page.wait_for_timeout(500)


def add_answer(page: Any, pattern: str) -> str:
    """The Submit tab's answer to Add, once it says `pattern` (a regex): the text of the answer box only, never a
    label elsewhere on the page that happens to hold the same words. Wait for it before the next click: a click on
    Add while Add is still pending is ignored by the page (its trigger fires once at a time)."""
    answer = page.locator("#submit-added span.prose")
    answer.get_by_text(re.compile(pattern)).wait_for()
    return answer.inner_text()



def goto(page: Any, url: str, **options: Any) -> Any:
    """page.goto, tried once more when Chromium aborts the navigation (net::ERR_ABORTED: a navigation the page
    started itself at that moment superseded ours; seen on a loaded machine)."""
    from playwright.sync_api import Error as PlaywrightError

    try:
        return page.goto(url, **options)
    except PlaywrightError as exc:
        if "ERR_ABORTED" not in str(exc):
            raise
        return page.goto(url, **options)
