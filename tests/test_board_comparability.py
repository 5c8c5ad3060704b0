"""The leaderboard ranks published rows with the evaluated runs that are the same experiment
(official requests and sampling, text mode, every item); any other row follows, with its reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from evaluators.engine.store import Store
from evaluators.publish import board_table
from evaluators.service.board import (
    APART_COLUMN,
    NEWEST_COLUMN,
    RANK_COLUMN,
    BoardQuery,
    board_rows,
    layout_for,
    query_board,
    ranks,
    wilson_interval,
)
from tests.app_fixtures import finished_acebench_run as _endpoint_run
from tests.app_fixtures import upload
from ui.format import NEWEST_MARK, as_percent, best_cells, board_display


def test_only_comparable_runs_rank_with_the_published_rows(tmp_path: Path):
    store = Store(tmp_path / "board.sqlite")
    _endpoint_run(store, "same-experiment", 0.05)
    _endpoint_run(store, "own-prompts", 0.99, model={"prompt_style": "toolboard"})
    _endpoint_run(store, "before-profiles", 0.98, model={"prompt_style": None, "temperature": 0.0})
    _endpoint_run(store, "tools", 0.97, model={"request_mode": "tools", "prompt_style": "toolboard"})
    _endpoint_run(store, "limited", 0.96, limit=20)
    _endpoint_run(store, "normal-only", 0.95, subsets=["normal"])
    _endpoint_run(store, "hot", 0.94, model={"temperature": 1.0})
    upload(store, "uploaded-one")
    layout = layout_for("acebench")
    shown = query_board(board_rows("acebench", store), layout, BoardQuery(view="en"))
    reasons = dict(zip(shown["model"], shown[APART_COLUMN].fillna("")))
    assert reasons["same-experiment"] == ""
    assert reasons["own-prompts"] == "own prompts"
    assert reasons["before-profiles"] == "own prompts; own sampling (temperature 0.0)"
    assert reasons["tools"] == "native tools; own prompts"
    assert reasons["limited"] == "partial: 20 per subset"
    assert reasons["normal-only"] == "partial: 12 of 17 subsets"
    assert reasons["hot"] == "own sampling (temperature 1.0)"
    assert reasons["uploaded-one"].startswith("uploaded:")
    ranked = shown[shown[APART_COLUMN].fillna("") == ""]
    assert set(ranked["source"]) == {"published", "evaluated"} and "same-experiment" in set(ranked["model"])
    # the ranking comes first, by rank, then by overall; the rows kept apart follow it, even with higher scores
    assert list(shown["model"][:len(ranked)]) == list(ranked["model"])
    order = [(int(rank), -value) for rank, value in zip(ranked[RANK_COLUMN], ranked["overall"])]
    assert order == sorted(order)
    # the run scored on one item has an interval so wide that no published row is clearly better: it ranks
    # near the top although its value is the lowest
    run = ranked[ranked["model"] == "same-experiment"].iloc[0]
    assert run["overall"] == min(ranked["overall"]) and int(run[RANK_COLUMN]) <= 2


def test_the_combined_view_keeps_the_reasons_of_its_parts(tmp_path: Path):
    store = Store(tmp_path / "board.sqlite")
    _endpoint_run(store, "pair", 0.5, language="en")
    _endpoint_run(store, "pair", 0.7, language="zh")
    _endpoint_run(store, "mixed", 0.5, language="en")
    _endpoint_run(store, "mixed", 0.7, language="zh", model={"prompt_style": "toolboard"})
    frame = board_rows("acebench", store)
    combined = frame[frame["view"] == "combined"].set_index("model")
    assert combined.loc["pair", APART_COLUMN] == "" and combined.loc["pair", "overall"] == 0.6
    # runs with different prompt styles are not averaged into one row
    assert "mixed" not in combined.index


def test_a_run_whose_config_this_version_cannot_build_still_shows(tmp_path: Path):
    """A config with a field this version does not know (written by a newer one, or imported from a hub
    dataset) must not take the board down; its roles and options are shown."""
    store = Store(tmp_path / "board.sqlite")
    _endpoint_run(store, "from-the-future", 0.5, model={"seed": 1})
    _endpoint_run(store, "future-judged", 0.4, model={"seed": 2},
                  roles={"judge": {"base_url": "http://j/v1", "model": "jm", "api_key_env": "J"}})
    rows = board_rows("acebench", store)
    shown = rows[rows["view"] == "en"].set_index("model")
    assert {"from-the-future", "future-judged"} <= set(shown.index)
    assert "judge: jm" in shown.loc["future-judged", "details"]


def test_wilson_interval_matches_known_values():
    low, high = wilson_interval(0.5, 100)
    assert (round(low, 3), round(high, 3)) == (0.404, 0.596)
    low, high = wilson_interval(0.0, 10)
    assert low == 0.0 and high == pytest.approx(0.2775, abs=1e-4)
    low, high = wilson_interval(1.0, 10)
    assert low == pytest.approx(0.7225, abs=1e-4) and high == 1.0
    low, high = wilson_interval(0.9, 1000)
    assert (round(low, 4), round(high, 4)) == (0.8798, 0.9171)
    assert wilson_interval(0.5, 0) is None and wilson_interval(0.5, None) is None and wilson_interval(None, 10) is None


def test_a_rank_is_one_plus_the_rows_better_beyond_both_intervals():
    values = [0.9, 0.84, 0.79, 0.5, 0.5, 0.3, None]
    lows = [0.85, 0.80, 0.75, None, None, 0.2, None]
    highs = [0.95, 0.88, 0.83, None, None, 0.4, None]
    # 0.84 overlaps 0.9: nobody is clearly above either; 0.79 overlaps 0.84 but 0.9 is clearly above it;
    # two equal values without intervals tie, below the three; no value, no rank
    assert ranks(values, lows, highs) == [1, 1, 2, 4, 4, 6, None]


def test_the_ranking_and_the_rows_kept_apart_are_separate_tables(tmp_path: Path):
    store = Store(tmp_path / "board.sqlite")
    same = _endpoint_run(store, "same-experiment", 0.05)
    _endpoint_run(store, "limited", 0.96, limit=20)
    newest = upload(store, "uploaded-last")
    layout = layout_for("acebench")
    frame = board_rows("acebench", store)
    ranked = query_board(frame, layout, BoardQuery(view="en", part="ranked"))
    apart = query_board(frame, layout, BoardQuery(view="en", part="apart"))
    everything = query_board(frame, layout, BoardQuery(view="en"))
    assert (ranked[APART_COLUMN].fillna("") == "").all() and (apart[APART_COLUMN].fillna("") != "").all()
    assert set(apart["model"]) == {"limited", "uploaded-last"} and "same-experiment" in set(ranked["model"])
    assert list(everything["model"]) == list(ranked["model"]) + list(apart["model"])
    # ranked rows have a rank (1 first), the others none; the newest run is marked in its table only
    assert ranked[RANK_COLUMN].iloc[0] == 1 and ranked[RANK_COLUMN].notna().all() and apart[RANK_COLUMN].isna().all()
    assert list(ranked[RANK_COLUMN]) == sorted(ranked[RANK_COLUMN])
    assert set(apart.loc[apart[NEWEST_COLUMN], "run_id"]) == {newest} and not ranked[NEWEST_COLUMN].any()
    # n from the report's per-subset n, and its interval; published rows: the items counted in the benchmark's
    # data for their view (the table's n_by_view: the site prints no counts)
    row = ranked[ranked["run_id"] == same].iloc[0]
    assert row["overall_n"] == 1 and (row["overall_low"], row["overall_high"]) == pytest.approx(wilson_interval(0.05, 1))
    published = ranked[ranked["source"] == "published"].iloc[0]
    assert published["overall_n"] == 1023
    assert (published["overall_low"], published["overall_high"]) == pytest.approx(wilson_interval(0.811, 1023))


def test_a_published_row_may_give_its_n(monkeypatch: pytest.MonkeyPatch):
    table = {"source": {"url": "https://example.com"}, "rows": [
        {"model": "Counted", "language": "en", "summary": {"overall": 0.5, "normal": 0.6}, "n": {"overall": 100}},
        {"model": "Everywhere", "language": "en", "summary": {"overall": 0.4}, "n": 50},
    ]}
    monkeypatch.setattr(board_table, "published_table", lambda name: table)
    rows = board_rows("acebench", None).set_index("model")
    assert rows.loc["Counted", "overall_n"] == 100 and rows.loc["Counted", "normal_n"] is None
    assert round(rows.loc["Counted", "overall_low"], 3) == 0.404 and rows.loc["Counted", "normal_low"] is None
    assert rows.loc["Everywhere", "overall_n"] == 50


def test_the_page_shows_rank_first_intervals_and_the_best_value_highlighted(tmp_path: Path):
    store = Store(tmp_path / "board.sqlite")
    _endpoint_run(store, "same-experiment", 0.05)
    _endpoint_run(store, "limited", 0.96, limit=20)
    layout = layout_for("acebench")
    frame = as_percent(query_board(board_rows("acebench", store), layout, BoardQuery(view="en")), layout)
    apart = frame[APART_COLUMN].fillna("") != ""
    ranked = board_display(frame[~apart], layout, "overall", ranked=True)
    shown = ranked.data
    assert list(shown.columns[:3]) == [RANK_COLUMN, NEWEST_MARK, "model"] and APART_COLUMN not in shown.columns
    # Wilson (0.0005, 0.8133) around 0.05 is lopsided: each side apart (rounded bounds 0.1 and 81.3)
    assert shown.loc[shown["model"] == "same-experiment", "overall"].iloc[0] == "5.0 +76.3/−4.9"
    assert shown.loc[shown["model"] == "same-experiment", "n"].iloc[0] == "1"
    assert shown["overall"].iloc[0] == "81.1 ± 2.4"  # published: n counted in the benchmark's data (1023 en items)
    assert "font-weight: bold" in ranked.to_html()
    best = best_cells(frame[~apart], layout)
    assert best["overall"] == [0] and shown["model"].iloc[0] == "GPT-4o"  # the highest overall, highlighted
    others = board_display(frame[apart], layout, "overall", ranked=False)
    assert list(others.columns[:3]) == ["model", APART_COLUMN, NEWEST_MARK] and RANK_COLUMN not in others.columns
    assert list(others[NEWEST_MARK]) == [NEWEST_MARK]  # the newest run: marked in the table it is in


def test_the_best_value_respects_lower_is_better():
    layout = layout_for("toolbench_static")
    frame = query_board(board_rows("toolbench_static", None), layout, BoardQuery(view="in_domain"))
    best = best_cells(frame, layout)
    hallu = frame["hallu_rate"].reset_index(drop=True)
    assert all(hallu[i] == hallu.min() for i in best["hallu_rate"])  # the lowest hallucination rate
    assert all(frame["act_em"].reset_index(drop=True)[i] == frame["act_em"].max() for i in best["act_em"])
