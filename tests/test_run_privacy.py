"""Issue 41, part 4: on a public deployment another visitor's run is not told apart from no run at all.

The Model page's `/model` lists a run the caller may not see (ownership.may_see_job) only as the Queue lists it
(no id, tokens or latency), and every refusal about such a run (cancel, resume, re-send errors, share, job detail,
Explore) reads word for word as the refusal of an id nobody has. The real app (public mode) through
gradio_client, each Client one visitor (its session) or named by owner_token, runs sent over real HTTP to the
scripted server; the public app and its helpers are tests/test_hardening_ownership.py's."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from gradio_client import Client

from evaluators.core.errors import ToolboardError
from evaluators.engine.store import Store, new_run_id
from evaluators.service.app_services import AppServices
from evaluators.service.runs import act_on_run, job_state, live_status
from tests.app_fixtures import RunningApp, wait_for_status
from tests.browser_fixtures import CHROMIUM, TIMEOUT_MS, goto, headless_chromium, start_example_run
from tests.test_hardening_ownership import cancel_all, plain, public_app, public_form
from ui.model_tab import runs_html

RUN_FIELDS_HIDDEN = ("run_id", "source", "request_errors", "latency_mean_s", "tokens")
QUEUE_FIELDS = ("benchmark", "benchmark_title", "language", "model", "status", "done", "items", "created", "finished")
ALICE_TOKEN = "alice-owns-these-runs-0123456789"


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningApp]:
    with public_app(tmp_path_factory.mktemp("privacy")) as running:
        yield running


def started(client: Client, app: RunningApp, model: str, **form: Any) -> str:
    outcome = client.predict(**public_form(app.server.base_url, model, **form), owner_token=ALICE_TOKEN,
                             api_name="/start_run")
    assert outcome["run_id"], outcome["message"]
    return outcome["run_id"]


def runs_of(page: dict[str, Any], model: str) -> list[dict[str, Any]]:
    return [run for run in page["runs"] if run["model"] == model]


@pytest.mark.slow
def test_the_model_page_lists_another_visitors_runs_only_as_the_queue_does(app: RunningApp):
    alice, bob = Client(app.url, verbose=False), Client(app.url, verbose=False)
    finished = started(alice, app, "privacy-model", limit=3)
    assert wait_for_status(app.context, finished, ("finished",)) == "finished"
    app.server.latency = 1.0  # 30 samples one at a time: running for the whole test
    running = ""
    try:
        running = started(alice, app, "privacy-model", concurrency=1)
        wait_for_status(app.context, running, ("running",))
        page = bob.predict("privacy-model", api_name="/model")
        text = json.dumps(page)
        assert running not in text  # nowhere: not in the runs, not in the board's rows (it has not finished)
        listed = runs_of(page, "privacy-model")
        assert len(listed) == 2 and all(run["hidden"] for run in listed)
        for run in listed:
            assert all(run[field] is None for field in RUN_FIELDS_HIDDEN)
            assert set(run) == {*RUN_FIELDS_HIDDEN, *QUEUE_FIELDS, "hidden"}
            assert finished not in json.dumps(run)  # the finished unshared run: no id among the runs either
        queued = next(run for run in listed if run["status"] == "running")
        assert (queued["benchmark"], queued["language"], queued["items"]) == ("acebench", "en", 30)
        assert queued["created"] and queued["finished"] is None and 0 <= queued["done"] <= 30
        assert running not in runs_html(page["runs"]) and "ACEBench English" in runs_html(page["runs"])

        # Its owner, from any session naming them, sees both with their ids and fields.
        mine = runs_of(alice.predict("privacy-model", owner_token=ALICE_TOKEN, api_name="/model"), "privacy-model")
        assert {run["run_id"] for run in mine} == {running, finished} and not any(run["hidden"] for run in mine)
        assert next(run for run in mine if run["run_id"] == finished)["latency_mean_s"] is not None
        assert running in runs_html(mine)

        # Cancelled, it is still Alice's alone.
        alice.predict(running, owner_token=ALICE_TOKEN, api_name="/cancel_run")
        wait_for_status(app.context, running, ("cancelled",))
        assert running not in json.dumps(bob.predict("privacy-model", api_name="/model"))
    finally:
        app.server.latency = 0.0
        cancel_all(app.context, [running] if running else [])

    # Shared once finished: everyone sees it with its id.
    message, _ = alice.predict(finished, owner_token=ALICE_TOKEN, api_name="/share_run")
    assert "now shown to every visitor" in message
    shared = next(run for run in runs_of(bob.predict("privacy-model", api_name="/model"), "privacy-model")
                  if not run["hidden"])
    assert shared["run_id"] == finished and shared["source"] == "evaluated"


def refusals(client: Client, run_id: str, own: str) -> dict[str, str]:
    """Every refusal a visitor gets about `run_id` through the API, with the id written as <id>."""
    detail, report = client.predict(run_id, api_name="/job_detail")
    assert report is None
    found = {
        "cancel": client.predict(run_id, api_name="/cancel_run")[0],
        "resume": client.predict(run_id, "", api_name="/resume_run")[0],
        "rerun": client.predict(run_id, "", api_name="/rerun_errors")[0],
        "share": client.predict(run_id, api_name="/share_run")[0],
        "detail": detail,
        "sample": client.predict(run_id, "normal_atom_bool_0", "official", api_name="/sample"),
        "compare_sample": client.predict(own, run_id, "normal_atom_bool_0", "official", api_name="/compare_sample"),
    }
    samples = client.predict(run_id=run_id, api_name="/samples")
    compared = client.predict(own, run_id, api_name="/compare")
    found |= {"samples": samples.pop("count"), "compare": compared.pop("note"),
              "tables": json.dumps([samples, compared, client.predict(run_id=run_id, api_name="/sample_filters")])}
    return {name: plain(text).replace(run_id, "<id>") for name, text in found.items()}


@pytest.mark.slow
def test_another_visitors_run_is_refused_word_for_word_as_an_id_nobody_has(app: RunningApp):
    alice, bob = Client(app.url, verbose=False), Client(app.url, verbose=False)
    own = bob.predict(**public_form(app.server.base_url, "bobs-model", limit=3), api_name="/start_run")["run_id"]
    finished = started(alice, app, "unseen-model", limit=3)
    for run_id in (own, finished):
        assert wait_for_status(app.context, run_id, ("finished",)) == "finished"
    missing = refusals(bob, new_run_id(), own)
    assert "no run '<id>' here that you can see" in missing["cancel"]
    assert refusals(bob, finished, own) == missing  # finished, not shared

    app.server.latency = 1.0
    running = ""
    try:
        running = started(alice, app, "unseen-model", concurrency=1)
        wait_for_status(app.context, running, ("running",))
        assert refusals(bob, running, own) == missing  # running
        assert app.context.jobs.is_active(running)
    finally:
        app.server.latency = 0.0
        cancel_all(app.context, [running] if running else [])

    # A run Bob may see but not act on keeps its own reason.
    alice.predict(finished, owner_token=ALICE_TOKEN, api_name="/share_run")
    assert "started by another visitor: only they can cancel it" in bob.predict(finished, api_name="/cancel_run")[0]
    operators = app.context.store.create_run("acebench", "en", "operator-model", app.server.base_url,
                                             {"model": {"base_url": app.server.base_url}}, "f", 3)
    app.context.store.set_status(operators, "finished")
    assert "belongs to the operator" in bob.predict(operators, api_name="/cancel_run")[0]


def test_the_services_refuse_an_unseen_run_as_no_run_and_a_private_deployment_keeps_its_words(tmp_path: Path):
    public = AppServices(store=Store(tmp_path / "public" / "t.db"), public=True)
    private = AppServices(store=Store(tmp_path / "private" / "t.db"))
    try:
        alice, bob = (public.visitors.owner(token, None) for token in (ALICE_TOKEN, "bob-" + "b" * 30))
        theirs = public.store.create_run("acebench", "en", "m", "http://127.0.0.1:9/v1", {}, "f", 3, owner=alice)
        made_up = new_run_id()

        def refusal(call: Any, run_id: str) -> str:
            with pytest.raises(ToolboardError) as refused:
                call(run_id)
            return str(refused.value).replace(run_id, "<id>")

        for call in (lambda run_id: job_state(public, run_id, bob), lambda run_id: live_status(public, run_id, bob),
                     lambda run_id: act_on_run(public, "cancel", run_id, None, bob)):
            assert refusal(call, theirs) == refusal(call, made_up)
        assert live_status(public, theirs, alice) == "interrupted"  # hers: its status, no refusal
        with pytest.raises(ToolboardError) as refused:
            act_on_run(private, "cancel", "nope", None, None)
        assert str(refused.value) == "no run 'nope' here"
    finally:
        public.close()
        private.close()


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="needs Debian's chromium at /usr/bin/chromium")
def test_the_model_tab_shows_a_browsers_own_run_with_its_id_and_another_browser_without(tmp_path: Path):
    with public_app(tmp_path) as running, headless_chromium() as browser:
        pages = []
        for _ in range(2):  # each context its own storage: two visitors
            page = browser.new_context().new_page()
            page.set_default_timeout(TIMEOUT_MS)
            page.goto(running.url, wait_until="load")
            pages.append(page)
        owner, other = pages
        run_id = start_example_run(owner, running.server.base_url)
        wait_for_status(running.context, run_id, ("finished",))
        for page in pages:  # the deep link reads the browser's token
            goto(page, f"{running.url.rstrip('/')}/?model=browser-model", wait_until="load")
            page.locator(".model-page h3", has_text="Runs on this deployment (1)").first.wait_for()
        owner.locator(".model-card code", has_text=run_id).first.wait_for()
        shown = other.locator(".model-page", has_text="Runs on this deployment").first.inner_text()
        assert "ACEBench English" in shown and "finished" in shown and run_id not in shown
        assert run_id not in other.content()


@pytest.mark.slow
def test_a_public_board_names_an_unshared_run_by_a_reference_until_it_is_shared(app: RunningApp):
    """The board (its API, its downloads, the model page's rows) shows a visitor's finished run's scores, but
    names it by a reference until they share it; the charts still read its latency and error types."""
    from evaluators.core.registry import get_benchmark
    from ui import charts

    alice, bob = Client(app.url, verbose=False), Client(app.url, verbose=False)
    finished = started(alice, app, "board-privacy-model", limit=3)
    assert wait_for_status(app.context, finished, ("finished",)) == "finished"
    board = ("acebench", "", "board-privacy-model", ["published", "evaluated", "uploaded"], ["overall"], False,
             "official", "overall")
    seen = bob.predict(*board, api_name="/leaderboard")
    rows = [dict(zip(seen["headers"], row)) for row in seen["data"]]
    with open(bob.predict(*board, api_name="/download_csv"), encoding="utf-8") as handle:
        downloaded = handle.read()
    page = json.dumps(bob.predict("board-privacy-model", api_name="/model"))
    assert rows and all(row["run_id"].startswith("unshared-") for row in rows)
    for shown in (json.dumps(seen), downloaded, page):
        assert finished not in shown and finished[-6:] not in shown
    # The server's own reads still find the run: its latency chart has its point, its error types their bar.
    frame = app.context.board_frame("acebench", "official")
    ours = frame[frame["model"] == "board-privacy-model"]
    layout = get_benchmark("acebench").board_layout()
    latency = charts.accuracy_vs_cost(app.context.store, ours, layout, "latency", "t", resolve=app.context.board_run_id)
    assert len(latency.data) == 1 and len(latency.data[0].x) == len(ours)
    errors = charts.error_types(app.context.store, ours, "t", resolve=app.context.board_run_id)
    assert errors.data and finished[-6:] not in json.dumps(errors.to_plotly_json()["data"])
    # Shared, it is named by its id.
    alice.predict(finished, owner_token=ALICE_TOKEN, api_name="/share_run")
    again = bob.predict(*board, api_name="/leaderboard")
    assert {dict(zip(again["headers"], row))["run_id"] for row in again["data"]} == {finished}
