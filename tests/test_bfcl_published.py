"""The published BFCL rows (leaderboard_data/bfcl.json, the official gh-pages data at one commit): every row has
the multi-turn columns, the agentic ones (agentic, web search and its two variants, memory and its three stores) and
the official Overall, each figure consistent with the official formulas, with its source named; on the board the
published rows fill Overall and the multi-turn columns (with n where the figure is a share of items), and every
agentic column the board shows, while a run here leaves Overall empty. Format sensitivity's two published figures
(data_format_sensitivity.csv) are on the rows the site prints them for, consistent with what they are made of, and
shown and sorted lower-is-better by the board."""

from __future__ import annotations

import csv
import hashlib
import math
import statistics
import tempfile
from pathlib import Path

import pytest

from evaluators.benchmarks.bfcl.categories import MULTI_TURN
from evaluators.benchmarks.bfcl.format_sensitivity.report import MAX_DELTA, STANDARD_DEVIATION
from evaluators.benchmarks.bfcl.report import official_overall
from evaluators.core.leaderboard import load_published
from evaluators.core.registry import get_benchmark
from evaluators.engine.store import Store
from evaluators.publish.board_table import board_rows
from evaluators.service.board import SOURCES, layout_for
from tests.conftest import real_data
from ui.board_views import percent_table
from ui.context import AppContext

MULTI_TURN_ITEMS = 200
# The site prints percentages with two decimals: a figure is within 0.005 points of its exact value.
PRINTED = 0.00005 + 1e-12
# A printed figure that is a mean or weighted sum (weights summing to 1) of printed parts: its own rounding plus the
# parts' roundings carried through the weights (at most PRINTED times the weights' sum, 1), so 0.0001 (0.01 points).
PRINTED_OF_PRINTED = 2 * PRINTED
NEW_COLUMNS = ("overall", "multi_turn", "web_search", "memory", *MULTI_TURN)
# The official agentic categories (constants/category_mapping.py): two web search variants over the same 100
# questions, three memory stores over the same 155.
WEB_SEARCH_VARIANTS = ("web_search_base", "web_search_no_snippet")
MEMORY_STORES = ("memory_kv", "memory_vector", "memory_rec_sum")
WEB_SEARCH_ITEMS, MEMORY_ITEMS = 100, 155
AGENTIC_COLUMNS = ("agentic", "web_search", "memory", *WEB_SEARCH_VARIANTS, *MEMORY_STORES)
OFFICIAL_OVERALL_WEIGHTS = {"non_live_ast": 0.1, "live_ast": 0.1, "irrelevance_detection": 0.1, "multi_turn": 0.3,
                            "agentic": 0.4}


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


def test_every_row_has_the_agentic_columns_with_their_sources_and_n(table: dict):
    assert "data_agentic.csv" in table["source"]["files"]
    assert table["columns"]["agentic"].startswith("data_agentic.csv 'Agentic Overall Acc'")
    for column in AGENTIC_COLUMNS:
        assert "official board's figure" in table["columns"][column] or column == "agentic", column
        assert "out of scope" not in table["columns"][column], column
    for row in table["rows"]:
        summary = row["summary"]
        assert all(isinstance(summary.get(c), float | int) and 0 <= summary[c] <= 1 for c in AGENTIC_COLUMNS), row["model"]
    n = table["n_by_view"]["all"]
    assert {c: n[c] for c in (*WEB_SEARCH_VARIANTS, *MEMORY_STORES, "web_search", "memory")} == {
        **dict.fromkeys(WEB_SEARCH_VARIANTS, WEB_SEARCH_ITEMS), **dict.fromkeys(MEMORY_STORES, MEMORY_ITEMS),
        "web_search": 2 * WEB_SEARCH_ITEMS, "memory": 3 * MEMORY_ITEMS}
    assert "agentic" not in n and "overall" not in n  # unweighted means of parts of different sizes: no n


def test_each_agentic_figure_is_a_whole_number_of_its_items(table: dict):
    """Each variant and store is a share of its 100 or 155 items, web search of the 200 and memory of the 465 they
    hold; a printed figure times its items is within the items times the printing of a whole number."""
    shares = {**dict.fromkeys(WEB_SEARCH_VARIANTS, WEB_SEARCH_ITEMS), **dict.fromkeys(MEMORY_STORES, MEMORY_ITEMS),
              "web_search": 2 * WEB_SEARCH_ITEMS, "memory": 3 * MEMORY_ITEMS}
    for row in table["rows"]:
        for column, items in shares.items():
            correct = row["summary"][column] * items
            assert correct == pytest.approx(round(correct), abs=items * PRINTED), (row["model"], column)


def test_agentic_is_the_mean_of_web_search_and_memory_each_the_mean_of_its_parts(table: dict):
    """The official unweighted means (generate_leaderboard_csv): each within PRINTED_OF_PRINTED."""
    for row in table["rows"]:
        summary = row["summary"]
        means = {"web_search": WEB_SEARCH_VARIANTS, "memory": MEMORY_STORES, "agentic": ("web_search", "memory")}
        for column, parts in means.items():
            mean = sum(summary[p] for p in parts) / len(parts)
            assert summary[column] == pytest.approx(mean, abs=PRINTED_OF_PRINTED), (row["model"], column)


def test_overall_is_the_official_weighting_of_the_printed_agentic_figure(table: dict):
    """10% non-live AST, 10% live AST, 10% irrelevance, 30% multi-turn, 40% agentic: within PRINTED_OF_PRINTED."""
    assert sum(OFFICIAL_OVERALL_WEIGHTS.values()) == pytest.approx(1)
    for row in table["rows"]:
        summary = row["summary"]
        weighted = sum(weight * summary[part] for part, weight in OFFICIAL_OVERALL_WEIGHTS.items())
        assert summary["overall"] == pytest.approx(weighted, abs=PRINTED_OF_PRINTED), row["model"]


def test_one_row_equals_the_published_figures(table: dict):
    row = next(r for r in table["rows"] if r["model"] == "Claude-Opus-4-5-20251101 (FC)")["summary"]
    assert [row[c] for c in ("overall", "multi_turn", *MULTI_TURN)] == [0.7747, 0.6838, 0.81, 0.64, 0.58, 0.705]
    # data_agentic.csv: 79.13%, 84.50%, 84.00%, 85.00%, 73.76%, 70.97%, 72.90%, 77.42%
    assert [row[c] for c in ("agentic", "web_search", *WEB_SEARCH_VARIANTS, "memory", *MEMORY_STORES)] == [
        0.7913, 0.845, 0.84, 0.85, 0.7376, 0.7097, 0.729, 0.7742]


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


def test_published_rows_carry_every_agentic_figure_to_the_board(table: dict):
    """The published row's values (BoardLayout.published_values) hold every agentic figure as printed; each
    agentic column the board shows is filled on every published row, with n where the figure is a share of items
    (agentic, a mean of two parts of different sizes, has none)."""
    layout = get_benchmark("bfcl").board_layout()
    for row in table["rows"]:
        view, values = layout.published_values(row)
        assert view == "all" and {c: values.get(c) for c in AGENTIC_COLUMNS} == {
            c: row["summary"][c] for c in AGENTIC_COLUMNS}, row["model"]
    frame = board_rows("bfcl", None)
    published = frame[frame["source"] == "published"].set_index("model")
    n = table["n_by_view"]["all"]
    for column in (c for c in AGENTIC_COLUMNS if c in frame.columns):
        assert published[column].to_dict() == {r["model"]: r["summary"][column] for r in table["rows"]}, column
        if column + "_n" in frame.columns and column in n:
            assert (published[column + "_n"] == n[column]).all(), column


# ---- format sensitivity (data_format_sensitivity.csv): two spreads of 26 accuracies, lower is better ------------

FORMAT_SENSITIVITY = (MAX_DELTA, STANDARD_DEVIATION)
CONFIGURATIONS = 26
FORMAT_SENSITIVITY_ITEMS = 200  # each configuration's accuracy is a share of the same 200 items
# Rows printed with figures (every other row prints N/A): the prompt rows, and these.
FORMAT_SENSITIVITY_OTHER_ROWS = {"CoALM-8B", "CoALM-70B", "Mistral-Medium-2505", "ToolACE-2-8B (FC)",
                                 "Ministral-8B-Instruct-2410 (FC)"}
# The official statistics are printed in points with at most two decimals: as fractions, within this of exact.
POINTS_PRINTED = 0.00005 + 1e-12
# Where a copy of the official CSV may be placed (`git show ea03bc8:data_format_sensitivity.csv` in a clone of
# gorilla); the project holds only its two derived figures per row.
FORMAT_SENSITIVITY_CSV = "../published/bfcl_data_format_sensitivity.csv"


def format_sensitivity_rows(table: dict) -> dict[str, dict]:
    return {r["model"]: r["summary"] for r in table["rows"] if MAX_DELTA in r["summary"]}


def test_format_sensitivity_is_on_the_rows_that_print_it_with_its_source_and_unit(table: dict):
    assert "data_format_sensitivity.csv" in table["source"]["files"]
    assert len(table["source"]["file_sha256"]["data_format_sensitivity.csv"]) == 64
    for column in FORMAT_SENSITIVITY:
        assert table["columns"][column].startswith("data_format_sensitivity.csv 'Format Sensitivity"), column
        assert "lower is better" in table["columns"][column] and "/ 100" in table["columns"][column], column
        assert column not in table["n_by_view"]["all"], column  # a spread, not a share of items: no n
    assert "not shares of items, lower is better" in table["units"]
    rows = format_sensitivity_rows(table)
    # both figures or neither (N/A stays absent, never 0): 40 rows, the prompt rows and five others
    assert all((MAX_DELTA in r["summary"]) == (STANDARD_DEVIATION in r["summary"]) for r in table["rows"])
    assert set(rows) == {r["model"] for r in table["rows"] if r["request_mode"] == "prompt"} | FORMAT_SENSITIVITY_OTHER_ROWS
    assert len(rows) == 40
    assert "Ministral-8B-Instruct-2410 (FC)" in " ".join(table["caveats"])  # 0% everywhere: a spread of 0


def test_format_sensitivity_figures_are_consistent_with_26_accuracies_of_200_items(table: dict):
    """Without the per-configuration accuracies: max delta is a difference of two shares of 200 items (a whole
    number of half points); the standard deviation is printed to 0.01 points; and the sample standard deviation of
    26 values whose range is the max delta d lies between d / sqrt(2 (26 - 1)) (two values at the ends, the rest
    in the middle) and d / 2 * sqrt(26 / 25) (half at each end), within the printing."""
    n = CONFIGURATIONS
    for model, summary in format_sensitivity_rows(table).items():
        delta, std = summary[MAX_DELTA], summary[STANDARD_DEVIATION]
        assert 0 <= std <= delta <= 1, model
        items = delta * FORMAT_SENSITIVITY_ITEMS
        assert items == pytest.approx(round(items), abs=1e-9), model
        assert std * 10_000 == pytest.approx(round(std * 10_000), abs=1e-6), model
        assert delta / math.sqrt(2 * (n - 1)) - POINTS_PRINTED <= std <= delta / 2 * math.sqrt(n / (n - 1)) + POINTS_PRINTED, model


def test_one_row_equals_the_published_format_sensitivity(table: dict):
    """data_format_sensitivity.csv: Phi-4 (Prompt) 81.5 and 23.34 points; Claude-Opus-4-5-20251101 (FC) N/A."""
    rows = format_sensitivity_rows(table)
    assert (rows["Phi-4 (Prompt)"][MAX_DELTA], rows["Phi-4 (Prompt)"][STANDARD_DEVIATION]) == (0.815, 0.2334)
    assert "Claude-Opus-4-5-20251101 (FC)" not in rows


def test_format_sensitivity_equals_the_official_csv_and_its_26_accuracies(table: dict):
    """With a copy of the official CSV (../shared/published; skipped without it): the same file (sha256), figures
    on exactly the rows it prints them for, each equal to it / 100, max delta = max - min of the row's 26 accuracies
    and the standard deviation their sample standard deviation, within the printing."""
    path = real_data(FORMAT_SENSITIVITY_CSV, "official BFCL data_format_sensitivity.csv "
                     "(`git show ea03bc8:data_format_sensitivity.csv` in a clone of gorilla)")
    assert hashlib.sha256(path.read_bytes()).hexdigest() == table["source"]["file_sha256"]["data_format_sensitivity.csv"]
    with path.open(encoding="utf-8", newline="") as handle:
        printed = {r["Model"]: r for r in csv.DictReader(handle)}
    assert set(printed) == {r["model"] for r in table["rows"]}
    rows = format_sensitivity_rows(table)
    assert set(rows) == {m for m, r in printed.items() if r["Format Sensitivity Max Delta"] != "N/A"}
    for model, summary in rows.items():
        row = printed[model]
        accuracies = [float(v.removesuffix("%")) / 100 for k, v in row.items() if k.startswith("Config ")]
        assert len(accuracies) == CONFIGURATIONS, model
        assert summary[MAX_DELTA] == pytest.approx(float(row["Format Sensitivity Max Delta"]) / 100, abs=1e-12), model
        assert summary[STANDARD_DEVIATION] == pytest.approx(
            float(row["Format Sensitivity Standard Deviation"]) / 100, abs=1e-12), model
        assert summary[MAX_DELTA] == pytest.approx(max(accuracies) - min(accuracies), abs=1e-9), model
        assert summary[STANDARD_DEVIATION] == pytest.approx(statistics.stdev(accuracies), abs=POINTS_PRINTED), model


def test_the_board_shows_published_format_sensitivity_in_points_and_sorts_it_lower_is_better(table: dict):
    """Through the table the /leaderboard API returns (values in %, i.e. the official points): the detail columns
    hold the published figures, rows without them are empty (not 0) and last, and sorting by either column puts the
    lowest first and ranks it 1."""
    layout = layout_for("bfcl")
    assert set(FORMAT_SENSITIVITY) <= set(layout.detail_columns) and set(FORMAT_SENSITIVITY) <= layout.lower_is_better
    expected = format_sensitivity_rows(table)
    with tempfile.TemporaryDirectory() as folder:
        context = AppContext(store=Store(Path(folder) / "board.sqlite"))
        try:
            plain = percent_table(context, "bfcl", "all", "", list(SOURCES), None, False, "official", MAX_DELTA, [],
                                  False, [], part="ranked")
            assert not set(FORMAT_SENSITIVITY) & set(plain.columns)  # detail columns: shown with the detail
            for column in FORMAT_SENSITIVITY:
                shown = percent_table(context, "bfcl", "all", "", list(SOURCES), None, True, "official", column, [],
                                      False, [], part="ranked")
                published = shown[shown["source"] == "published"]
                assert len(published) == 109
                values = published.set_index("model")[column]
                filled = values.dropna()
                # in points with the board's one decimal (a printed 1.95 may show as 1.9 or 2.0)
                assert filled.to_dict() == pytest.approx({m: expected[m][column] * 100 for m in expected},
                                                         abs=0.05 + 1e-9)
                assert set(values[values.isna()].index) == {r["model"] for r in table["rows"]} - set(expected)
                order = published[column].tolist()
                assert order[:len(filled)] == sorted(filled) and all(math.isnan(v) for v in order[len(filled):])
                assert published["rank"].iloc[0] == 1 and published["model"].iloc[0] == "Ministral-8B-Instruct-2410 (FC)"
                assert published["rank"].iloc[len(filled):].isna().all()
        finally:
            context.close()
