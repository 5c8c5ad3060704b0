"""BFCL in the About tab and the Overview declaration: the text is built from the package's declaration; the
declaration holds whether or not the four multi-turn categories are among the subsets yet."""

from __future__ import annotations

import subprocess
import sys

import pytest

from evaluators.benchmarks.bfcl.benchmark import ABOUT, BENCHMARK
from evaluators.core.declarations import Overview
from tests.conftest import PROJECT
from ui.about_tab import about_text


def test_the_about_tab_shows_bfcls_declaration():
    text = about_text()
    assert f"**{BENCHMARK.title}** (`bfcl`" in text
    assert ABOUT.measures in text
    assert "13 categories" in ABOUT.measures and "4 categories of 200 conversations" in ABOUT.measures
    for category in ("*Base*", "*missing function*", "*missing parameter*", "*long context*"):
        assert category in ABOUT.measures
    assert "**Multi Turn** = mean of the four multi-turn categories" in ABOUT.measures
    assert "*Overall* = 10% Non-Live AST + 10% Live AST + 10% Irrelevance + 30% Multi Turn + 40%" in ABOUT.measures
    assert "names the parts it lacks" in ABOUT.measures
    assert "**Format sensitivity** (the official non-scoring category, outside every summary and Overall)" in \
        ABOUT.measures and "run only when named" in ABOUT.measures
    # the agentic categories: played, memory after its prerequisite conversations (vector with an optional extra)
    assert "**Agentic**, 5 categories" in ABOUT.measures and "prerequisite conversations" in ABOUT.measures
    assert "323 user turns per backend" in ABOUT.measures and "optional extra" in ABOUT.measures
    assert "not built yet" not in ABOUT.measures and "not run here" not in ABOUT.measures
    assert "native-tools mode" in ABOUT.measures
    assert f"for {BENCHMARK.title}: {ABOUT.strict_fixes}" in text
    assert "double-brace HashMaps" in ABOUT.strict_fixes and "nested object and array literals" in ABOUT.strict_fixes
    assert "missing-function or missing-parameter turn" in ABOUT.strict_fixes
    assert f"- {BENCHMARK.title}: {ABOUT.data}" in text and "licence: Apache-2.0" in text
    assert "leaderboard_data/bfcl.json" in text and ABOUT.citation in text
    assert "single-turn" not in BENCHMARK.title and "multi-turn" in BENCHMARK.description


def test_the_overview_reads_overall_the_official_headline():
    assert BENCHMARK.overview == Overview("all", ("overall", "non_live_ast", "live_ast"), "overall", BENCHMARK.overview.why)


def test_the_board_has_the_multi_turn_and_overall_columns_as_published():
    layout = BENCHMARK.board_layout()
    assert layout.columns == ("overall", "non_live_ast", "live_ast", "multi_turn", "agentic", "web_search", "memory",
                              "irrelevance_detection", "relevance_detection", "non_live_simple_ast")
    assert layout.detail_columns[-11:-7] == ("multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param",
                                             "multi_turn_long_context")
    assert layout.detail_columns[-7:-2] == ("memory_kv", "memory_vector", "memory_rec_sum", "web_search_base",
                                            "web_search_no_snippet")
    # format sensitivity's two statistics, last (as the official overall table has them), outside Overall
    assert layout.detail_columns[-2:] == ("format_sensitivity_max_delta", "format_sensitivity_std")
    assert not BENCHMARK.metric("format_sensitivity_max_delta").higher_is_better
    assert (layout.labels["overall"], layout.labels["multi_turn"]) == ("Overall", "Multi Turn")
    assert layout.default_sort == "overall"
    assert BENCHMARK.metric("multi_turn").share_of_items and not BENCHMARK.metric("overall").share_of_items


# Run in a fresh interpreter: the declaration read with categories.CATEGORIES as it is, and with the four
# multi-turn categories added to it (as they will be), before anything imports it.
DECLARATION_CHECK = """
import sys
import evaluators.benchmarks.bfcl.categories as categories
if sys.argv[1] == "with":
    categories.CATEGORIES = tuple(dict.fromkeys(categories.SINGLE_TURN + categories.MULTI_TURN + categories.AGENTIC
                                                + (categories.FORMAT_SENSITIVITY,)))
from evaluators.benchmarks.bfcl.benchmark import BENCHMARK
multi = categories.MULTI_TURN
assert BENCHMARK.groups["ast"] == tuple(c for c in categories.SINGLE_TURN if c not in categories.NO_ANSWER)
assert BENCHMARK.board_layout().detail_columns[-11:-7] == multi
assert BENCHMARK.board_layout().detail_columns[-7:-2] == categories.AGENTIC
if sys.argv[1] == "with":
    assert BENCHMARK.groups["multi_turn"] == multi and BENCHMARK.groups["single_turn"] == categories.SINGLE_TURN
    assert BENCHMARK.expand_subsets(["multi_turn"]) == list(multi)
    assert [BENCHMARK.subset_title(c) for c in (*multi, "multi_turn")] == [
        "Multi-turn base", "Multi-turn missing function", "Multi-turn missing parameter", "Multi-turn long context",
        "Multi-turn"]
else:
    assert "multi_turn" not in BENCHMARK.groups or set(multi) <= set(BENCHMARK.subsets)
print("ok")
"""


@pytest.mark.slow
def test_the_declaration_holds_with_and_without_the_multi_turn_subsets():
    for state in ("as_is", "with"):
        done = subprocess.run([sys.executable, "-c", DECLARATION_CHECK, state], cwd=PROJECT, capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 0 and done.stdout.strip() == "ok", (state, done.stderr[-2000:])
