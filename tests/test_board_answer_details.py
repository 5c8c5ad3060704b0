"""Issue 42's smaller things, each as a visitor met it: a binary upload is told what it is, a cached run does not
say "0.0 requests/s", a table of one row says "1 row", a clean check clears the last Add's warning, a download is
one click and named for its view, a phone's jobs table keeps the benchmark (tests/test_jobs_table_browser.py), and a
syntax error is said once (tests/test_call_literals.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from evaluators.core.errors import PredictionsError
from evaluators.core.predictions import not_text_reason, read_rows
from evaluators.service.board import board_rows, layout_for
from tests.app_fixtures import running_app
from tests.browser_fixtures import CHROMIUM, add_answer, browser_page, check_example_predictions, open_tab
from ui.board_html import shown_columns, table_html
from ui.board_state import default_state
from ui.jobs_panel import pace_text

PNG_START = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"


@pytest.mark.parametrize(("start", "said"), [
    (PNG_START + bytes(range(256)), r"not a text file: .* first bytes \(0x89 0x50 0x4e 0x47\) are binary"),
    (b"%PDF-1.7\n" + bytes(range(128, 256)) * 4, r"not a text file: .*\(0x25 0x50 0x44 0x46\)"),
    ('{"id": "a", "output": "[]"}\n'.encode("utf-16"), r"not a UTF-8 text file: it looks like UTF-16 .* save it as UTF-8"),
], ids=["png", "pdf", "utf-16"])
def test_a_binary_file_is_told_what_it_is_not_that_no_prediction_matched(tmp_path: Path, start: bytes, said: str):
    path = tmp_path / "predictions.jsonl"
    path.write_bytes(start)
    with pytest.raises(PredictionsError, match=said):
        read_rows(path, keep_unreadable=True)


def test_a_text_file_with_one_bad_line_is_still_read_line_by_line():
    lines = b'{"id": "a", "output": "[]"}\n' * 50 + b"\xff\xfe broken line\n"
    assert not_text_reason(lines) is None
    assert not_text_reason(b"") is None


def test_a_run_answered_from_the_cache_says_so_instead_of_a_rate_of_zero():
    assert pace_text({"requests": 0, "done_now": 20, "requests_per_s": 0.0}) == \
        "no request sent (answers from the response cache)"
    assert pace_text({"requests": 40, "done_now": 20, "requests_per_s": 3.14}) == "3.1 requests/s"
    assert pace_text({"requests_per_s": 0.0}) == "0.0 requests/s"  # nothing done yet: the rate as it is


def test_a_table_of_one_row_says_one_row():
    frame = board_rows("bfcl", None).head(1)
    layout = layout_for("bfcl")
    state = default_state()
    ranked = frame.assign(rank=pd.array([1], dtype="Int64"))
    one = table_html(ranked, layout, state, shown_columns(ranked, layout, state), True)
    assert "· 1 row</caption>" in one


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"no Chromium at {CHROMIUM} (apt-get install chromium)")
def test_a_clean_check_clears_the_last_adds_warning_and_a_download_is_one_click(tmp_path: Path):
    with running_app(tmp_path) as app, browser_page() as (page, problems):
        page.goto(f"{app.url}?benchmark=acebench", wait_until="load")
        page.locator(".board-ranked").first.wait_for()
        # one click saves the view's file, named for what it holds
        with page.expect_download() as saved:
            page.get_by_role("button", name="Download CSV").click()
        assert saved.value.suggested_filename == "leaderboard-acebench-en-official.csv"
        open_tab(page, "Submit")
        check_example_predictions(page)
        page.get_by_role("button", name="Add to leaderboard").click()  # no name yet: a warning
        add_answer(page, "give the model a name")
        page.get_by_role("button", name="Check and score").click()  # the same file, checked again: clean
        answer = page.locator("#submit-added")
        page.wait_for_function("!document.querySelector('#submit-added').innerText.includes('give the model a name')")
        assert not re.search("give the model a name", answer.inner_text())
    assert not [p for p in problems if "favicon" not in p], problems


def test_a_multi_turn_verdict_without_deviations_shows_no_empty_deviations():
    from evaluators.benchmarks.bfcl.multi_turn.checker import verdict_of_result
    from evaluators.core.types import Sample
    from ui.format import escaped_block

    sample = Sample("multi_turn_base_0", "multi_turn_base", {}, [])
    passed = {"valid": True, "failed_turn": None, "differences": None, "missing_items": None, "turn_states": None,
              "deviations": {}}
    assert "deviations" not in verdict_of_result(sample, passed, []).metadata
    met = verdict_of_result(sample, {**passed, "deviations": {"deviation_unsupported_expression": 1}}, [])
    assert met.metadata["deviations"] == {"deviation_unsupported_expression": 1}
    assert escaped_block("Per-sample metrics", {}) == ""


def test_per_subset_detail_says_why_published_rows_have_no_subset_figures():
    from dataclasses import replace

    from evaluators.service.board import BoardQuery, query_board
    from ui.board_html import NO_DETAIL_FIGURES, board_html

    state = replace(default_state("acebench"), details=True)
    frame = query_board(board_rows("acebench", None), layout_for("acebench"), BoardQuery(view="en", details=True))
    assert NO_DETAIL_FIGURES in board_html(frame, state, "benchmark=acebench")
    assert NO_DETAIL_FIGURES not in board_html(frame, replace(state, details=False), "benchmark=acebench")


def test_a_board_says_when_its_published_rows_rank_without_intervals():
    from evaluators.service.board import BoardQuery, query_board
    from ui.board_html import NO_PUBLISHED_INTERVALS, board_html

    def shown(benchmark: str, view: str) -> str:
        frame = query_board(board_rows(benchmark, None), layout_for(benchmark), BoardQuery(view=view))
        return board_html(frame, default_state(benchmark), f"benchmark={benchmark}")

    said = NO_PUBLISHED_INTERVALS.split("{column}")[0]
    assert said in shown("stepeval_audio", "macro") and "no interval for Precision" in shown("stepeval_audio", "macro")
    assert said not in shown("acebench", "en") and said not in shown("bfcl", "all")
