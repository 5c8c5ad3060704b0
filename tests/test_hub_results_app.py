"""Explore's "Hub eval results" for the operator (issue 46): the file a run's pull request would add, or why the run
cannot be exported, and the pull request itself, opened with the operator's HF_TOKEN read on the server.

The real app in this process (tests/app_fixtures.running_app) against the project's fake Hub (pointed_hub), through
gradio_client and in headless Chromium; the service's rules as plain calls. A run the board ranks is a finished
ACEBench run of the official experiment (finished_acebench_run), and ACEBench is given a Hub declaration here as in
tests/test_eval_results_export.py. On a public deployment (the app's flag or TOOLBOARD_PUBLIC) nothing of it is
shown or callable; on a private one without HF_TOKEN the panel is not shown and the pull request is refused."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from gradio_client import Client
from huggingface_hub import HfApi

from evaluators.core import registry
from evaluators.core.errors import ToolboardError
from evaluators.core.registry import get_benchmark
from evaluators.engine.store import Store
from evaluators.publish.eval_results import eval_result_file
from evaluators.service.hub_eval_results import (
    eval_results_preview,
    is_operator,
    offered_here,
    open_pr_as_operator,
)
from tests.app_fixtures import finished_acebench_run, running_app, upload
from tests.browser_fixtures import CHROMIUM, browser_page, keep_screenshot, open_tab
from tests.fake_hub_repo import FakeHubRepo, pointed_hub
from tests.layout_checks import describe, layout_problems
from tests.test_eval_results_export import HUB
from ui.app import build_app
from ui.context import AppContext
from ui.hub_results import OPEN_LABEL, PANEL_ID, REPO_LABEL

TOKEN = "hf_operator_secret_token_1234"
PANEL_TITLE = "Hub eval results"


@pytest.fixture
def declared(monkeypatch: pytest.MonkeyPatch) -> None:
    """ACEBench with a Hub declaration of one task (its board's normal_atom_bool accuracy)."""
    monkeypatch.setitem(registry._FOUND, "acebench", dataclasses.replace(get_benchmark("acebench"), hub=HUB))


@pytest.fixture
def private_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """A private deployment's environment: neither TOOLBOARD_PUBLIC nor a Space; no results dataset linked."""
    for name in ("TOOLBOARD_PUBLIC", "SPACE_ID", "TOOLBOARD_HUB_REPO", "HF_TOKEN"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def operator(private_env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_TOKEN", TOKEN)


@pytest.fixture
def hub(operator: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHubRepo]:
    with pointed_hub(tmp_path / "hub", monkeypatch, TOKEN) as server:
        HfApi(endpoint=server.endpoint, token=TOKEN).create_repo("org/my-model")
        yield server


def panel_shown(demo: Any) -> bool:
    labels = [component.get("props", {}).get("label") for component in demo.config["components"]]
    return PANEL_TITLE in labels and REPO_LABEL in labels


def api_names(demo: Any) -> set[str]:
    return {fn.api_name for fn in demo.fns.values() if fn.api_visibility != "private"}


# ---- the service's rules -----------------------------------------------------------------------------------------


def test_only_a_private_deployment_with_hf_token_is_the_operator(private_env: None, monkeypatch: pytest.MonkeyPatch,
                                                               tmp_path: Path):
    store = Store(tmp_path / "runs.db")
    run_id = finished_acebench_run(store, "m", 0.5)
    assert offered_here(False) and not is_operator(False)  # private, no token
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    assert is_operator(False) and not is_operator(True)
    monkeypatch.setenv("TOOLBOARD_PUBLIC", "1")  # the environment says public, whatever the app was built with
    assert not offered_here(False) and not is_operator(False)
    for public in (True, False):
        with pytest.raises(ToolboardError, match="not available on a public deployment"):
            eval_results_preview(store, run_id, public)
        with pytest.raises(ToolboardError, match="not available on a public deployment"):
            open_pr_as_operator(store, run_id, "org/my-model", public)
    monkeypatch.delenv("TOOLBOARD_PUBLIC")
    monkeypatch.setenv("SPACE_ID", "org/space")  # a Space is public unless TOOLBOARD_PUBLIC=0 says otherwise
    assert not offered_here(False)
    monkeypatch.setenv("TOOLBOARD_PUBLIC", "0")
    assert is_operator(False)


def test_a_pull_request_is_refused_without_the_token_or_a_repo_and_nothing_is_sent(private_env: None,
                                                                                   declared: None, tmp_path: Path,
                                                                                   monkeypatch: pytest.MonkeyPatch):
    store = Store(tmp_path / "runs.db")
    run_id = finished_acebench_run(store, "m", 0.5)
    assert "example-org/acebench" in eval_results_preview(store, run_id, False).text
    with pointed_hub(tmp_path / "hub", monkeypatch, TOKEN) as server:
        with pytest.raises(ToolboardError, match="needs the operator's Hugging Face token in HF_TOKEN"):
            open_pr_as_operator(store, run_id, "org/my-model", False)
        monkeypatch.setenv("HF_TOKEN", TOKEN)
        with pytest.raises(ToolboardError, match="Name the model repo"):
            open_pr_as_operator(store, run_id, "  ", False)
        with pytest.raises(ToolboardError, match="should look like 'org/name'"):
            open_pr_as_operator(store, run_id, "not-a-repo", False)
        with pytest.raises(ToolboardError, match="Pick a run"):
            open_pr_as_operator(store, "", "org/my-model", False)
        assert not [r for r in server.requests if r.method == "POST"]


# ---- the real app through gradio_client --------------------------------------------------------------------------


@pytest.mark.slow
def test_the_operator_opens_a_pull_request_through_the_api_and_refusals_say_why(hub: FakeHubRepo, declared: None,
                                                                               tmp_path: Path):
    with running_app(tmp_path / "app") as app:
        demo_store = app.context.store
        ranked = finished_acebench_run(demo_store, "ranked-model", 0.75)
        uploaded = upload(demo_store, "uploaded-model")
        client = Client(app.url, verbose=False)
        expected = eval_result_file(demo_store, ranked)
        shown = client.predict(ranked, api_name="/eval_results_file")
        assert shown == {"path_in_repo": expected.path, "yaml": expected.text}
        assert "value: 75.0" in shown["yaml"] and "example-org/acebench" in shown["yaml"]

        # an upload is not exported: the reason, through the API, and no request reaches the Hub
        posts_before = [r for r in hub.requests if r.method == "POST"]
        with pytest.raises(Exception, match="is an upload") as refused:
            client.predict(uploaded, "org/my-model", api_name="/open_eval_results_pr")
        assert TOKEN not in str(refused.value)
        with pytest.raises(Exception, match="is an upload"):
            client.predict(uploaded, api_name="/eval_results_file")
        assert [r for r in hub.requests if r.method == "POST"] == posts_before

        url = client.predict(ranked, "org/my-model", api_name="/open_eval_results_pr")
        assert url.endswith("/models/org/my-model/discussions/1")
        repo = hub.repos["models/org/my-model"]
        assert len(repo.pull_requests) == 1 and ranked in repo.pull_requests[0][1]
        assert repo.commits[repo.pull_requests[0][0]][expected.path] == expected.text.encode()
        assert all(request.authorization == f"Bearer {TOKEN}" for request in hub.requests
                   if request.method == "POST")  # the server's token, never one the caller gave

        # a repo the Hub does not have: one line naming it, never the token
        with pytest.raises(Exception, match="org/missing: the pull request could not be opened") as failed:
            client.predict(ranked, "org/missing", api_name="/open_eval_results_pr")
        assert TOKEN not in str(failed.value) and "\n" not in str(failed.value).strip()


@pytest.mark.slow
def test_the_panel_and_its_endpoints_are_the_operators_only(private_env: None, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    # public by the app's flag: no panel, no endpoint, a call is refused
    with running_app(tmp_path / "public", public=True) as app:
        demo = build_app(app.context)  # the same app built again, to read its config
        assert not panel_shown(demo)
        assert not {"eval_results_file", "open_eval_results_pr"} & api_names(demo)
        run_id = finished_acebench_run(app.context.store, "m", 0.5)
        client = Client(app.url, verbose=False)
        with pytest.raises(Exception, match="open_eval_results_pr"):
            client.predict(run_id, "org/my-model", api_name="/open_eval_results_pr")
    # public by the environment, though the app was built private
    for public_env, token, shown in (("1", TOKEN, False), ("0", TOKEN, True), ("0", "", False)):
        monkeypatch.setenv("TOOLBOARD_PUBLIC", public_env)
        monkeypatch.setenv("HF_TOKEN", token)
        context = AppContext(store=Store(tmp_path / f"env-{public_env}-{bool(token)}" / "toolboard.db"), public=False)
        try:
            demo = build_app(context)
            assert panel_shown(demo) is shown, (public_env, token)
            # declared wherever the deployment is private; without HF_TOKEN a pull request is refused (test above)
            assert ("open_eval_results_pr" in api_names(demo)) is (public_env == "0")
        finally:
            context.close()


@pytest.mark.slow
def test_without_hf_token_the_private_app_refuses_the_pull_request(private_env: None, declared: None,
                                                                 tmp_path: Path):
    with running_app(tmp_path / "app") as app:
        run_id = finished_acebench_run(app.context.store, "m", 0.5)
        client = Client(app.url, verbose=False)
        assert client.predict(run_id, api_name="/eval_results_file")["path_in_repo"] == ".eval_results/acebench_en.yaml"
        with pytest.raises(Exception, match="needs the operator's Hugging Face token in HF_TOKEN"):
            client.predict(run_id, "org/my-model", api_name="/open_eval_results_pr")


# ---- a real browser ----------------------------------------------------------------------------------------------


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="needs Debian's chromium at /usr/bin/chromium")
def test_the_operator_sees_the_yaml_and_opens_the_pull_request_in_a_browser(hub: FakeHubRepo, declared: None,
                                                                           tmp_path: Path):
    with running_app(tmp_path / "app") as app:
        upload(app.context.store, "uploaded-model")
        run_id = finished_acebench_run(app.context.store, "ranked-model", 0.75)  # the newest: chosen on load
        expected = eval_result_file(app.context.store, run_id)
        # A fresh page for each size: leaving a Gradio page aborts its open requests, which its console reports.
        for width, height, name in ((1440, 900, "desktop"), (390, 844, "phone")):
            with browser_page() as (page, problems):
                page.set_viewport_size({"width": width, "height": height})
                page.goto(app.url, wait_until="load")
                open_tab(page, "Explore")
                panel = page.locator(f"#{PANEL_ID}")
                # the newest run, chosen when the page loaded
                page.wait_for_function("(id) => [...document.querySelectorAll('input')].some(i => i.value.includes(id))",
                                       arg=run_id)
                assert run_id in page.get_by_label("Run", exact=True).input_value()
                yaml_block = panel.locator("pre.hub-eval-yaml")
                assert not yaml_block.is_visible()  # folded on arrival
                panel.get_by_text(PANEL_TITLE).first.click()
                yaml_block.wait_for()
                page.wait_for_function("(id) => document.querySelector('pre.hub-eval-yaml')?.innerText.includes(id)",
                                       arg=run_id)
                assert yaml_block.inner_text().strip() == expected.text.strip()
                assert expected.path in panel.inner_text()
                box = yaml_block.bounding_box()
                assert box is not None and box["x"] + box["width"] <= width, (name, box)
                keep_screenshot(panel, f"hub-eval-results-{name}")
                if name == "phone":
                    sideways = [describe(problem) for problem in layout_problems(page, phone=True)
                                if problem["kind"] == "page scrolls sideways"]
                    assert not sideways, sideways
                else:
                    panel.get_by_label(REPO_LABEL).fill("org/my-model")
                    panel.get_by_role("button", name=OPEN_LABEL).click()
                    opened = panel.get_by_text(re.compile("Pull request opened"))
                    opened.wait_for()
                    assert panel.locator("a", has_text="/models/org/my-model/discussions/1").count() == 1
                    keep_screenshot(panel, "hub-eval-results-opened")
                    repo = hub.repos["models/org/my-model"]
                    assert len(repo.pull_requests) == 1 and run_id in repo.pull_requests[0][1]
                    assert TOKEN not in page.content()
                    # another run (an upload): the reason instead of the YAML, the last pull request's line cleared
                    page.get_by_label("Run", exact=True).click()
                    page.get_by_role("option", name=re.compile("uploaded-model")).click()
                    panel.locator(".hub-eval-refused").get_by_text(re.compile("is an upload")).wait_for()
                    assert not opened.is_visible()
                assert not problems, "\n".join(problems)
