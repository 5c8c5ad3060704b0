"""Many visitors at once: the board is built once per change of the store and shared; read-only events
run side by side instead of one at a time in the queue."""

from __future__ import annotations

from pathlib import Path

import pytest

from evaluators.engine.store import Store
from tests.app_fixtures import upload
from ui.app import build_app
from ui.context import READ_EVENT, AppContext


@pytest.mark.slow
def test_the_board_frame_is_built_once_and_rebuilt_when_a_run_is_added(tmp_path: Path):
    context = AppContext(store=Store(tmp_path / "toolboard.db"))
    try:
        first = context.board_frame("acebench", "official")
        assert context.board_frame("acebench", "official") is first
        assert context.board_frame("acebench", "strict") is not first  # one per scoring mode
        upload(context.store, "cached-model")
        rebuilt = context.board_frame("acebench", "official")
        assert rebuilt is not first and "cached-model" in set(rebuilt["model"])
        assert context.board_frame("acebench", "official") is rebuilt
    finally:
        context.close()


def test_a_view_is_shared_until_the_board_changes_and_a_deleted_run_leaves_it(tmp_path: Path):
    context = AppContext(store=Store(tmp_path / "toolboard.db"))
    builds: list[str] = []

    def build() -> str:
        builds.append("built")
        return f"view {len(builds)}"

    try:
        assert context.board_view(("api", "acebench"), build) == "view 1"
        assert context.board_view(("api", "acebench"), build) == "view 1"
        assert context.board_view(("api", "other query"), build) == "view 2"
        run_id = upload(context.store, "passing-model")
        assert context.board_view(("api", "acebench"), build) == "view 3"
        context.store.delete_run(run_id)
        # the board is again what it was before the upload: that view, never the one with the deleted run
        assert context.board_view(("api", "acebench"), build) == "view 1"
        assert len(builds) == 3
    finally:
        context.close()


def test_the_board_version_changes_when_a_run_ends(tmp_path: Path):
    store = Store(tmp_path / "toolboard.db")
    before = store.board_version()
    run_id = store.create_run("acebench", "en", "m", "http://127.0.0.1:1/v1", {}, "fp", 1)
    created = store.board_version()
    assert created != before
    store.set_status(run_id, "finished")
    assert store.board_version() != created
    store.close()


@pytest.mark.slow
def test_the_board_reads_run_side_by_side_in_the_app(tmp_path: Path):
    context = AppContext(store=Store(tmp_path / "toolboard.db"))
    try:
        demo = build_app(context)
        by_name = {fn.api_name: fn for fn in demo.fns.values() if fn.api_name}
        for name in ("leaderboard", "leaderboard_ranked", "leaderboard_apart", "chart", "overview"):
            assert by_name[name].concurrency_limit == READ_EVENT["concurrency_limit"], name
        # runs are not reads: starting one stays in the queue's default limit
        assert by_name["start_run"].concurrency_limit != READ_EVENT["concurrency_limit"]
    finally:
        context.close()


def test_a_board_frame_and_what_is_built_from_it_raise_no_fragmentation_warning():
    """board_rows replaces hundreds of columns one by one; it returns a consolidated frame, so the ranked view (its
    rank column inserted), the detail columns and the overview (a sort column added) neither warn nor slow down."""
    import warnings

    import pandas as pd

    from evaluators.core.registry import all_benchmarks, get_benchmark
    from evaluators.publish.board_table import board_rows
    from evaluators.service.board import BoardQuery, query_board
    from evaluators.service.overview import overview_rows

    with warnings.catch_warnings():
        warnings.simplefilter("error", pd.errors.PerformanceWarning)
        frames = {benchmark.name: board_rows(benchmark.name, None) for benchmark in all_benchmarks()}
        for name, frame in frames.items():
            query_board(frame, get_benchmark(name).board_layout(), BoardQuery(details=True))
        assert len(overview_rows(frames)) > 0
