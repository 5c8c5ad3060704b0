"""The Submit tab in a real headless Chromium: a file uploaded once is checked again with another Data choice
(the server holds what it read, not the file), and a file scored on the built-in example stays off the board."""

from __future__ import annotations

import re
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from tests.acebench_fixtures import EXAMPLE_DIR
from tests.app_fixtures import running_app
from tests.browser_fixtures import CHROMIUM, browser_page, open_tab

pytestmark = pytest.mark.skipif(not Path(CHROMIUM).exists(),
                                reason="headless browser test needs Debian's chromium at /usr/bin/chromium (apt-get install chromium)")

PREDICTIONS = EXAMPLE_DIR / "predictions.jsonl"


def open_submit(page: Any, url: str) -> None:
    page.goto(url, wait_until="load")
    open_tab(page, "Submit")
    page.get_by_role("button", name="Check and score").wait_for()


def message_text(page: Any) -> str:
    shown = page.locator("#submit-message .prose")
    return shown.first.inner_text().strip() if shown.count() else ""


def check(page: Any, timeout_s: float = 120.0) -> str:
    """Press Check and score and wait for its message; its text. A press before the browser's upload ended is
    answered "Upload a predictions file first.", so it is pressed again. A message the same as the one before
    is taken once the page has had time to change it."""
    deadline = time.monotonic() + timeout_s
    while True:
        before = message_text(page)
        page.get_by_role("button", name="Check and score").click()
        try:
            page.wait_for_function("before => { const m = document.querySelector('#submit-message .prose');"
                                   " return m && m.innerText.trim() && m.innerText.trim() !== before }", arg=before,
                                   timeout=15_000)
        except Exception:  # noqa: BLE001 - the same message again
            pass
        text = message_text(page)
        if text and not text.startswith("Upload a predictions file first"):
            return text
        if time.monotonic() > deadline:
            return text
        page.wait_for_timeout(500)


def upload_file(page: Any, path: Path) -> None:
    """Put `path` in the file box, replacing the file it shows."""
    clear = page.locator("#submit-file button[aria-label=Clear]")
    if clear.count():
        clear.first.click()
    page.locator("#submit-file input[type=file]").set_input_files(str(path))


def choose_data(page: Any, source: str, folder: Path | None = None) -> None:
    page.get_by_label(source).last.check()
    if folder is not None:
        page.get_by_label("Local data folder").fill(str(folder))


def test_a_file_checked_once_is_checked_again_with_another_data_choice(tmp_path: Path):
    items = Path(shutil.copytree(EXAMPLE_DIR, tmp_path / "my-acebench-items"))
    with running_app(tmp_path / "app") as app, browser_page() as (page, problems):
        open_submit(page, app.url)
        upload_file(page, PREDICTIONS)
        choose_data(page, "built-in example")
        first = check(page)
        assert first.startswith("Scored"), first
        # another Data choice, the same file box: checked again without a new upload
        choose_data(page, "local folder", items)
        second = check(page)
        assert "upload the file again" not in second and second.startswith("Scored:"), second
        choose_data(page, "built-in example")
        assert check(page).startswith("Scored on the built-in example data")
        # the box cleared: nothing held either
        page.locator("#submit-file button[aria-label=Clear]").click()
        assert check(page, timeout_s=0).startswith("Upload a predictions file first")
    assert not [p for p in problems if "favicon" not in p], problems


def test_a_file_scored_on_the_example_is_not_shown_on_the_board(tmp_path: Path):
    items = Path(shutil.copytree(EXAMPLE_DIR, tmp_path / "my-acebench-items"))
    with running_app(tmp_path / "app") as app, browser_page() as (page, problems):
        open_submit(page, app.url)
        upload_file(page, PREDICTIONS)
        choose_data(page, "built-in example")
        message = check(page)
        page.get_by_label("Model name").fill("toy-example-model")
        page.get_by_role("button", name="Add to leaderboard").click()
        added = page.locator("#submit-added span.prose")
        added.get_by_text(re.compile("^Added as run")).wait_for()
        added_message = added.inner_text()
        # the same file on one's own copy of the items is an upload like any other: it joins (not ranked)
        upload_file(page, PREDICTIONS)
        choose_data(page, "local folder", items)
        scored = check(page)
        assert scored.startswith("Scored:")
        # before Add, the page says how the row will be listed: not ranked, and why
        assert ("Once added, its row is listed among the rows not ranked, with the reason: uploaded: how the "
                "predictions were made is not known.") in scored, scored
        page.get_by_label("Model name").fill("own-folder-model")
        page.get_by_role("button", name="Add to leaderboard").click()
        added.get_by_text(re.compile("on the leaderboard \\(source: uploaded\\)")).wait_for()

        seen = list(problems)  # leaving the page cuts its open queue connections (logged as errors)
        page.goto(f"{app.url}?benchmark=acebench", wait_until="load")
        page.get_by_text("own-folder-model").filter(visible=True).first.wait_for()
        board = page.locator("body").inner_text()
        assert "toy-example-model" not in board
    # the Submit tab said why, with the score
    assert "not on the leaderboard" in message.lower() and "example data" in message and "61.7%" in message, message
    assert "not on the leaderboard" in added_message, added_message
    assert not [p for p in seen if "favicon" not in p], seen
