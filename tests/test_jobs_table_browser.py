"""The jobs table in a real browser at desktop (1440x900) and phone (390x844) sizes: every header on as
few lines as it has words (never broken inside a word, never standing vertically), a few columns on a phone,
and benchmark and language by their display names."""

from __future__ import annotations

from pathlib import Path

from tests.app_fixtures import SECRET_KEY, running_app
from tests.browser_fixtures import browser_page, keep_screenshot, start_example_run, wait_until
from tests.layout_checks import header_lines, unreadable_headers

SIZES = {"desktop": (1440, 900), "phone": (390, 844)}
PHONE_MAX_COLUMNS = 5


def test_jobs_headers_stay_whole_at_both_sizes_and_a_phone_shows_few_columns(tmp_path: Path):
    with running_app(tmp_path) as app, browser_page() as (page, problems):
        page.goto(app.url, wait_until="load")
        run_id = start_example_run(page, app.server.base_url, SECRET_KEY)
        jobs = page.get_by_label("Jobs", exact=True).first
        wait_until(page, lambda: "finished" in jobs.inner_text(),  # the panel refreshes every second
                   lambda: f"run {run_id} never showed as finished in the jobs table: {jobs.inner_text()!r}", every_ms=300)
        found, shown = {}, {}
        for size, (width, height) in SIZES.items():
            page.set_viewport_size({"width": width, "height": height})
            jobs.scroll_into_view_if_needed()
            page.wait_for_timeout(500)
            keep_screenshot(jobs, f"jobs-{size}")
            headers = header_lines(jobs)
            assert headers, f"{size}: no header cell laid out in the jobs table"
            found[size] = headers
            shown[size] = jobs.inner_text()
            bad = unreadable_headers(headers)
            assert not bad, f"{size}: jobs headers broken or vertical: {bad}"
        phone_headers = [h["text"] for h in found["phone"]]
        assert len(phone_headers) <= PHONE_MAX_COLUMNS, f"the phone shows {len(phone_headers)} columns: {phone_headers}"
        assert "ACEBench" in shown["desktop"] and "English" in shown["desktop"], shown["desktop"]
        # a phone keeps the benchmark: two runs of one model differ by it
        assert "Benchmark" in phone_headers and "ACEBench" in shown["phone"], shown["phone"]
        assert not problems, problems
