"""Screenshots of every tab of the app at desktop (1440x900) and phone (390x844) sizes, for a reviewer to
look at (nothing is committed: the images go to a folder outside the project), and a check of each for what
a person cannot read (tests/layout_checks.py): a figure broken over lines, a header broken inside a word or
standing vertically, and on the phone a page that scrolls sideways.

Starts `python app.py` as a new user would (fresh TOOLBOARD_HOME holding a few uploaded runs besides the
published rows, a free port), starts one small run of a built-in example against a scripted endpoint on
127.0.0.1 (so the jobs panel has a row) and drives Debian's Chromium (/usr/bin/chromium) with playwright: each tab
at each size, plus one sample's evidence in Explore and the leaderboard with its per-subset detail on. Prints each file written and each
problem found; a problem, or a tab that cannot be reached (e.g. hidden in an overflow menu), makes the exit
status 1.

Usage: python benchmarks/screenshots.py [--out /tmp/toolboard-screenshots] [--runs 3] [--project DIR]
(--project: the checkout whose app.py is started, e.g. another branch's worktree; default this one)
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks import app_speed  # noqa: E402
from tests.layout_checks import describe, layout_problems  # noqa: E402

SIZES = {"desktop": (1440, 900), "phone": (390, 844)}
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


# The tab buttons a visitor sees: on the bar, or wrapped after it (Gradio also keeps a visually hidden copy
# of the bar, to measure it, and moves tabs that do not fit into an overflow menu).
TAB_BUTTONS = ".tab-wrapper > :not(.visually-hidden) button"


def tab_names(page) -> list[str]:
    return [name.strip() for name in page.locator(TAB_BUTTONS).all_inner_texts() if name.strip()]


def tab_button(page, name: str):
    return page.locator(TAB_BUTTONS).filter(has_text=name).first


def shoot(page, path: Path, problems: list[str]) -> None:
    """The page as drawn now, written to `path`; what layout_checks finds on it is added to `problems`."""
    page.wait_for_timeout(800)  # let tables and charts finish drawing
    page.screenshot(path=str(path), full_page=True)
    print(path)
    phone = page.viewport_size["width"] < 640
    for problem in layout_problems(page, phone):
        problems.append(f"{path.stem}: {describe(problem)}")


def shoot_size(browser, url: str, size: str, out: Path, expected: list[str]) -> tuple[list[str], list[str]]:
    """Every tab at one size (the tabs found, and `expected` ones: those seen at another size); the tabs
    found, and the problems: tabs that could not be opened, and what the layout checks found."""
    width, height = SIZES[size]
    page = browser.new_page(viewport={"width": width, "height": height})
    page.set_default_timeout(30_000)
    page.goto(url, wait_until="load")
    page.get_by_role("tab").first.wait_for()
    page.wait_for_timeout(1500)
    missing: list[str] = []
    shoot(page, out / f"{size}-first-screen.png", missing)
    found = tab_names(page)
    for name in dict.fromkeys([*expected, *found]):
        tab = tab_button(page, name)
        if not tab.is_visible() or tab.bounding_box()["x"] + tab.bounding_box()["width"] > width:
            missing.append(f"{size}: tab {name!r} is not visible (hidden in a menu or off the screen)")
            continue
        tab.click()
        shoot(page, out / f"{size}-{name.lower().replace(' ', '-')}.png", missing)
    explore = tab_button(page, "Explore")
    if explore.is_visible():  # one sample's evidence, as a reader of a run sees it: the answer first, the prompt folded
        explore.click()
        page.get_by_role("button", name="Reload runs").click()
        page.get_by_text(re.compile(r"^\d+ samples?$")).first.wait_for()
        ids = page.locator(".cell-wrap span.text").filter(has_text=re.compile(r"^\s*[a-z][a-z_]*_\d+(_\d+)*\s*$"))
        sample = ids.first.inner_text().strip() if ids.count() else ""
        if sample:
            page.get_by_label("Sample id").fill(sample)
            page.get_by_label("Sample id").press("Enter")
            page.locator("#explore-answer, #explore-gold").first.wait_for()
            shoot(page, out / f"{size}-explore-sample.png", missing)
        else:
            missing.append(f"{size}: Explore listed no sample to open")
    board = tab_button(page, "Leaderboard")
    if board.is_visible():
        board.click()
        detail = page.get_by_label("Per-subset detail")
        if detail.count():
            detail.first.check()
            shoot(page, out / f"{size}-leaderboard-detail.png", missing)
    page.close()
    return found, missing


def start_example_run(url: str, endpoint: str) -> None:
    """One run of the first built-in example through the app's API, for the jobs panel to show."""
    from gradio_client import Client

    from evaluators.core.registry import all_benchmarks

    benchmark = next(b for b in all_benchmarks() if b.example is not None)
    started = Client(url, verbose=False).predict(base_url=endpoint, model="screenshot-model", benchmark=benchmark.name,
                                                 language=benchmark.example.language or "", data_source="built-in example",
                                                 api_name="/start_run")
    if not started.get("run_id"):
        raise SystemExit(f"the example run was refused: {started.get('message')}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "toolboard-screenshots")
    parser.add_argument("--runs", type=int, default=3, help="uploaded runs in the store besides the published rows")
    parser.add_argument("--project", type=Path, default=ROOT, help="the checkout whose app.py is started")
    args = parser.parse_args()
    app_speed.ROOT = args.project.resolve()
    from playwright.sync_api import sync_playwright

    args.out.mkdir(parents=True, exist_ok=True)
    missing: list[str] = []
    from tests.engine_fixtures import correct_reply
    from tests.scripted_server import ScriptedServer

    with app_speed.started_app(args.runs) as url, ScriptedServer(reply=correct_reply) as endpoint, \
            sync_playwright() as driver:
        start_example_run(url, endpoint.base_url)
        browser = driver.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=CHROMIUM_ARGS)
        try:
            seen: list[str] = []
            for size in SIZES:
                found, problems = shoot_size(browser, url, size, args.out, seen)
                seen += [name for name in found if name not in seen]
                missing += problems
        finally:
            browser.close()
    for problem in missing:
        print(problem, file=sys.stderr)
    print(f"{len(missing)} problems" if missing else "no layout problems found", file=sys.stderr)
    return 1 if missing else 0


if __name__ == "__main__":
    raise SystemExit(main())
