"""The leaderboard ranks published rows with the evaluated runs that are the same experiment
(official requests and sampling, text mode, every item); any other row follows, with its reason."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evaluators.board import APART_COLUMN, BoardQuery, board_rows, layout_for, query_board
from evaluators.core.types import Report, SubsetResult
from evaluators.engine.store import Store
from tests.app_fixtures import upload


def _endpoint_run(store: Store, name: str, overall: float, language: str = "en", **config: Any) -> str:
    settings = {"base_url": "http://127.0.0.1:9/v1", "model": name, "request_mode": "prompt",
                "prompt_style": "official", **config.pop("model", {})}
    run_config = {"benchmark": "acebench", "model": settings, "language": language, "subsets": [], "limit": None, **config}
    run_id = store.create_run("acebench", language, name, settings["base_url"], run_config, f"fp-{name}", 1)
    report = Report("acebench", "official", {"normal_atom_bool": SubsetResult(1, {"accuracy": overall})},
                    {"overall": overall, "normal": overall}, {}, language=language)
    store.save_scores(run_id, "official", [], report)
    store.set_status(run_id, "finished")
    return run_id


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
    # the ranking comes first, sorted by overall; the rows kept apart follow it, even with higher scores
    assert list(shown["model"][:len(ranked)]) == list(ranked["model"])
    assert list(ranked["overall"].dropna()) == sorted(ranked["overall"].dropna(), reverse=True)
    assert ranked["model"].iloc[-1] == "same-experiment"


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
    dataset) must not take the board down; its roles and options, in any config's place, are shown."""
    store = Store(tmp_path / "board.sqlite")
    _endpoint_run(store, "from-the-future", 0.5, model={"seed": 1})
    _endpoint_run(store, "old-judged", 0.4, model={"judge": {"base_url": "http://j/v1", "model": "jm", "timeout": 300.0}})
    rows = board_rows("acebench", store)
    shown = rows[rows["view"] == "en"].set_index("model")
    assert {"from-the-future", "old-judged"} <= set(shown.index)
    assert "judge: jm" in shown.loc["old-judged", "details"]
