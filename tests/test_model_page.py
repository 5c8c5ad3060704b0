"""The Model page: one model across every benchmark (figures with their intervals, facts, its runs here without
endpoints or keys), its deep link `?model=NAME`, and models compared. The service on a store in tmp_path, the
real app through gradio_client, and real headless Chromium at a desktop's and a phone's size."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from gradio_client import Client

from evaluators.core.errors import ToolboardError
from evaluators.engine.store import Store
from evaluators.service import model_page
from evaluators.service.board import model_key
from tests.app_fixtures import SECRET_KEY, RunningApp, form, running_app, upload, wait_for_status
from tests.browser_fixtures import CHROMIUM, browser_page, keep_screenshot, open_tab, wait_until
from ui.context import AppContext
from ui.format import model_href as model_link
from ui.model_tab import comparison_chart, comparison_html, figures_chart, page_html, runs_html
from ui.overview_tab import overview_frame

HOSTILE = "<img src=x onerror=alert(1)>-model"
# A model of the published tables, with facts, and one without facts or published rows.
PUBLISHED = "GPT-4o"


@pytest.fixture
def services(tmp_path: Path) -> Iterator[AppContext]:
    context = AppContext(store=Store(tmp_path / "t.db"))
    yield context
    context.close()


# ---- the service ---------------------------------------------------------------------------------------------------


def test_a_published_model_shows_its_figures_with_intervals_and_its_facts_whatever_the_spelling(services: AppContext):
    page = model_page.model_page(services, "gpt-4o")
    assert page["found"] and page["model"] == PUBLISHED and page["key"] == model_key(PUBLISHED)
    assert page["facts"]["organisation"] == "OpenAI" and page["facts"]["source"].startswith("https://")
    assert {"organisation", "params_b", "licence", "open_weights", "link", "source"} <= set(page["facts"])
    assert page["benchmarks"], "a published model has figures on at least one board"
    rows = [row for part in page["benchmarks"] for row in part["rows"]]
    assert {row["source"] for row in rows} == {"published"} and all(row["ranked"] for row in rows)
    figures = [figure for row in rows for figure in row["figures"]]
    with_interval = [f for f in figures if f["low"] is not None]
    assert with_interval and all(f["low"] <= f["value"] <= f["high"] and f["n"] > 0 for f in with_interval)
    # Display names, not ids, where a person reads.
    part = page["benchmarks"][0]
    assert part["title"] != part["benchmark"] and all(f["title"] for f in figures)
    assert model_page.model_page(services, "GPT-4O")["benchmarks"] == page["benchmarks"]
    assert json.dumps(page)  # plain JSON: no NaN, no frames


def test_an_unknown_model_is_not_found_and_names_alike_are_offered(services: AppContext):
    page = model_page.model_page(services, "gpt-4")
    assert page["found"]
    missing = model_page.model_page(services, "gpt-4oo")
    assert not missing["found"] and missing["benchmarks"] == [] and missing["runs"] == []
    assert PUBLISHED in missing["suggestions"]
    assert model_page.model_page(services, "  ")["query"] == ""
    with pytest.raises(ToolboardError, match="at most"):
        model_page.model_page(services, "x" * 1000)
    shown = page_html(missing)
    assert "Model not found: gpt-4oo" in shown and f"href='{model_link(PUBLISHED)}'" in shown


def test_the_models_runs_here_are_listed_without_endpoint_key_owner_or_configuration(services: AppContext):
    first = upload(services.store, "gpt-4o")
    upload(services.store, "Another model")
    page = model_page.model_page(services, PUBLISHED)
    assert [run["run_id"] for run in page["runs"]] == [first]
    run = page["runs"][0]
    assert run["source"] == "uploaded" and run["benchmark_title"] == "ACEBench" and run["done"] == run["items"] == 20
    assert not {"base_url", "config", "owner", "message", "notes", "fingerprint"} & set(run)
    assert run["language"] == "en" and "ACEBench English · uploaded" in runs_html(page["runs"])  # titles on the page
    # Its upload's rows join the page beside the published ones, kept apart with their reason.
    uploaded = [row for part in page["benchmarks"] for row in part["rows"] if row["source"] == "uploaded"]
    assert uploaded and all(not row["ranked"] and row["apart_reason"] and row["run_ids"] == [first] for row in uploaded)


@pytest.mark.slow
def test_a_hostile_model_name_is_escaped_on_the_page_the_runs_and_the_charts(services: AppContext):
    upload(services.store, HOSTILE)
    page = model_page.model_page(services, HOSTILE)
    assert page["found"] and page["model"] == HOSTILE
    shown = page_html(page) + runs_html(page["runs"])
    assert "<img" not in shown and "&lt;img src=x onerror=alert(1)&gt;" in shown
    assert model_link(HOSTILE) == "?model=%3Cimg%20src%3Dx%20onerror%3Dalert%281%29%3E-model"
    compared = model_page.compare_models(services, [HOSTILE, PUBLISHED], "acebench", "en")
    assert "<img" not in comparison_html(compared)
    assert "<img" not in comparison_chart(compared).to_json() and "<img" not in figures_chart(page).to_json()


def test_models_compared_are_two_to_six_distinct_ones_each_by_one_row_of_the_view(services: AppContext):
    upload(services.store, "gpt-4o")
    compared = model_page.compare_models(services, ["gpt-4o", "Qwen2.5-72B-Instruct", "no-such-model"], "acebench")
    assert compared["view"] == "en" and compared["title"] == "ACEBench"
    assert [c["title"] for c in compared["columns"]][:4] == ["Atom", "Single", "Multi", "Similar API"]
    assert compared["missing"] == ["no-such-model"]
    # The published, ranked row stands for a model that also has an upload.
    assert [(m["model"], m["source"]) for m in compared["models"]] == [(PUBLISHED, "published"),
                                                                      ("Qwen2.5-72B-Instruct", "published")]
    assert all(m["latency_mean_s"] is None and m["cost"] is None for m in compared["models"])
    assert "$/1k items" in compared["cost_note"]
    with pytest.raises(ToolboardError, match="2 to 6 different models"):
        model_page.compare_models(services, ["gpt-4o", "GPT-4o"], "acebench")  # one model, two spellings
    with pytest.raises(ToolboardError, match="2 to 6"):
        model_page.compare_models(services, [f"model {index}" for index in range(7)], "acebench")
    with pytest.raises(ToolboardError, match="has no language 'xx'"):
        model_page.compare_models(services, ["gpt-4o", "GPT-4"], "acebench", "xx")
    with pytest.raises(ToolboardError):
        model_page.compare_models(services, ["gpt-4o", "GPT-4"], "no-such-benchmark")


def test_the_models_of_the_boards_are_offered_once_each_and_kept_until_a_board_changes(services: AppContext):
    names = model_page.board_models(services)
    assert PUBLISHED in names and "gpt-4o" not in names and len(names) == len({model_key(n) for n in names})
    assert model_page.board_models(services) is names
    upload(services.store, "Brand-new model")
    assert "Brand-new model" in model_page.board_models(services)


# ---- the real app through gradio_client -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningApp]:
    with running_app(tmp_path_factory.mktemp("model_app")) as running:
        yield running


@pytest.mark.slow
def test_the_api_gives_a_models_page_and_compares_models_with_the_latency_of_runs_evaluated_here(app: RunningApp):
    client = Client(app.url, verbose=False)
    started = client.predict(**form(app.server.base_url, "gpt-4o", app.data), api_key=SECRET_KEY,
                             api_name="/start_run")
    run_id = started["run_id"]
    assert run_id, started
    wait_for_status(app.context, run_id, ("finished",))
    page = client.predict("gpt-4o", api_name="/model")
    assert page["found"] and page["model"] == PUBLISHED
    run = next(run for run in page["runs"] if run["run_id"] == run_id)
    assert run["source"] == "evaluated" and run["latency_mean_s"] is not None and run["request_errors"] == 0
    text = json.dumps(page)
    assert app.server.base_url not in text and SECRET_KEY not in text and "127.0.0.1" not in text
    assert PUBLISHED in client.predict(api_name="/model_names")
    assert not client.predict("gpt-4oo", api_name="/model")["found"]

    # A model only evaluated here (its run is partial, so kept apart) compared with a published one.
    other = client.predict(**form(app.server.base_url, "local-only-model", app.data), api_name="/start_run")["run_id"]
    wait_for_status(app.context, other, ("finished",))
    compared = client.predict(["local-only-model", PUBLISHED], "acebench", "en", api_name="/compare_models")
    local = next(model for model in compared["models"] if model["model"] == "local-only-model")
    assert local["source"] == "evaluated" and local["run_ids"] == [other] and "partial" in local["apart_reason"]
    assert local["latency_mean_s"] is not None and local["latency_p95_s"] >= local["latency_mean_s"] * 0
    with pytest.raises(Exception, match="2 to 6"):
        client.predict(["local-only-model"], "acebench", "", api_name="/compare_models")


# ---- a real browser: the deep link at a desktop's and a phone's size -----------------------------------------------


def wait_for_heading(page, text: str) -> None:
    page.locator(".model-page h2", has_text=text).first.wait_for()


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="needs Debian's chromium at /usr/bin/chromium")
def test_the_deep_link_opens_the_models_page_readable_on_a_desktop_and_a_phone(tmp_path: Path):
    with running_app(tmp_path) as app, browser_page() as (page, problems):
        upload(app.context.store, HOSTILE)
        for width, height in ((1440, 900), (390, 844)):
            page.set_viewport_size({"width": width, "height": height})
            page.goto(f"{app.url.rstrip('/')}/?model={quote('gpt-4o')}", wait_until="load")
            wait_for_heading(page, PUBLISHED)
            assert page.get_by_role("tab", name="Model", exact=True).get_attribute("aria-selected") == "true"
            assert "Organisation OpenAI" in page.locator(".model-facts").first.inner_text()
            page.locator(".model-card").first.wait_for()
            page.locator(".js-plotly-plot").filter(visible=True).first.wait_for()
            keep_screenshot(page, f"model-{width}", full_page=True)
            # Cards in one column on a phone: nothing wider than the screen, no figure broken over lines.
            overflow = page.evaluate("document.scrollingElement.scrollWidth")
            if overflow > width:
                raise AssertionError(f"the page is {overflow} px wide at {width} px")
            card = page.locator(".model-card").first.bounding_box()
            assert card["width"] <= width
            figure = page.locator(".model-figure").first
            line = page.evaluate("(e) => parseFloat(getComputedStyle(e).lineHeight) || 24", figure.element_handle())
            assert figure.bounding_box()["height"] < 2 * line + 4, "a headline figure broke over lines"

        # A hostile name, escaped; the address names it quoted.
        page.goto(f"{app.url.rstrip('/')}/?model={quote(HOSTILE)}", wait_until="load")
        wait_for_heading(page, "-model")
        assert "<img src=x" not in page.locator(".model-page").first.inner_html()

        # A model not found says so and offers names alike, each a link to its page.
        page.goto(f"{app.url.rstrip('/')}/?model={quote('gpt-4oo')}", wait_until="load")
        wait_for_heading(page, "Model not found")
        page.get_by_role("link", name=PUBLISHED, exact=True).click()
        wait_for_heading(page, PUBLISHED)
        assert re.search(r"\?model=GPT-4o$", page.url)

        # The picker: another model, and the address follows it.
        picker = page.get_by_label("Model (type to search)")
        picker.click()
        picker.fill("Qwen2.5-72B")
        page.get_by_role("option", name="Qwen2.5-72B-Instruct", exact=True).click()
        wait_for_heading(page, "Qwen2.5-72B-Instruct")
        wait_until(page, lambda: "model=Qwen2.5-72B-Instruct" in page.url,
                   lambda: f"the address did not follow the model picked: {page.url}")

        # Compare: the page's model and another, bars with whiskers.
        page.get_by_label("Models (2 to 6)").click()
        page.get_by_role("option", name=PUBLISHED, exact=True).click()
        page.keyboard.press("Escape")
        # both models chosen (the page's model and the one picked) before Compare is pressed
        chosen = page.locator(".block", has=page.get_by_label("Models (2 to 6)")).last
        chosen.locator(".token").nth(1).wait_for()
        page.get_by_role("button", name="Compare", exact=True).click()
        compared = page.locator(".model-page", has_text="Each model by one row of the view").first
        refused = page.locator("#compare-note", has_text="⚠️")
        compared.or_(refused).first.wait_for()
        assert not refused.count(), refused.inner_text()
        keep_screenshot(page, "model-compare-390", full_page=True)

        # A model name clicked in the Overview opens its page.
        top = str(overview_frame(app.context)["model"].iloc[0])
        open_tab(page, "Overview")
        page.locator(".overview-html").get_by_role("link", name=top, exact=True).filter(visible=True).first.click()
        wait_for_heading(page, top)
        assert page.get_by_role("tab", name="Model", exact=True).get_attribute("aria-selected") == "true"
    # Going to another address while the page's other loads are under way aborts their connections: not a fault.
    faults = [problem for problem in problems if "AbortError" not in problem and "Connection errored out" not in problem]
    assert not faults, "\n".join(faults)
