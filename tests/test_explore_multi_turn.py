"""Explore's view of a multi-turn item (issue 30): a transcript of turns, each with its user query, its steps (model
text, decoded calls, execution results) and what changed in the environments' state during the turn (a diff, not
the whole state); the turn of the first failed check marked with the failing check, its differences and missing
items. All model text escaped. Built on a stored verdict in the contract's shape (no real data, no rollout)."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from evaluators.benchmarks.bfcl.multi_turn.evidence import MULTI_TURN_EVIDENCE
from evaluators.core import registry
from evaluators.core.registry import get_benchmark
from evaluators.core.state_diff import ADDED, CHANGED, REMOVED, StateChange, state_diff
from evaluators.core.types import Prediction, Report, SampleScore, SubsetResult
from evaluators.engine.settings import ModelSettings, RunConfig
from evaluators.engine.store import Evidence, Store
from evaluators.service.explore import sample_evidence
from tests.app_fixtures import running_app
from tests.browser_fixtures import CHROMIUM, browser_page, keep_screenshot, open_tab
from tests.layout_checks import describe, layout_problems
from ui.explore_tab import evidence_parts
from ui.rollout_view import is_rollout, rollout_html

SAMPLE_ID = "multi_turn_base_7"
HOSTILE = "<script>alert(1)</script>"

INITIAL_STATE: dict[str, Any] = {
    "GorillaFileSystem": {"root": {"name": "alex", "contents": {
        "workspace": {"name": "workspace", "contents": {"log.txt": {"name": "log.txt", "content": "first line"}}}}}},
    "TicketAPI": {"ticket_queue": [], "ticket_counter": 0, "current_user": None},
}
AFTER_FILE = {**INITIAL_STATE, "GorillaFileSystem": {"root": {"name": "alex", "contents": {"workspace": {
    "name": "workspace", "contents": {"log.txt": {"name": "log.txt", "content": "first line"},
                                      "summary.txt": {"name": "summary.txt", "content": "<b>bold</b> & done"}}}}}}}
TICKET = {"id": 1, "title": "summary", "priority": 2, "status": "Open"}
AFTER_TICKET = {**AFTER_FILE, "TicketAPI": {"ticket_queue": [TICKET], "ticket_counter": 1, "current_user": "alex"}}

TRANSCRIPT: list[dict[str, Any]] = [
    {"query": [{"role": "user", "content": "Go to the workspace and list what it holds."}],
     "steps": [{"text": "[cd(folder='workspace'), ls()]", "calls": ["cd(folder='workspace')", "ls()"], "decode_error": None,
                "results": ['{"current_working_directory": "workspace"}', '{"current_directory_content": ["log.txt"]}']},
               {"text": "The workspace holds log.txt.", "calls": None, "decode_error": "no function call in the text",
                "results": []}],
     "state": INITIAL_STATE},
    {"query": [{"role": "user", "content": "Write '<b>bold</b> & done' into a new summary.txt."}],
     "steps": [{"text": f"[touch(file_name='summary.txt'), echo(content='<b>bold</b> & done', file_name='summary.txt')] {HOSTILE}",
                "calls": ["touch(file_name='summary.txt')", "echo(content='<b>bold</b> & done', file_name='summary.txt')"],
                "decode_error": None, "results": ["None", "None"]},
               {"text": "Done.", "calls": [], "decode_error": None, "results": []}],
     "state": AFTER_FILE},
    {"query": [{"role": "user", "content": "Open a ticket titled summary, priority 3."}],
     "steps": [{"text": "[create_ticket(title='summary', priority=2)]", "calls": ["create_ticket(title='summary', priority=2)"],
                "decode_error": None, "results": ['{"id": 1, "title": "summary", "priority": 2, "status": "Open"}']},
               {"text": "Ticket 1 is open.", "calls": None, "decode_error": "no function call in the text", "results": []}],
     "state": AFTER_TICKET},
]
TURNS = [[step["text"] for step in turn["steps"]] for turn in TRANSCRIPT]
DIFFERENCES = {"ticket_queue": {"model": [TICKET], "ground_truth": [{**TICKET, "priority": 3}]}}
CHECKER_DETAIL = "Model instance for TicketAPI does not match the state with ground truth instance."
GROUND_TRUTH_LAST = {**AFTER_TICKET, "TicketAPI": {**AFTER_TICKET["TicketAPI"], "ticket_queue": [{**TICKET, "priority": 3}]}}
TURN_STATES = [{"model": INITIAL_STATE, "ground_truth": INITIAL_STATE}, {"model": AFTER_FILE, "ground_truth": AFTER_FILE},
               {"model": AFTER_TICKET, "ground_truth": GROUND_TRUTH_LAST}]


def _prediction() -> Prediction:
    return Prediction(SAMPLE_ID, latency=3.5, usage={"prompt_tokens": 900, "completion_tokens": 60},
                      extra={"turns": TURNS, "transcript": TRANSCRIPT, "initial_state": INITIAL_STATE, "stop": "completed"})


def _score() -> SampleScore:
    return SampleScore(SAMPLE_ID, "multi_turn_base", False, error_type="multi_turn:instance_state_mismatch",
                       rule="official_multi_turn_state_check", detail=CHECKER_DETAIL,
                       metadata={"failed_turn": 2, "differences": DIFFERENCES, "missing_items": None,
                                 "turn_states": TURN_STATES})


@pytest.fixture
def declared(monkeypatch: pytest.MonkeyPatch) -> None:
    """The benchmark declares the multi-turn evidence kinds (its benchmark.py does once the lead adds them)."""
    benchmark = get_benchmark("bfcl")
    if not any(kind.render == "rollout" for kind in benchmark.evidence):
        monkeypatch.setitem(registry._FOUND, "bfcl", replace(benchmark, evidence=(*benchmark.evidence, *MULTI_TURN_EVIDENCE)))


# ---- the state diff ---------------------------------------------------------------------------------------


def test_the_state_diff_lists_paths_added_removed_and_changed_not_the_whole_state():
    assert state_diff(INITIAL_STATE, INITIAL_STATE) == []
    assert state_diff(INITIAL_STATE, AFTER_FILE) == [
        StateChange(ADDED, 'GorillaFileSystem.root.contents.workspace.contents["summary.txt"]',
                    after={"name": "summary.txt", "content": "<b>bold</b> & done"})]
    assert state_diff(AFTER_FILE, AFTER_TICKET) == [
        StateChange(ADDED, "TicketAPI.ticket_queue[0]", after=TICKET),
        StateChange(CHANGED, "TicketAPI.ticket_counter", before=0, after=1),
        StateChange(CHANGED, "TicketAPI.current_user", before=None, after="alex")]
    assert state_diff(AFTER_TICKET, AFTER_FILE)[0] == StateChange(REMOVED, "TicketAPI.ticket_queue[0]", before=TICKET)


def test_the_state_diff_aligns_lists_and_looks_inside_changed_items():
    inbox = [{"from": "a", "read": False}, {"from": "b", "read": False}]
    # a message put in front is one addition; a message marked read is one changed field, at its new index
    assert state_diff({"inbox": inbox}, {"inbox": [{"from": "z", "read": False}, inbox[0], {"from": "b", "read": True}]}) == [
        StateChange(ADDED, "inbox[0]", after={"from": "z", "read": False}),
        StateChange(CHANGED, "inbox[2].read", before=False, after=True)]
    assert state_diff({"watch": ["NVDA", "AAPL"]}, {"watch": ["AAPL"]}) == [StateChange(REMOVED, "watch[0]", before="NVDA")]
    assert state_diff({"a": 1}, {"a": 1.0}) == [] and state_diff({"a": 1}, {"a": 2}) == [
        StateChange(CHANGED, "a", before=1, after=2)]
    assert state_diff({"a": {"b": 1}}, {"a": "gone"}) == [StateChange(CHANGED, "a", before={"b": 1}, after="gone")]
    assert state_diff([1], {"x": 1}) == [StateChange(CHANGED, "", before=[1], after={"x": 1})]
    assert state_diff({"odd key/ü": 1}, {}) == [StateChange(REMOVED, '["odd key/ü"]', before=1)]


# ---- the rendered transcript ------------------------------------------------------------------------------


def _turn_blocks(page: str) -> list[str]:
    return re.findall(r"<div class='rollout-turn[^']*' data-turn='\d+'.*?(?=<div class='rollout-turn|</div>$)", page, re.S)


def test_a_rollout_shows_each_turns_steps_and_state_changes_and_marks_the_failed_turn():
    page = rollout_html("Transcript", TRANSCRIPT, INITIAL_STATE, failed_turn=2, differences=DIFFERENCES,
                        missing_items=["{'id': 1}"], failure_note=CHECKER_DETAIL)
    assert HOSTILE not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "<b>bold</b> &" not in page
    assert page.count("class='rollout-turn") == 3 and page.count("rollout-turn-failed") == 1
    assert "data-turn='2' style='border-left:4px solid #dc2626" in page
    turn0, turn1, turn2 = _turn_blocks(page)
    assert "Go to the workspace" in turn0 and "<code>ls()</code>" in turn0 and "State changes</b>: none" in turn0
    assert "current_directory_content" in turn0 and "Not decoded into calls" in turn0
    # only what changed, never the whole state: the file added in turn 1, the ticket in turn 2
    assert "summary.txt" in turn1 and "log.txt" not in turn1 and "No call: the turn ends" in turn1
    assert "TicketAPI.ticket_queue[0]" in turn2 and "TicketAPI.ticket_counter" in turn2 and "log.txt" not in turn2
    assert "first failed check" in turn2 and "first failed check" not in turn0 + turn1
    assert CHECKER_DETAIL in turn2 and "ticket_queue[0].priority" in turn2 and "{&#x27;id&#x27;: 1}" in turn2
    assert "<summary>State before the first turn</summary>" in page


def test_an_uploaded_rollout_of_texts_only_is_shown_with_its_failed_turn():
    page = rollout_html("Model text", TURNS, failed_turn=1, failure_note="Model response list is empty for turn 1")
    assert page.count("class='rollout-turn") == 3 and "data-turn='1' style='border-left:4px solid #dc2626" in page
    assert "Only the model's text was kept" in page and "State changes" not in page
    assert page.count("The state after this turn was not kept") == 3


def test_the_states_the_checker_compared_stand_in_for_states_a_rollout_did_not_keep():
    page = rollout_html("Model text", TURNS, failed_turn=2, differences=DIFFERENCES, turn_states=TURN_STATES)
    turn0, turn1, turn2 = _turn_blocks(page)
    assert "no earlier state kept" in turn0  # no initial state in an upload: the first turn's state whole, folded
    assert "summary.txt" in turn1 and "State changes</b> (1)" in turn1
    assert "TicketAPI.ticket_queue[0]" in turn2 and "log.txt" not in turn2.split("<details>")[0]
    assert page.count("<summary>States the checker compared after this turn (model, ground truth)</summary>") == 3
    assert is_rollout(TURNS) and is_rollout(TRANSCRIPT) and not is_rollout("Error during inference: x")
    assert not is_rollout([]) and not is_rollout([["a", 1]])


def test_a_failure_outside_the_transcripts_turns_is_still_shown():
    page = rollout_html("Transcript", TRANSCRIPT[:1], None, failed_turn=3, missing_items=["42"])
    assert "rollout-turn-failed" not in page and "turn 3, which this rollout does not hold" in page and "42" in page
    assert "no earlier state kept" in page  # no initial state: the first turn's state shown whole, folded


def test_the_evidence_a_rollout_shows_inside_it_is_not_shown_again(declared: None):
    items = sample_evidence("bfcl", _prediction(), _score())
    assert [item["key"] for item in items] == ["transcript", "turns", "stop", "initial_state", "failed_turn",
                                              "differences", "turn_states"]
    blocks = evidence_parts(items, CHECKER_DETAIL)
    assert len(blocks) == 3 and blocks[0].startswith("<div class='rollout'>")
    assert "rollout-turn" not in "".join(blocks[1:])  # the raw turns as JSON, after the rollout
    assert [re.search(r"<h4>(.*?)</h4>", block).group(1) for block in blocks[1:]] == [
        "Model text per turn and step (what is scored)", "Why the rollout stopped"]
    assert blocks[0].count("States the checker compared after this turn") == 3
    # an upload's prediction has only the turns: they are the rollout
    uploaded = sample_evidence("bfcl", Prediction(SAMPLE_ID, extra={"turns": TURNS}), _score())
    shown = evidence_parts(uploaded, CHECKER_DETAIL)
    assert shown[0].count("rollout-turn-failed") == 1 and "Only the model" in shown[0]


# ---- in a browser -----------------------------------------------------------------------------------------


def store_multi_turn_run(store: Store) -> str:
    """A finished run holding one multi-turn verdict in the contract's shape."""
    config = RunConfig(benchmark="bfcl", model=ModelSettings(base_url="http://127.0.0.1:9/v1", model="mt-model",
                                                             api_key_env=""), subsets=("multi_turn_base",))
    run_id = store.create_run("bfcl", None, "mt-model", config.model.base_url, config.to_json(), "mt-fingerprint", 1)
    store.save_batch(run_id, [], [("multi_turn_base", _prediction(), 1,
                                   Evidence(gold=[["cd(folder='workspace')", "ls()"], [], []],
                                            request={"requests": 6, "body": {"messages": []}}))])
    for mode in ("official", "strict"):
        report = Report("bfcl", mode, {"multi_turn_base": SubsetResult(1, {"accuracy": 0.0})}, {}, {})
        store.save_scores(run_id, mode, [_score()], report)
    store.set_status(run_id, "finished")
    return run_id


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="needs Debian's chromium at /usr/bin/chromium")
def test_explore_shows_a_multi_turn_item_as_a_transcript_with_state_diffs_and_the_failed_turn(
        declared: None, tmp_path: Path):
    # A fresh page for each size: leaving a Gradio page aborts its open requests, which its console reports.
    with running_app(tmp_path) as app:
        store_multi_turn_run(app.context.store)
        for width, height, name in ((1440, 900, "desktop"), (390, 844, "phone")):
            with browser_page() as (page, problems):
                page.set_viewport_size({"width": width, "height": height})
                page.goto(app.url, wait_until="load")
                open_tab(page, "Explore")
                page.get_by_text("1 samples", exact=True).wait_for()
                page.get_by_label("Sample id").fill(SAMPLE_ID)
                page.get_by_label("Sample id").press("Enter")
                failed = page.locator(".rollout-turn-failed")
                failed.wait_for()
                turns = page.locator(".rollout-turn")
                assert turns.count() == 3 and failed.get_attribute("data-turn") == "2"
                # the transcript: queries, steps, calls with their results, each turn's changes
                assert "Go to the workspace" in turns.nth(0).inner_text() and "ls()" in turns.nth(0).inner_text()
                assert 'summary.txt' in turns.nth(1).inner_text() and "log.txt" not in turns.nth(1).inner_text()
                assert HOSTILE in turns.nth(1).inner_text()  # shown as text, never run
                failed_text = failed.inner_text()
                assert "TicketAPI.ticket_queue[0]" in failed_text and "first failed check" in failed_text
                assert CHECKER_DETAIL in failed_text and "ticket_queue[0].priority" in failed_text
                failed.scroll_into_view_if_needed()
                keep_screenshot(page, f"mtexplore-{name}")
                keep_screenshot(page.locator(".rollout"), f"mtexplore-{name}-rollout")
                box = page.locator(".rollout").bounding_box()
                assert box is not None and box["x"] + box["width"] <= width, (name, box)
                if name == "phone":
                    sideways = [describe(problem) for problem in layout_problems(page, phone=True)
                                if problem["kind"] == "page scrolls sideways"]
                    assert not sideways, sideways
                assert "<script>alert(1)" not in page.content()
                assert not problems, "\n".join(problems)


def test_everything_in_a_rollout_is_escaped():
    hostile = "<img src=x onerror=alert(1)>"
    turn = {"query": [{"role": hostile, "content": hostile}], "state": {"Files": {hostile: hostile}},
            "steps": [{"text": hostile, "calls": [hostile], "decode_error": hostile, "results": [hostile]}]}
    page = rollout_html(hostile, [turn], {"Files": {}}, failed_turn=0, differences={hostile: {"model": hostile,
                        "ground_truth": 1}}, missing_items=[hostile], turn_states=[{hostile: hostile}], failure_note=hostile)
    assert hostile not in page and page.count("&lt;img src=x onerror=alert(1)&gt;") >= 10
