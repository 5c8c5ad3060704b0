"""The layout checks (tests/layout_checks.py) on small pages in headless Chromium: they find a figure
broken over lines, a header broken inside a word or standing vertically and a phone page scrolling
sideways, and accept a figure whose interval sits on a line of its own."""

from __future__ import annotations

from tests.browser_fixtures import browser_page
from tests.layout_checks import header_lines, layout_problems, unreadable_headers

PAGE = """<html><body style="margin:0;font:16px monospace">
<div role="columnheader" style="width:10px;word-break:break-all">language</div>
<table><tr><th>Req/s</th><th>Live AST</th></tr>
<tr><td><div id="broken" style="width:60px">80.0 +8.8/−13.0</div></td>
<td><div id="apart" style="width:60px"><div>80.0</div><div style="font-size:12px">+8.8/−13.0</div></div></td>
<td><div id="after-br" style="width:60px">80.0<br><small>± 8.8</small></div></td>
<td style="white-space:nowrap">61.7 ± 19.6</td></tr></table>
<div id="wide" style="width:{wide}px">wide</div>
</body></html>"""


def test_the_checks_find_broken_figures_vertical_headers_and_a_page_wider_than_a_phone():
    with browser_page() as (page, _):
        page.set_viewport_size({"width": 390, "height": 844})
        page.set_content(PAGE.format(wide=600))
        found = layout_problems(page, phone=True)
        kinds = sorted({(p["kind"], p["text"]) for p in found})
        assert ("figure broken over lines", "80.0 +8.8/−13.0") in kinds, found
        assert ("vertical header", "language") in kinds, found
        assert any(p["kind"] == "page scrolls sideways" and "600 px wide on a 390 px screen" in p["text"] for p in found), found
        # The interval on a line of its own (a box or a <br> of its own) is not a broken figure.
        broken = [p["text"] for p in found if p["kind"] == "figure broken over lines"]
        assert broken == ["80.0 +8.8/−13.0"], found
        headers = {h["text"]: h for h in header_lines(page.locator("body"))}
        assert headers["language"]["lines"] > 1 and headers["Live AST"]["lines"] == 1
        assert unreadable_headers(list(headers.values())) and not unreadable_headers([headers["Live AST"], headers["Req/s"]])


def test_a_page_that_fits_has_no_problems():
    with browser_page() as (page, _):
        page.set_viewport_size({"width": 390, "height": 844})
        page.set_content("<html><body><table><tr><th>Model</th><th>Overall</th></tr><tr><td>GPT-4o</td>"
                         "<td style='white-space:nowrap'>81.1 ± 2.4</td></tr></table></body></html>")
        assert layout_problems(page, phone=True) == []
        assert layout_problems(page, phone=False) == []
