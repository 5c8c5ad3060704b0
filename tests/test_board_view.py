"""The board as the page shows it: the view's state in the URL (restored, invalid values ignored), one
scale (%) everywhere, short headers with fixed widths and right-aligned numbers, the note's links and
freshness, why an empty strict board is empty; and, in a real browser, a shared link restoring a view."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from evaluators.core.display_names import subset_title
from evaluators.core.registry import all_benchmarks, benchmark_names, get_benchmark
from evaluators.engine.store import Store
from evaluators.service.board import SOURCES, BoardQuery, board_rows, layout_for, query_board
from tests.browser_fixtures import CHROMIUM, TAB_BUTTONS, browser_page
from ui.app import CSS, launch_options
from ui.board_html import board_html, other_html
from ui.board_views import percent_table
from ui.context import AppContext
from ui.format import as_percent, model_href
from ui.leaderboard_tab import (
    BoardState,
    controls_state,
    default_state,
    empty_reason,
    source_note,
    state_from_params,
    state_query,
    view_key,
)

FACTS = {"organisation": ["Org A", "Org, with comma"], "request_mode": ["native tools", "prompt"]}


def facts(benchmark: str, mode: str) -> dict[str, list[str]]:
    return FACTS


def other_benchmark() -> str:
    """A benchmark that is not the first (so its name goes in the URL) with more than one view."""
    return next(b.name for b in all_benchmarks()[1:] if len(layout_for(b.name).views) > 1)


def parsed(query: str) -> dict[str, list[str]]:
    from urllib.parse import parse_qs
    return parse_qs(query, keep_blank_values=True)


def test_a_plain_visit_has_no_query_and_a_chosen_view_round_trips_through_the_url():
    assert state_query(default_state()) == ""
    name = other_benchmark()
    layout = layout_for(name)
    chosen = BoardState(benchmark=name, view=layout.views[1], search="qwen 7b", sources=("published", "uploaded"),
                        columns=tuple(layout.columns[:2]), details=True, mode="strict", sort_by=layout.columns[1],
                        organisations=("Org, with comma",), weights="closed", request_modes=("native tools",),
                        min_params_b=7.0, max_params_b=70.5, hide_flagged=True)
    query = state_query(chosen)
    assert f"{view_key(name)}={layout.views[1]}" in query and "view=" not in query  # Gradio's ?view=api stays free
    assert state_from_params(parsed(query), facts) == chosen
    assert "pmin=7&pmax=70.5" in query and "weights=closed" in query and "noflag=1" in query
    # the older links' open-weights key still opens the open models
    assert state_from_params(parsed("open=1"), facts).weights == "open"
    assert state_from_params(parsed("pmin=-3&pmax=nan&weights=some"), facts) == default_state()


def test_invalid_url_values_are_ignored_and_keep_their_defaults():
    name = other_benchmark()
    layout = layout_for(name)
    state = state_from_params(parsed(f"benchmark={name}&{view_key(name)}=nowhere&mode=lenient&sort=nothing"
                                     f"&columns={layout.columns[0]}&columns=bogus&sources=published&sources=elsewhere"
                                     "&org=Nobody&org=Org+A&req=telepathy&detail=maybe&q=" + "x" * 500), facts)
    assert state.benchmark == name and state.view == layout.views[0] and state.mode == "official"
    assert state.sort_by == layout.default_sort and state.columns == (layout.columns[0],)
    assert state.sources == ("published",) and state.organisations == ("Org A",) and state.request_modes == ()
    assert not state.details and len(state.search) == 200
    assert state_from_params(parsed("benchmark=no-such-board"), facts) == default_state()
    # present and empty: no source at all (the table is then empty), not the default
    assert state_from_params(parsed("sources="), facts).sources == ()


def test_controls_of_the_previous_benchmark_fall_back_to_the_new_ones_defaults():
    first, name = benchmark_names()[0], other_benchmark()
    stale = controls_state((name, layout_for(first).views[0], "", list(SOURCES), list(layout_for(first).columns),
                            False, "official", layout_for(first).default_sort, [], False, []), facts)
    assert stale == default_state(name)


def test_the_table_downloads_and_the_api_share_one_scale(tmp_path: Path):
    context = AppContext(store=Store(tmp_path / "board.sqlite"))
    name = benchmark_names()[0]
    layout = layout_for(name)
    values = (name, layout.views[0], "", list(SOURCES), list(layout.columns), False, "official", layout.default_sort)
    shown = percent_table(context, *values, [], False, [])
    fractions = query_board(board_rows(name, None), layout, BoardQuery(view=layout.views[0]))
    main = layout.default_sort
    assert shown[main].max() == pytest.approx(round(fractions[main].max() * 100, 1))
    assert shown[main].max() > 1
    context.close()


def test_the_board_html_has_one_line_figures_sortable_headers_best_values_and_model_links():
    name = benchmark_names()[0]
    layout = layout_for(name)
    state = default_state(name)
    frame = as_percent(query_board(board_rows(name, None), layout, BoardQuery(view=layout.views[0])), layout)
    shown = board_html(frame, state, "q=x&y", ["a <b>line</b>"])
    assert shown.startswith(f'<div class="board-html" data-board-state="q=x&amp;y" data-rows="{len(frame)}">')
    main = layout.labels.get(layout.default_sort, layout.default_sort)
    headers = re.findall(r"<th[^>]*>(.*?)</th>", shown.split("</thead>")[0])
    plain = [re.sub(r"<[^>]+>", "", header) for header in headers]
    assert plain[:3] == ["#", "model", main + "▼"]  # the main score, sorted, right after the pinned model
    assert f'data-sort="{layout.default_sort}"' in shown and 'aria-sort="descending"' in shown
    # a figure: its value, then its interval in a quieter span; the best of a column marked
    assert re.search(r'<td class="fig best"><span class="v">\d+\.\d</span>', shown)
    assert re.search(r'<span class="v">\d+\.\d</span> <span class="ci">(± \d+\.\d|\+\d+\.\d/−\d+\.\d)</span>', shown)
    assert "a &lt;b&gt;line&lt;/b&gt;" in shown  # every text escaped
    first = str(frame["model"].iloc[0])
    assert f'href="{model_href(first)}"' in shown and model_href("a b/c&d") == "?model=a%20b%2Fc%26d"
    # the phone's cards: one per row, the sorted figure in front
    assert shown.count('class="board-card"') == len(frame)


def test_a_model_name_is_escaped_everywhere_it_shows():
    name = benchmark_names()[0]
    layout = layout_for(name)
    frame = as_percent(query_board(board_rows(name, None), layout, BoardQuery(view=layout.views[0])), layout)
    frame.loc[0, "model"] = "<img src=x onerror=alert(1)> {{value}} ${1+1}"
    shown = board_html(frame, default_state(name), "")
    assert "<img" not in shown and "{{" not in shown and "${" not in shown
    assert "&lt;img src=x onerror=alert(1)&gt;" in shown


def test_per_subset_detail_drops_empty_columns_and_says_why():
    name = benchmark_names()[0]
    layout = layout_for(name)
    if not layout.detail_columns:
        pytest.skip("no per-subset columns")
    frame = as_percent(query_board(board_rows(name, None), layout, BoardQuery(view=layout.views[0], details=True)),
                       layout)
    empty = [c for c in layout.detail_columns if c in frame.columns and frame[c].isna().all()]
    shown = board_html(frame, BoardState(name, layout.views[0], columns=layout.columns, details=True,
                                         sort_by=layout.default_sort), "detail=1")
    for column in empty:
        assert f'data-col="{column}"' not in shown
    if empty:
        assert "Published rows have no per-subset figures" in shown


def test_links_must_be_plain_web_addresses():
    link = other_html({"link": "https://example.org/a_(b)?x=1&y=2"}, "link")
    assert link == ('<a href="https://example.org/a_(b)?x=1&amp;y=2" target="_blank" rel="noopener noreferrer">link</a>')
    assert other_html({"link": "javascript:alert(1)"}, "link") == "javascript:alert(1)"  # text, not a link
    assert "<a" not in other_html({"link": "https://x.org/ onmouseover=1"}, "link")


def test_the_note_gives_the_scale_the_sources_and_the_date_and_strict_mode_says_why_it_is_empty():
    name = benchmark_names()[0]
    about = get_benchmark(name).about
    note = source_note(name, "official", "2026-01-02")
    assert "%" in note and "downloads" in note and "2026-01-02" in note
    if about.paper_url:
        assert f"]({about.paper_url})" in note
    if about.source_url:
        assert f"]({about.source_url})" in note
    assert "Strict mode" in empty_reason("strict", 0, 0)
    assert empty_reason("strict", 3, 0) == "" and empty_reason("official", 0, 0)


def test_css_and_the_upload_limit_reach_the_launch_used_by_the_app_and_the_tests(tmp_path: Path):
    # A store of this test's own: one in a fixed /tmp path is shared with every other checkout and run.
    context = AppContext(store=Store(tmp_path / "unused-board-view.sqlite"), max_upload_bytes=314_572)
    try:
        options = launch_options(context)
    finally:
        context.close()
    assert options["css"] == CSS and ".board-table" in CSS and ".overflow-menu" in CSS
    # In bytes: TOOLBOARD_MAX_UPLOAD_MB=0.3 was handed to Gradio as "0mb", which refused every upload.
    assert options["max_file_size"] == 314_572


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="needs Debian's chromium at /usr/bin/chromium")
def test_a_shared_link_restores_the_view_and_a_change_updates_the_address(tmp_path: Path):
    from tests.app_fixtures import running_app

    name = other_benchmark()
    layout = layout_for(name)
    view = layout.views[1]
    with running_app(tmp_path) as app, browser_page() as (page, problems):
        page.goto(f"{app.url}?benchmark={name}&{view_key(name)}={view}&detail=1&mode=nonsense", wait_until="load")
        page.wait_for_function(f"() => window.location.search === '?benchmark={name}&{view_key(name)}={view}&detail=1'")
        assert page.get_by_label("Per-subset detail").is_checked()
        assert page.get_by_label(layout.view_label, exact=True).first.input_value() == subset_title(name, view)
        page.get_by_label("Search models").fill("zz-nobody")
        page.wait_for_function("() => window.location.search.includes('q=zz-nobody')")
        page.get_by_text("No rows match these filters.").wait_for()

        # A phone: the first screen reaches the ranked rows, and every tab is on the bar (no "more" menu).
        assert not problems, "\n".join(problems)
        page.set_viewport_size({"width": 390, "height": 844})
        page.goto(app.url, wait_until="load")
        first_row = page.locator(".board-ranked-cards .board-card").first
        first_row.wait_for()
        assert first_row.bounding_box()["y"] + first_row.bounding_box()["height"] < 844
        assert not page.get_by_role("button", name="More tabs").is_visible()
        for tab in ("Leaderboard", "Overview", "Evaluate", "Submit", "Explore", "About"):
            shown = page.locator(f"{TAB_BUTTONS}:visible", has_text=tab).first
            assert shown.bounding_box()["x"] + shown.bounding_box()["width"] <= 390, tab
    # leaving the first page cuts its open queue connections (logged as errors): only real errors count
    assert not [p for p in problems if "Connection errored out" not in p and "AbortError" not in p], problems
