"""The board's events as any HTTP caller can send them: they skip Gradio's per-component checks (for speed under a
crowd), so the handlers check what arrives themselves. Real app, real HTTP to its direct-run route."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx
import pytest

from evaluators.core.registry import benchmark_names
from tests.app_fixtures import running_app
from ui.board_state import CONTROL_NAMES, controls_state, default_state, sent_controls


def no_facts(_benchmark: str, _mode: str) -> dict[str, list[str]]:
    return {"organisation": ["Acme"], "request_mode": []}


def test_values_of_the_wrong_shape_fall_back_to_the_defaults():
    garbage: tuple[Any, ...] = ({"x": 1}, ["a"], ["q"], "published", 7, "yes", None, 3.5, "Acme", {"open": True},
                                42, [1], {"b": 2}, "true")
    assert len(garbage) == len(CONTROL_NAMES)
    sent = sent_controls(garbage)
    assert sent[0] is None and sent[3] is None and sent[5] is None and sent[8] is None
    assert controls_state(garbage, no_facts) == default_state()
    # the shapes a page sends are kept: texts, lists of texts, yes/no, a size bound as a number
    state = controls_state((benchmark_names()[0], None, "qwen", ["published"], None, True, "official", "", ["Acme"],
                            "open", [], 7, "70", True), no_facts)
    assert (state.search, state.sources, state.details, state.organisations, state.weights, state.min_params_b,
            state.max_params_b, state.hide_flagged) == ("qwen", ("published",), True, ("Acme",), "open", 7.0, 70.0, True)
    # an older page's open-weights checkbox, and an overlong text cut before any check
    assert controls_state((None,) * 9 + (True,), no_facts).weights == "open"
    assert len(sent_controls(("x" * 50_000,))[0]) < 50_000


def board_switch(url: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The benchmark control's event (the one that numbers the page's redraws) and the app's components."""
    config = httpx.get(url.rstrip("/") + "/config", timeout=30).json()
    components = config["components"]
    by_id = {c["id"]: c for c in components}
    for dependency in config["dependencies"]:
        targets = [by_id.get(target) for target, _ in dependency["targets"]]
        if "toolboardBoardSeq" in (dependency.get("js") or "") and any(
                t and t["props"].get("label") == "Benchmark" for t in targets):
            return dependency, components
    raise AssertionError("no board event on the Benchmark control")


@pytest.mark.slow
def test_a_switch_sent_straight_over_http_is_answered_and_malformed_values_are_ignored(tmp_path: Path):
    with running_app(tmp_path) as app:
        dependency, components = board_switch(app.url)
        assert dependency["queue"] is False  # answered in the request: no queue join, no event stream
        by_id = {c["id"]: c for c in components}
        values = [by_id[i]["props"].get("value") for i in dependency["inputs"]]
        target = benchmark_names()[1]
        run = f"{app.url.rstrip('/')}/gradio_api/run/{dependency['api_name']}"

        def send(data: list[Any]) -> list[Any]:
            answer = httpx.post(run, json={"data": data, "fn_index": dependency["id"], "session_hash": "abcdefghijk",
                                           "event_data": {"index": 1, "value": target, "selected": True},
                                           "trigger_id": dependency["targets"][0][0]}, timeout=60)
            assert answer.status_code == 200, answer.text
            return answer.json()["data"]

        outputs = [by_id[i] for i in dependency["outputs"]]
        board = next(i for i, c in enumerate(outputs) if c["type"] == "html")
        # the typed boxes are not answered by a switch: the visitor may be typing in them
        assert "Search models" not in {c["props"].get("label") for c in outputs}
        good = send([target, *values[1:len(CONTROL_NAMES)], 1, *values[len(CONTROL_NAMES) + 1:]])
        assert len(good) == len(outputs)
        assert f'data-board-state="benchmark={target}"' in good[board]
        # every control of a wrong shape, and a chart choice that is no list: the first benchmark's default view
        bad = send([{"x": 1}, 5, ["q"], "all", 7, "yes", None, 3.5, "Acme", {"open": True}, 42, [1], {"b": 2}, "true",
                    2, {"kind": 1}, "not a list", "not a yes/no"])
        assert 'data-board-state=""' in bad[board]


def test_a_downloaded_view_s_file_box_goes_when_the_view_changes_in_a_browser(tmp_path: Path):
    """The download box shows the file of the view it was asked for, and never stays offering it for another view
    (a redraw hides it; the page says whether it shows a file)."""
    from tests.browser_fixtures import browser_page

    with running_app(tmp_path) as app, browser_page() as (page, problems):
        page.set_viewport_size({"width": 1440, "height": 900})
        page.goto(app.url, wait_until="load")
        page.locator(".board-html tbody tr").first.wait_for()
        page.get_by_role("button", name="Download CSV").click()
        link = page.get_by_text(re.compile(r"\.csv$")).filter(visible=True).first
        link.wait_for()
        page.get_by_label("Per-subset detail").check()
        page.locator('.board-html[data-board-state*="detail=1"]').wait_for()
        link.wait_for(state="hidden")
        # asked again, it comes back (for the view shown now)
        page.get_by_role("button", name="Download JSON").click()
        page.get_by_text(re.compile(r"\.json$")).filter(visible=True).first.wait_for()
        assert not [p for p in problems if "favicon" not in p], problems
