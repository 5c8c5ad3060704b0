"""Ranks are places within a view, searching never re-ranks, and only shares of a view's items get an n and
an interval (a precision or a mean F1 would get a wrong one)."""

from __future__ import annotations

import pandas as pd

from evaluators.core.registry import get_benchmark
from evaluators.service.board import RANK_COLUMN, BoardQuery, board_rows, item_share_columns, layout_for, query_board


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
