"""BFCL in the About tab and the Overview declaration: the text is built from the package's declaration."""

from __future__ import annotations

from evaluators.benchmarks.bfcl.benchmark import ABOUT, BENCHMARK
from evaluators.core.declarations import Overview
from ui.about_tab import about_text


def test_the_about_tab_shows_bfcls_declaration():
    text = about_text()
    assert f"**{BENCHMARK.title}** (`bfcl`" in text
    assert ABOUT.measures in text
    assert "13 categories" in ABOUT.measures and "*Overall*" in ABOUT.measures
    assert "multi-turn, web search, memory and format sensitivity" in ABOUT.measures
    assert f"for {BENCHMARK.title}: {ABOUT.strict_fixes}" in text
    assert "double-brace HashMaps" in ABOUT.strict_fixes and "nested object and array literals" in ABOUT.strict_fixes
    assert f"- {BENCHMARK.title}: {ABOUT.data}" in text and "licence: Apache-2.0" in text
    assert "leaderboard_data/bfcl.json" in text and ABOUT.citation in text


def test_the_overview_reads_live_ast():
    assert BENCHMARK.overview == Overview("all", ("non_live_ast", "live_ast"), "live_ast", BENCHMARK.overview.why)
