"""The app in a real headless Chromium (Debian's /usr/bin/chromium driven by playwright): load the
leaderboard, filter it, run a small evaluation against the scripted endpoint, upload a predictions
file, open one sample. Any page error or console error fails the test."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.app_fixtures import SECRET_KEY, running_app, wait_for_status
from tests.browser_fixtures import (
    CHROMIUM,
    assert_no_data_folders,
    browser_page,
    check_example_predictions,
    open_charts,
    open_tab,
    start_example_run,
)
from tests.scripted_server import ScriptedServer

pytestmark = pytest.mark.skipif(not Path(CHROMIUM).exists(),
                                reason="headless browser test needs Debian's chromium at /usr/bin/chromium (apt-get install chromium)")


def test_leaderboard_evaluate_submit_and_explore_in_a_browser(tmp_path: Path):
    with running_app(tmp_path) as app, browser_page() as (page, problems):
        page.goto(app.url, wait_until="load")  # the jobs timer keeps the network busy

        # Leaderboard: a published ACEBench row, then a server-side filter.
        board = page.locator(".board-html")
        page.get_by_text("GPT-4o", exact=True).first.wait_for()
        page.get_by_label("Search models").fill("Kimi")
        page.wait_for_function("() => !document.body.innerText.includes('GPT-4o')")
        assert "Kimi" in board.inner_text()
        open_charts(page)
        # Switching benchmark swaps the view, column and sort choices without an error toast.
        page.get_by_label("Search models").fill("")
        page.get_by_label("Benchmark").first.click()
        page.get_by_role("option", name="ToolBench-Static").click()  # the board lists benchmarks by title
        page.get_by_text("ChatGPT (0-shot)").first.wait_for()
        page.get_by_label("Benchmark").first.click()
        page.get_by_role("option", name="ACEBench", exact=True).click()
        page.get_by_text("GPT-4o", exact=True).first.wait_for()
        assert page.locator(".toast-body").count() == 0, page.locator(".toast-body").all_inner_texts()

        # Evaluate: a small run on the built-in example against the scripted endpoint.
        run_id = start_example_run(page, app.server.base_url, SECRET_KEY)
        wait_for_status(app.context, run_id, ("finished",))
        page.locator("text=finished >> visible=true").first.wait_for()  # the jobs panel, polled by its timer
        assert_no_data_folders(page, app)  # the run's request note on Evaluate and in the jobs panel
        # The form shows the chosen benchmark's roles and options only: another's boxes appear, this one's go.
        page.get_by_label("Benchmark").filter(visible=True).first.click()
        page.get_by_role("option", name="StepEval-Audio-Toolcall").click()
        page.get_by_text(re.compile("^Parameter judge")).filter(visible=True).first.wait_for()
        page.get_by_text(re.compile("^Modality: ")).filter(visible=True).first.wait_for()
        page.get_by_text(re.compile("^Simulated user")).filter(visible=True).first.wait_for(state="detached")
        page.get_by_label("Benchmark").filter(visible=True).first.click()
        page.get_by_role("option", name="ACEBench", exact=True).click()
        page.get_by_text(re.compile("^Simulated user")).filter(visible=True).first.wait_for()

        # Submit: upload the example's predictions and see the score.
        open_tab(page, "Submit")
        check_example_predictions(page)
        page.locator("text=61.7 >> visible=true").first.wait_for()  # the overall score in the report

        # Explore: the run's samples and one sample's evidence.
        open_tab(page, "Explore")
        page.get_by_role("button", name="Reload runs").click()
        page.get_by_text(re.compile(r"^\d+ samples$")).wait_for()
        page.get_by_label("Sample id").fill("normal_atom_bool_0")
        page.get_by_label("Sample id").press("Enter")
        page.get_by_text("Gold answer").wait_for()
        # evidence first: the model's answer and the gold answer open, above the prompt and tool docs, which are
        # folded (printed once, one click away)
        answer, given = page.locator("#explore-answer"), page.locator("#explore-given")
        assert answer.bounding_box()["y"] < page.locator("#explore-gold").bounding_box()["y"] < given.bounding_box()["y"]
        assert given.get_attribute("open") is None and not page.locator("h4", has_text="Prompt messages").is_visible()
        given.locator("summary").click()
        # the sample's detail with the run's request profile (a private app shows request errors with their paths)
        profile = page.locator("h4", has_text="Request profile of the run")
        profile.wait_for()
        assert page.locator("h4", has_text="Prompt messages").count() == 1
        assert_no_data_folders(page, app, within=profile.locator("xpath=.."))

        html = page.content()
    assert SECRET_KEY not in html
    assert SECRET_KEY.encode() not in app.db_path.read_bytes()
    assert not problems, "\n".join(problems)


def _refusal_on_page(page: Any, base_url: str) -> Any:
    """Start a run of the built-in example to `base_url` from the Evaluate form; the refusal's Markdown block."""
    page.get_by_label("Endpoint base URL").fill(base_url)
    page.get_by_label("Model", exact=True).fill("some_model")
    page.get_by_label("built-in example").first.check()
    page.get_by_role("button", name="Start evaluation").click()
    refusal = page.locator(".prose", has_text=re.compile("nothing was started|expected an http")).first
    refusal.wait_for()
    return refusal


def _links(block: Any) -> list[str]:
    return block.locator("a").evaluate_all("links => links.map(link => link.getAttribute('href'))")


def test_a_refusal_reads_as_written_and_links_nowhere_wrong(tmp_path: Path):
    """Refusals show their text exactly as written (no Markdown escapes) and a URL in them is plain text or
    a link to that very URL: a dead port, then a base URL the form refuses with an example URL."""
    with running_app(tmp_path) as app, browser_page() as (page, problems):
        with ScriptedServer() as dead:
            dead_url = dead.base_url  # closed on leaving: nothing listens there any more
        port = dead_url.split(":")[2].split("/")[0]
        page.goto(app.url)
        open_tab(page, "Evaluate")
        refusal = _refusal_on_page(page, dead_url)
        shown = refusal.inner_text()
        assert "\\" not in shown and f"connection refused by 127.0.0.1:{port}" in shown, shown
        assert _links(refusal) == []

        _refusal_on_page(page, "ftp://h.example/v1")
        refusal = page.locator(".prose", has_text="has scheme 'ftp'").first
        refusal.wait_for()
        shown = refusal.inner_text()
        assert "\\" not in shown, shown
        assert "expected an http:// or https:// URL such as https://api.example.com/v1" in shown, shown
        assert all(href == "https://api.example.com/v1" for href in _links(refusal)), _links(refusal)
        assert app.context.store.list_runs() == []
        assert not problems, problems


def _demo_offers(url: str) -> tuple[int, int, str]:
    """(Demo buttons shown, local model choices shown, the Evaluate tab's text) of the page at `url`."""
    with browser_page() as (page, problems):
        page.goto(url)
        open_tab(page, "Evaluate")
        page.get_by_role("button", name="Start evaluation").wait_for()
        demo = page.get_by_role("button", name=re.compile("^Demo: ")).filter(visible=True).count()
        local = page.get_by_role("radio", name=re.compile("^Local demo model")).filter(visible=True).count()
        text = page.locator("body").inner_text()
        assert not problems, problems
    return demo, local, text


def test_the_demo_is_offered_only_where_the_local_model_works(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Where the local model works (its installation check, asked when the app is built, finds nothing missing),
    the Demo button and the choice are there. Where it does not (a venv of requirements-dev.txt only), neither is,
    and no pip command is shown. Both cases are set by the check's answer, so the test holds whether or not this
    machine has the extra (requirements-local.txt) installed; the form asks that very check."""
    import ui.run_form
    from evaluators.engine.local_model import installed_problem

    assert ui.run_form.local_model_works() == (installed_problem() is None)
    monkeypatch.setattr(ui.run_form, "installed_problem", lambda *_: None)
    with running_app(tmp_path / "installed") as app:
        demo, local, _ = _demo_offers(app.url)
    assert (demo, local) == (1, 1)

    monkeypatch.setattr(ui.run_form, "installed_problem", lambda *_: "llama-cpp-python is not installed; pip install …")
    with running_app(tmp_path / "missing", public=True) as app:
        demo, local, text = _demo_offers(app.url)
    assert (demo, local) == (0, 0)
    assert "pip" not in text and "llama" not in text.lower(), text
