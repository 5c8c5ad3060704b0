"""The public queue (Queue tab, /run_queue API): every run evaluated on the deployment, pending, running and
finished, with its benchmark's title, model, status, progress and times; never the endpoint, a key, the owner or
notes, even to a visitor of a public deployment who started none of them. Through gradio_client against the real
app, and in headless Chromium at a desktop's and a phone's width."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from gradio_client import Client

from evaluators.core.registry import get_benchmark
from evaluators.service.runs import public_queue
from tests.app_fixtures import SECRET_KEY, RunningApp, running_app, wait_for_status
from tests.browser_fixtures import browser_page, keep_screenshot, open_tab, wait_until
from ui.queue_tab import queue_html

SAMPLES = 8


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningApp]:
    with running_app(tmp_path_factory.mktemp("queue"), public=True, samples=SAMPLES, data_is_default=True) as running:
        yield running


def _start(app: RunningApp, client: Client, model: str) -> str:
    form = {"base_url": app.server.base_url, "model": model, "benchmark": "acebench", "language": "en",
            "subsets": ["normal_atom_bool"], "data_source": "download", "limit": SAMPLES, "concurrency": 1,
            "api_key": SECRET_KEY}
    started = client.predict(**form, api_name="/start_run")
    assert started["run_id"], started["message"]
    return started["run_id"]


@pytest.mark.slow
def test_every_visitor_sees_every_run_without_endpoint_key_or_owner(app: RunningApp):
    alice, bob = Client(app.url, verbose=False), Client(app.url, verbose=False)
    app.server.latency = 0.3  # slow answers: the run is still going when the queue is read
    try:
        run_id = _start(app, alice, "/srv/models/alice-model")
        wait_for_status(app.context, run_id, ("running",))
        queue = bob.predict(api_name="/run_queue")
    finally:
        app.server.latency = 0.0
    app.context.jobs.wait(run_id, timeout=120)
    run = app.context.store.get_run(run_id)
    payload = json.dumps(queue)
    # nothing of where, with what or by whom: not the endpoint, the key (nor its variable), the owner, the run id
    for secret in (app.server.base_url, f"127.0.0.1:{app.server.port}", SECRET_KEY, "TOOLBOARD_TEST_KEY", run.owner,
                   run_id, "/srv/models"):
        assert secret and secret not in payload, secret
    entry = queue["runs"][0]
    assert set(entry) == {"benchmark", "language", "model", "status", "stage", "done", "total", "created",
                          "started", "finished"}
    assert entry["benchmark"] == get_benchmark("acebench").title and entry["language"] == "en"
    assert entry["model"] == "…/alice-model"  # a server path in a model name is redacted like any visitor text
    assert entry["stage"] == "running" and entry["total"] == SAMPLES and entry["finished"] is None
    assert queue["counts"] == {"pending": 0, "running": 1, "finished": 0}
    # once finished, the same visitor reads it as finished, with its end
    after = bob.predict(api_name="/run_queue")
    done = after["runs"][0]
    assert (done["stage"], done["status"], done["done"]) == ("finished", "finished", SAMPLES) and done["finished"]
    assert after["counts"]["finished"] == 1


@pytest.mark.slow
def test_pending_and_running_runs_come_first_and_cards_escape_model_names(app: RunningApp):
    # a run of its own (the test runs alone too, e.g. in the fast loop where the slow ones are left out)
    app.context.jobs.wait(_start(app, Client(app.url, verbose=False), "card-model"), timeout=120)
    entries = public_queue(app.context)
    assert [e.stage for e in entries] == sorted((e.stage for e in entries), key=["pending", "running", "finished"].index)
    page = queue_html([*entries[:1], *[type(entries[0])(**{**entries[0].__dict__, "model": "<img src=x onerror=alert(1)>"})]])
    assert "<img" not in page and "&lt;img src=x onerror=alert(1)&gt;" in page
    assert 'data-runs="2"' in page and "<h3>Pending (0)</h3>" in page
    # A card names the benchmark and its language by their titles (the API keeps the language's id).
    assert entries[0].language == "en" and entries[0].language_title == "English"
    assert "ACEBench · English</div>" in page and "· en<" not in page


@pytest.mark.parametrize("size", [(1440, 900), (390, 844)])
def test_the_queue_tab_in_a_browser_shows_cards_read_on_open_and_by_its_button(app: RunningApp, size: tuple[int, int]):
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    client = Client(app.url, verbose=False)
    app.context.jobs.wait(_start(app, client, f"first-model-{size[0]}"), timeout=120)
    with browser_page() as (page, problems):
        page.set_viewport_size({"width": size[0], "height": size[1]})
        page.goto(app.url)
        open_tab(page, "Queue")
        cards = page.locator(".queue-html li[data-stage]")
        try:
            cards.first.wait_for()
        except PlaywrightTimeout:
            shown = page.locator(".queue-html").first.inner_html()[:400]
            raise AssertionError(f"the Queue tab is open but shows no run: {shown}") from None
        before = cards.count()
        assert before >= 1 and "finished" in page.locator(".queue-html").inner_text()
        assert "127.0.0.1" not in page.locator(".queue-html").inner_html()
        # a run started after the tab was opened shows after Refresh
        run_id = _start(app, client, f"browser-model-{size[0]}")
        app.context.jobs.wait(run_id, timeout=120)
        page.get_by_role("button", name="Refresh").click()
        wait_until(page, lambda: cards.count() > before, "the Refresh button did not show the new run")
        assert f"browser-model-{size[0]}" in page.locator(".queue-html").inner_text()
        # a phone reads the cards without scrolling sideways
        overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert overflow <= 0, f"the page scrolls sideways by {overflow}px at {size[0]}px"
        keep_screenshot(page, f"queue-{size[0]}")
        assert not [p for p in problems if "favicon" not in p], problems
