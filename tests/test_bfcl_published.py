"""The published BFCL rows (leaderboard_data/bfcl.json, the official gh-pages data at one commit): every row has
the multi-turn columns and the official Overall, each figure consistent with the official formulas, with its
source named; on the board the published rows fill Overall and the multi-turn columns (with n where the figure
is a share of items), while a run here leaves Overall empty."""

from __future__ import annotations

import pytest

from evaluators.benchmarks.bfcl.categories import MULTI_TURN
from evaluators.benchmarks.bfcl.report import official_overall
from evaluators.core.leaderboard import load_published
from evaluators.publish.board_table import board_rows

MULTI_TURN_ITEMS = 200
# The site prints percentages with two decimals: a figure is within 0.005 points of its exact value.
PRINTED = 0.00005 + 1e-12
NEW_COLUMNS = ("overall", "multi_turn", "web_search", "memory", *MULTI_TURN)


@pytest.fixture(scope="module")
def table() -> dict:
    return load_published("bfcl")


def test_every_row_has_the_multi_turn_columns_and_overall_with_their_sources(table: dict):
    assert len(table["rows"]) == 109
    assert "data_multi_turn.csv" in table["source"]["files"]
    assert table["source"]["commit"] == "ea03bc8dd716546f4d4c6dd462368a9ab18cc2e0"
    for column in NEW_COLUMNS:
        assert column in table["columns"], column
    for row in table["rows"]:
        summary = row["summary"]
        assert all(isinstance(summary[c], float | int) and 0 <= summary[c] <= 1 for c in NEW_COLUMNS), row["model"]
    assert {c: table["n_by_view"]["all"][c] for c in (*MULTI_TURN, "multi_turn")} == {
        **dict.fromkeys(MULTI_TURN, MULTI_TURN_ITEMS), "multi_turn": 4 * MULTI_TURN_ITEMS}


def test_each_multi_turn_category_is_a_whole_number_of_its_200_items(table: dict):
    for row in table["rows"]:
        for category in MULTI_TURN:
            items = row["summary"][category] * MULTI_TURN_ITEMS
            assert items == pytest.approx(round(items), abs=1e-9), (row["model"], category)


def test_multi_turn_is_the_mean_of_the_four_categories(table: dict):
    for row in table["rows"]:
        summary = row["summary"]
        mean = sum(summary[c] for c in MULTI_TURN) / len(MULTI_TURN)
        assert summary["multi_turn"] == pytest.approx(mean, abs=PRINTED), row["model"]


def test_overall_follows_the_official_weights(table: dict):
    """From the printed parts, each rounded: the weighted sum is within the printing of the parts and its own."""
    for row in table["rows"]:
        assert row["summary"]["overall"] == pytest.approx(official_overall(row["summary"]), abs=2 * PRINTED), row["model"]


def test_one_row_equals_the_published_figures(table: dict):
    row = next(r for r in table["rows"] if r["model"] == "Claude-Opus-4-5-20251101 (FC)")["summary"]
    assert [row[c] for c in ("overall", "multi_turn", *MULTI_TURN)] == [0.7747, 0.6838, 0.81, 0.64, 0.58, 0.705]


def test_the_caveats_say_what_overall_holds_and_name_the_rows_a_bug_depressed(table: dict):
    caveats = " ".join(table["caveats"])
    assert "30% multi-turn and 40% agentic" in caveats and "its report names the missing parts" in caveats
    assert "Amazon-Nova" in caveats and "#1303" in caveats


def test_the_board_shows_the_published_overall_and_multi_turn_columns():
    frame = board_rows("bfcl", None)
    published = frame[frame["source"] == "published"]
    assert len(published) == 109 and published["overall"].notna().all() and published["multi_turn"].notna().all()
    # Multi Turn is a share of 800 items (four categories of 200): it has an interval; Overall, a weighted mix, has none
    assert (published["multi_turn_n"] == 800).all() and (published["multi_turn_base_n"] == 200).all()
    assert published["multi_turn_low"].notna().all() and published["overall_n"].isna().all()
    # Web Search and Memory are shares of 200 and 465 items (n from the table's n_by_view): they have intervals
    assert (published["web_search_n"] == 200).all() and (published["memory_n"] == 465).all()
    assert published["web_search_low"].notna().all() and published["memory_low"].notna().all()
    assert published["overall_low"].notna().all()
