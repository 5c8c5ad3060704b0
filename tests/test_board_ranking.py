"""Ranks with intervals (1 + the rows better beyond both intervals), within a view; searching never re-ranks;
only shares of a view's items get an n and an interval (a precision or a mean F1 would get a wrong one)."""

from __future__ import annotations

import math
import random
from collections import Counter

import pandas as pd
import pytest

from evaluators.core.registry import get_benchmark
from evaluators.service.board import (
    RANK_COLUMN,
    BoardQuery,
    board_rows,
    item_share_columns,
    layout_for,
    query_board,
    ranks,
)


def brute_force_ranks(values: list[float | None], lows: list[float | None], highs: list[float | None],
                      lower_is_better: bool = False) -> list[int | None]:
    """The definition, pair by pair: 1 + the rows whose interval lies wholly on the better side of this row's
    (a row without an interval is the point of its value; a row without a value has no rank, counts for none)."""
    def interval(i: int) -> tuple[float, float] | None:
        value = values[i]
        if value is None or math.isnan(value):
            return None
        low, high = lows[i], highs[i]
        if low is None or high is None or math.isnan(low) or math.isnan(high):
            return value, value
        return min(low, high, value), max(low, high, value)

    bounds = [interval(i) for i in range(len(values))]
    result: list[int | None] = []
    for mine in bounds:
        if mine is None:
            result.append(None)
            continue
        if lower_is_better:
            better = sum(1 for other in bounds if other is not None and other[1] < mine[0])
        else:
            better = sum(1 for other in bounds if other is not None and other[0] > mine[1])
        result.append(1 + better)
    return result


def test_rows_apart_beyond_their_intervals_take_one_rank_each():
    assert ranks([0.9, 0.7, 0.5], [0.85, 0.65, 0.45], [0.95, 0.75, 0.55]) == [1, 2, 3]


def test_overlaps_do_not_chain_a_row_counts_only_the_rows_clearly_above_it():
    # B overlaps A and C, C does not overlap A: A and B share #1 (nobody is clearly above them), C is #2
    # (only A is clearly above it), whatever else overlaps.
    assert ranks([0.9, 0.84, 0.79], [0.85, 0.80, 0.75], [0.95, 0.88, 0.83]) == [1, 1, 2]
    # a long chain of neighbours: each row counts the rows whose low bound is above its high bound
    values = [0.90, 0.88, 0.86, 0.84, 0.82]
    assert ranks(values, [v - 0.015 for v in values], [v + 0.015 for v in values]) == [1, 1, 2, 3, 4]


def test_rows_without_an_interval_are_the_point_of_their_value():
    assert ranks([0.5, 0.5, 0.3], [None, None, None], [None, None, None]) == [1, 1, 3]
    # a point inside another row's interval ties with it; a point above it is better
    assert ranks([0.6, 0.55, 0.9], [0.5, None, None], [0.7, None, None]) == [2, 2, 1]


def test_lower_is_better_counts_the_rows_whose_high_bound_is_below():
    values, lows, highs = [0.1, 0.2, 0.5], [0.05, 0.12, 0.4], [0.15, 0.3, 0.6]
    assert ranks(values, lows, highs, lower_is_better=True) == [1, 1, 3]
    assert ranks(values, lows, highs) == [2, 2, 1]  # higher is better: only 0.5 is clearly above


def test_rows_without_a_value_have_no_rank_and_count_for_no_one():
    nan = float("nan")
    assert ranks([None, 0.5, nan, 0.2], [0.9, 0.45, 0.9, 0.1], [0.95, 0.55, 0.95, 0.3]) == [None, 1, None, 2]
    assert ranks([], [], []) == []


def test_the_order_of_the_rows_does_not_change_their_ranks():
    values, lows, highs = [0.3, 0.9, 0.6], [0.25, 0.85, 0.55], [0.35, 0.95, 0.65]
    assert ranks(values, lows, highs) == [3, 1, 2]


@pytest.mark.parametrize("lower_is_better", [False, True])
def test_ranks_agree_with_the_definition_pair_by_pair(lower_is_better: bool):
    generator = random.Random(29)
    for _ in range(400):
        size = generator.randint(0, 30)
        values: list[float | None] = []
        lows: list[float | None] = []
        highs: list[float | None] = []
        for _ in range(size):
            kind = generator.random()
            # coarse values so that equal bounds (the edge of "beyond") happen often
            value = round(generator.random(), 1)
            width = round(generator.random() * 0.3, 1)
            if kind < 0.1:
                values.append(None if kind < 0.05 else float("nan"))
                lows.append(None)
                highs.append(None)
            elif kind < 0.3:
                values.append(value)
                lows.append(None)
                highs.append(None)
            else:
                values.append(value)
                lows.append(max(0.0, value - width))
                highs.append(min(1.0, value + round(generator.random() * 0.3, 1)))
        expected = brute_force_ranks(values, lows, highs, lower_is_better)
        assert ranks(values, lows, highs, lower_is_better=lower_is_better) == expected, (values, lows, highs)


def test_the_published_function_calling_rows_are_told_apart_far_better_than_by_the_old_rule():
    """The published BFCL board (109 rows, live accuracy over 1,351 items): the old rule (share the rank of the
    first row of the group above on overlap) gave 12 distinct ranks, 28 rows sharing #18; ranking by what is
    clearly better gives each group of models its own place."""
    layout = layout_for("bfcl")
    shown = query_board(board_rows("bfcl", None), layout, BoardQuery(view="all", part="ranked", sort_by="live_ast"))
    found = [int(r) for r in shown[RANK_COLUMN]]
    ties = Counter(found)
    assert len(ties) >= 40 and max(ties.values()) <= 16
    assert found[0] == 1 and found == sorted(found)  # equal n: a higher value never ranks below a lower one
    values = [float(v) for v in shown["live_ast"]]
    lows = [float(v) for v in shown["live_ast_low"]]
    highs = [float(v) for v in shown["live_ast_high"]]
    assert found == brute_force_ranks(values, lows, highs)


def test_the_rank_follows_the_sorted_column_and_its_direction_not_the_order_shown():
    layout = layout_for("bfcl")
    frame = board_rows("bfcl", None)
    best_first = query_board(frame, layout, BoardQuery(view="all", part="ranked", sort_by="non_live_ast"))
    worst_first = query_board(frame, layout, BoardQuery(view="all", part="ranked", sort_by="non_live_ast",
                                                        descending=False))
    assert list(worst_first["model"]) == list(reversed(best_first["model"])) or \
        set(worst_first["model"]) == set(best_first["model"])
    by_model = dict(zip(best_first["model"], best_first[RANK_COLUMN]))
    assert all(by_model[m] == r for m, r in zip(worst_first["model"], worst_first[RANK_COLUMN]))
    assert int(worst_first[RANK_COLUMN].iloc[0]) > 1 and int(worst_first[RANK_COLUMN].min()) == 1
    by_live = query_board(frame, layout, BoardQuery(view="all", part="ranked", sort_by="live_ast"))
    assert dict(zip(by_live["model"], by_live[RANK_COLUMN])) != by_model


def test_with_every_view_shown_each_view_is_ranked_on_its_own():
    layout = layout_for("acebench")
    shown = query_board(board_rows("acebench", None), layout, BoardQuery())
    ranked = shown[shown[RANK_COLUMN].notna()]
    assert set(ranked["view"]) == {"en", "zh", "combined"}
    for _, rows in ranked.groupby("view"):
        assert int(rows[RANK_COLUMN].min()) == 1


def test_a_search_hides_rows_without_changing_their_rank():
    layout = layout_for("acebench")
    frame = board_rows("acebench", None)
    whole = query_board(frame, layout, BoardQuery(view="en"))
    found = query_board(frame, layout, BoardQuery(view="en", search="qwen2.5-7b"))
    assert len(found) == 1
    row = found.iloc[0]
    assert int(row[RANK_COLUMN]) == int(whole[whole["model"] == row["model"]][RANK_COLUMN].iloc[0]) > 1


def test_only_shares_of_the_views_items_get_an_interval():
    stepeval = get_benchmark("stepeval_audio")
    assert item_share_columns(stepeval, stepeval.board_layout()) == []  # precision, recall…: other denominators
    toolbench = get_benchmark("toolbench_static")
    assert item_share_columns(toolbench, toolbench.board_layout()) == ["act_em", "plan_em"]
    acebench = get_benchmark("acebench")
    assert "overall" in item_share_columns(acebench, acebench.board_layout())


def test_a_precision_row_has_no_n_and_no_interval():
    frame = board_rows("stepeval_audio", None)
    assert frame["precision_n"].map(lambda v: v is None or pd.isna(v)).all()
    assert frame["precision_low"].map(lambda v: v is None or pd.isna(v)).all()


def test_an_interval_is_shown_as_plus_minus_or_by_its_two_sides_where_lopsided():
    from ui.format import _percent_text

    assert _percent_text(50.0, 40.4, 59.6) == "50.0 ± 9.6"
    assert _percent_text(100.0, 72.2, 100.0) == "100.0 +0.0/−27.8"  # never a bound past 100
    assert _percent_text(81.1, None, None) == "81.1"


def test_published_acebench_rows_take_n_from_the_items_in_its_data(tmp_path):
    import json

    import pytest

    from evaluators.core.errors import DataError
    from evaluators.core.leaderboard import LEADERBOARD_DIR, load_published

    frame = board_rows("acebench", None)
    published = frame[(frame["source"] == "published") & (frame["view"] == "en")].iloc[0]
    assert published["overall_n"] == 1023 and published["overall_low"] is not None
    table = json.loads((LEADERBOARD_DIR / "acebench.json").read_text(encoding="utf-8"))
    table["n_by_view"] = {"en": {"overall": "many"}}
    (tmp_path / "acebench.json").write_text(json.dumps(table), encoding="utf-8")
    with pytest.raises(DataError, match=r"n_by_view\['en'\] must map each column to a positive number"):
        load_published("acebench", tmp_path)
