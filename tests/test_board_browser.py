"""Issue 17's checks in a real headless Chromium, at desktop (1440x900) and phone (390x844) sizes: a dead
endpoint refused before any run exists; a partial run shown apart with its reason; rank, n, intervals and
highlighted best values; the per-subset detail showing data rows; a shared URL restoring the view; report
tables on Evaluate and Submit; a failed Add keeping the checked file; no server temp path in any message.
Screenshots of every tab at both sizes: benchmarks/screenshots.py."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from gradio_client import Client

from tests.app_fixtures import form, items_copy, running_app, wait_for_status
from tests.browser_fixtures import (
    CHROMIUM,
    add_answer,
    assert_no_data_folders,
    browser_page,
    check_example_predictions,
    open_charts,
    open_tab,
    start_example_run,
)
from tests.scripted_server import Fault, ScriptedServer, prompt_key

pytestmark = pytest.mark.skipif(not Path(CHROMIUM).exists(),
                                reason="headless browser test needs Debian's chromium at /usr/bin/chromium (apt-get install chromium)")

DESKTOP = {"width": 1440, "height": 900}
PHONE = {"width": 390, "height": 844}
# A server path in a message: Gradio's upload folder, the temp folder, a home folder.
SERVER_PATH = re.compile(r"/tmp/|/gradio/[0-9a-f]{8,}|/root/|/home/")


def fail_some_items(server: ScriptedServer) -> None:
    """The example's items naming Ana (its agent items among them) are refused with a 400, so the run ends with
    request errors, which the board shows as a whole count."""
    refused: set[str] = set()

    def note(body: dict[str, Any]) -> None:
        if "Ana" in str(body.get("messages")):
            refused.add(prompt_key(body))

    server.on_request = note
    server.fault = lambda key, attempt: Fault(status=400, message="scripted refusal") if key in refused else None


def start_partial_run(app: Any) -> str:
    """A partial run (the first 2 items of each subset) of a copy of the built-in example's items, through the app's
    own /start_run API (a run of the built-in example itself, which the browser starts, never joins the board)."""
    values = form(app.server.base_url, "browser-model", items_copy(app.context.store), subsets=[], limit=2)
    return Client(app.url, verbose=False).predict(**values, api_name="/start_run")["run_id"]


def real_problems(problems: list[str]) -> list[str]:
    # leaving a page cuts its open queue connections (logged as errors): only real errors count
    return [p for p in problems if "Connection errored out" not in p and "AbortError" not in p]


def assert_no_server_paths(page: Any, app: Any) -> None:
    shown = page.locator("body").inner_text()
    assert not SERVER_PATH.search(shown), SERVER_PATH.search(shown).group()
    assert_no_data_folders(page, app)


def dead_endpoint() -> str:
    with ScriptedServer() as server:
        return server.base_url  # closed when the block ends: connections are refused


def refuse_a_dead_endpoint(page: Any, app: Any) -> None:
    open_tab(page, "Evaluate")
    page.get_by_label("Endpoint base URL").fill(dead_endpoint())
    page.get_by_label("Model", exact=True).fill("dead-model")
    page.get_by_label("built-in example").first.check()
    page.get_by_role("button", name="Start evaluation").click()
    page.get_by_text(re.compile("connection refused", re.IGNORECASE)).first.wait_for()
    assert app.context.store.list_runs() == []  # no run was created


def first_row(table: Any) -> Any:
    """The first data row a visitor sees: of a Dataframe (Gradio also renders hidden rows to measure them), of the
    board's table (a desktop) or its first card (a phone)."""
    return table.locator(".virtual-row, tbody tr, .board-card").filter(visible=True).first


def board_part(page: Any, part: str) -> Any:
    """The board's ranked or apart part as this screen shows it: the table on a desktop, the cards on a phone."""
    phone = page.viewport_size["width"] <= 640
    return page.locator(f".board-{part}-cards" if phone else f".board-{part}").first


def check_the_report_tables_on_evaluate(page: Any) -> None:
    views = page.get_by_label("Report (official): as on the leaderboard")
    first_row(views).wait_for()
    assert "English" in first_row(views).inner_text()  # the language view by its title, as on the board
    assert "Overall" in views.inner_text() and "n" in views.locator("th, .th").all_inner_texts()[-1]
    first_row(page.get_by_label("Report (official): per subset")).wait_for()


def check_the_board(page: Any, app: Any, run_id: str) -> None:
    page.goto(app.url, wait_until="load")
    phone = page.viewport_size["width"] <= 640
    ranked = board_part(page, "ranked")
    first_row(ranked).wait_for()
    if not phone:  # rank first, a best value highlighted per column
        assert ranked.locator("th").first.inner_text().strip() == "#"
        assert ranked.locator("td.best").count() > 0
    else:  # a card: its rank, its model, its figure
        assert re.fullmatch(r"#\d+", first_row(ranked).locator(".card-rank").inner_text())
    # the partial run is apart, with its reason, its n and its interval; the newest run starred
    apart = board_part(page, "apart")
    apart.get_by_text("browser-model").filter(visible=True).first.wait_for()
    if phone:
        first_row(apart).locator("summary").click()  # the other figures behind a tap
    apart_text = apart.inner_text()
    assert "partial" in apart_text and "★" in apart_text
    assert re.search(r"\d ± \d|\d \+\d+\.\d/−\d", apart_text)  # its 95% interval (lopsided near 0 or 100)
    errors = app.context.store.run_totals(run_id)["errors"]
    assert errors > 0 and f"{errors}.000000" not in apart_text and re.search(rf"(^|\s){errors}(\s|$)", apart_text), \
        errors  # request errors as a whole count
    assert app.context.store.get_run(run_id).model == "browser-model"


def check_the_detail_shows_rows(page: Any) -> None:
    page.get_by_label("Per-subset detail").check()
    page.wait_for_function("() => window.location.search.includes('detail=1')")
    ranked = page.locator(".board-ranked")
    header, row = ranked.locator("thead").first, first_row(ranked)
    row.wait_for()
    table_box, header_box, row_box = ranked.bounding_box(), header.bounding_box(), row.bounding_box()
    # headers on a few lines at most (never a letter per line), the first data row inside the table's box
    assert header_box["height"] < 120, header_box
    assert row_box["height"] > 0 and row_box["y"] + row_box["height"] <= table_box["y"] + table_box["height"]


def check_a_shared_url(page: Any, app: Any) -> None:
    page.goto(f"{app.url}?benchmark=toolbench_static&subset=out_of_domain&detail=1&mode=nonsense", wait_until="load")
    # restored: the page rewrites its address from the controls (the invalid mode dropped)
    page.wait_for_function("() => window.location.search === '?benchmark=toolbench_static&subset=out_of_domain&detail=1'")
    page.get_by_text("ToolBench-Static").first.wait_for()
    assert page.get_by_label("Per-subset detail").is_checked()
    first_row(board_part(page, "ranked")).wait_for()


def check_the_overview_opens_a_table(page: Any) -> None:
    open_tab(page, "Overview")
    page.get_by_role("button", name="Open ToolBench-Static table").click()
    # the board switched with that benchmark's own views (a subset, not a language) and rows
    page.get_by_label("Subset", exact=True).first.wait_for()
    page.get_by_text("ChatGPT (0-shot)").filter(visible=True).first.wait_for()


def submit_with_a_failed_add(page: Any, app: Any) -> None:
    open_tab(page, "Submit")
    check_example_predictions(page)
    first_row(page.get_by_label("Report (official; strict summary included): as on the leaderboard")).wait_for()
    before = len(app.context.store.list_runs())
    page.get_by_role("button", name="Add to leaderboard").click()  # no model name yet
    add_answer(page, "give the model a name")
    assert len(app.context.store.list_runs()) == before
    # the checked file is kept: a name, then Add, stores it without checking it again
    page.get_by_label("Model name").fill("uploaded-after-a-failed-add")
    page.get_by_role("button", name="Add to leaderboard").click()
    add_answer(page, "^Added as run")
    assert "uploaded-after-a-failed-add" in {run.model for run in app.context.store.list_runs()}


def test_the_board_in_a_desktop_browser(tmp_path: Path):
    with running_app(tmp_path) as app, browser_page() as (page, problems):
        page.set_viewport_size(DESKTOP)
        page.goto(app.url, wait_until="load")
        refuse_a_dead_endpoint(page, app)
        fail_some_items(app.server)
        example_run = start_example_run(page, app.server.base_url)
        wait_for_status(app.context, example_run, ("finished",))
        check_the_report_tables_on_evaluate(page)
        run_id = start_partial_run(app)
        wait_for_status(app.context, run_id, ("finished",))
        assert_no_server_paths(page, app)
        check_the_board(page, app, run_id)
        check_the_detail_shows_rows(page)
        check_a_shared_url(page, app)
        check_the_overview_opens_a_table(page)
        submit_with_a_failed_add(page, app)
        assert_no_server_paths(page, app)
    assert not real_problems(problems), problems


def test_the_board_on_a_phone(tmp_path: Path):
    with running_app(tmp_path) as app, browser_page() as (page, problems):
        page.set_viewport_size(PHONE)
        page.goto(app.url, wait_until="load")
        # the first screen reaches ranked rows (model and main score)
        row = first_row(board_part(page, "ranked"))
        row.wait_for()
        assert row.bounding_box()["y"] + row.bounding_box()["height"] < PHONE["height"]
        # every tab is reachable on the bar (none behind a "more" menu), and opens
        for tab, shows in (("Overview", "How models are ranked"), ("Submit", "Check and score"),
                           ("Explore", "Reload runs"), ("About", "ACEBench")):
            open_tab(page, tab)
            page.get_by_text(shows).filter(visible=True).first.wait_for()
        open_tab(page, "Leaderboard")
        # the chart's legend sits below the plot, not over it
        open_charts(page)
        page.wait_for_function("() => document.querySelector('.js-plotly-plot').layout.legend.orientation === 'h'")
        refuse_a_dead_endpoint(page, app)
        fail_some_items(app.server)
        example_run = start_example_run(page, app.server.base_url)
        wait_for_status(app.context, example_run, ("finished",))
        check_the_report_tables_on_evaluate(page)
        run_id = start_partial_run(app)
        wait_for_status(app.context, run_id, ("finished",))
        check_the_board(page, app, run_id)
        check_a_shared_url(page, app)
        submit_with_a_failed_add(page, app)
        assert_no_server_paths(page, app)
    assert not real_problems(problems), problems
