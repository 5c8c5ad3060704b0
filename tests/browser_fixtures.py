"""Headless Chromium for tests: Debian's /usr/bin/chromium driven by playwright (no browser download)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"

TIMEOUT_MS = 60_000  # generous: CI machines are shared and slow

@contextmanager
def browser_page() -> Iterator[tuple[Any, list[str]]]:
    """A page in headless Chromium, and the page and console errors it collects."""
    playwright = pytest.importorskip("playwright.sync_api")
    problems: list[str] = []
    with playwright.sync_playwright() as driver:
        browser = driver.chromium.launch(
            executable_path=CHROMIUM, headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run"],
        )
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
        page.on("console", lambda message: problems.append(f"console {message.type}: {message.text}")
                if message.type == "error" else None)
        page.set_default_timeout(TIMEOUT_MS)
        try:
            yield page, problems
        finally:
            browser.close()
