"""Reports as tables (ui/report_view.py), the jobs table's score, and the charts: runs without the headline
column, error types as shares of each run, legends under the plot. Real store, real runs, real uploads."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from evaluators.core.registry import get_benchmark, score_all
from evaluators.core.types import Prediction
from evaluators.engine.store import Store
from evaluators.service.board import BoardQuery, board_rows, layout_for, query_board
from evaluators.service.submissions import check_submission
from tests.acebench_fixtures import EXAMPLE_DIR
from tests.app_fixtures import upload, wait_for_status
from tests.engine_fixtures import correct_reply, write_dataset
from tests.scripted_server import ScriptedServer
from tests.stepeval_fixtures import write_stepeval
from tests.toolbench_fixtures import write_toolbench
from ui import charts
from ui.context import AppContext
from ui.jobs_panel import JOB_COLUMNS, job_detail, job_score, jobs_table, page_jobs_table
from ui.report_view import SCORED_AT_THE_END, headline, report_view, score_text
from ui.run_form import run_request
from ui.submit_tab import check_file


def example_report() -> dict:
    """ACEBench's built-in example, as an upload of it is scored (official, with the strict summary)."""
    submission = check_submission(EXAMPLE_DIR / "predictions.jsonl", "acebench", language="en", data_dir=EXAMPLE_DIR)
    return submission.reports["official"].to_json()


def test_an_acebench_report_is_its_board_row_its_categories_and_a_summary():
    view = report_view(example_report())
    # Views, subsets and columns read as their declared titles, never as keys.
    assert list(view.views.columns) == ["Language", "Atom", "Single", "Multi", "Similar API", "Preference", "Normal",
                                        "Special", "Agent", "Overall", "n"]
    row = view.views.iloc[0]
    assert row["Language"] == "English" and row["Overall"] == "61.7" and row["n"] == "20"
    # The categories are not views of the board: their own table, one row each, accuracy in %.
    assert view.subsets is not None and len(view.subsets) == 17
    first = view.subsets.set_index("Subset").loc["Single-turn: single function"]
    assert first["Accuracy"] == "50.0" and first["n"] == "2"
    assert not any("_" in str(name) for name in [*view.subsets["Subset"], *view.subsets.columns, *view.views.columns])
    assert "**Overall 61\\.7%**" in view.summary and "Wrong value 2" in view.summary
    assert "\\_" not in view.summary  # no key (its underscores escaped for Markdown) in the summary


def test_subsets_missing_from_the_data_are_named_by_their_titles():
    report = {**example_report(), "unavailable": ["special_incomplete", "agent_multi_step"]}
    assert "Not in the data: Special: incomplete, Agent: multi\\-step." in report_view(report).summary


def test_a_toolbench_report_has_a_row_per_subset_and_the_details(tmp_path: Path):
    benchmark = get_benchmark("toolbench_static")
    samples = benchmark.load(write_toolbench(tmp_path / "tb", ("in_domain", "out_of_domain")))
    predictions = {s.id: Prediction(s.id, output=s.gold) for s in samples if s.subset == "in_domain"}
    report = benchmark.report(samples, score_all(benchmark, samples, predictions)).to_json()
    view = report_view(report)
    assert list(view.views["Subset"]) == ["In-domain", "Out-of-domain", "Both splits"]
    assert view.subsets is None  # the subsets are the views already
    assert {"Easy F1", "Hard F1"} <= set(view.views.columns)
    by_view = view.views.set_index("Subset")
    assert by_view.loc["In-domain", "Act.EM"] == "100.0" and by_view.loc["Both splits", "n"] == "10"
    assert headline(report) == ("act_em", 0.5) and score_text(report) == "Act.EM 50.0%"


def test_a_stepeval_report_keeps_empty_columns_and_counts_as_counts(tmp_path: Path):
    benchmark = get_benchmark("stepeval_audio")
    samples = benchmark.load(write_stepeval(tmp_path / "se"))
    report = benchmark.report(samples, score_all(benchmark, samples, {})).to_json()
    view = report_view(report)
    assert list(view.views["Tool"])[0] == "Macro mean (4 tools)" and len(view.views) == 5
    # Precision is undefined without calls: the column stays, empty, and the headline falls back to recall.
    assert "Precision" in view.views.columns and set(view.views["Precision"]) == {""}
    assert view.views.set_index("Tool").loc["Web search", "FN"] == "2"
    assert headline(report) == ("recall", 0.0)
    assert "16 items had no prediction" in view.summary


def test_the_submit_check_returns_the_report_as_tables(tmp_path: Path):
    context = AppContext(store=Store(tmp_path / "t.db"))
    try:
        validation, report, pending, message, _ = check_file(context, str(EXAMPLE_DIR / "predictions.jsonl"), "acebench",
                                                          "en", "built-in example", "")
    finally:
        context.close()
    assert validation["ok"] and pending is not None and "Scored" in message
    view = report_view(report)
    assert view.views.iloc[0]["Overall"] == "61.7"
    assert "Strict scoring:" in view.summary  # the strict summary the check adds


@pytest.mark.slow
def test_the_page_shows_reports_as_tables_with_the_json_behind_a_closed_toggle(tmp_path: Path):
    from ui.app import build_app

    context = AppContext(store=Store(tmp_path / "t.db"))
    try:
        demo = build_app(context)
        components = [c.get("props", {}) for c in demo.config["components"]]
    finally:
        context.close()
    raw = [p for p in components if p.get("label") == "Raw report (JSON)"]
    assert len(raw) == 2 and all(p.get("open") is False for p in raw)  # Evaluate and Submit
    labels = [str(p.get("label")) for p in components]
    assert "Report (official): as on the leaderboard" in labels
    assert "Report (official; strict summary included): per subset" in labels


@pytest.fixture
def runs(tmp_path: Path) -> Iterator[tuple[AppContext, str, str]]:
    """(context, a finished endpoint run of one category (no overall), an upload of the whole example)."""
    data = write_dataset(tmp_path / "data", 6)
    context = AppContext(store=Store(tmp_path / "t.db"))
    try:
        with ScriptedServer(reply=correct_reply) as server:
            form = {"base_url": server.base_url, "model": "partial-model", "benchmark": "acebench", "language": "en",
                    "subsets": ["normal_atom_bool"], "data_source": "local folder", "data_folder": str(data),
                    "concurrency": 2}
            run_id = context.jobs.start(run_request(context, form))
            assert wait_for_status(context, run_id, ("finished",)) == "finished"
        yield context, run_id, upload(context.store, "Example model")
    finally:
        context.close()


@pytest.mark.slow
def test_the_jobs_table_shows_the_score_of_finished_runs_and_says_when_running_ones_are_scored(runs, tmp_path: Path):
    context, run_id, _ = runs
    table = jobs_table(context)
    finished = table.set_index("run_id").loc[run_id]
    # No overall for one category: the headline falls back to the one share the run has.
    assert finished["score"] == "Atom: Bool 100.0%"
    data = write_dataset(tmp_path / "slow", 20)
    with ScriptedServer(reply=correct_reply, latency=0.3) as server:
        form = {"base_url": server.base_url, "model": "slow-model", "benchmark": "acebench", "language": "en",
                "subsets": ["normal_atom_bool"], "data_source": "local folder", "data_folder": str(data),
                "concurrency": 1}
        slow = context.jobs.start(run_request(context, form))
        try:
            wait_for_status(context, slow, ("running",))
            score = jobs_table(context).set_index("run_id").loc[slow, "score"]
            for _ in range(600):  # until the first answer is stored and scored (30 s at most)
                if score != SCORED_AT_THE_END:
                    break
                time.sleep(0.05)
                score = jobs_table(context).set_index("run_id").loc[slow, "score"]
            assert re.fullmatch(r"so far 100\.0% of \d+ items correct", score), score
        finally:
            context.jobs.cancel(slow)
            context.jobs.wait(slow, timeout=30)
    assert jobs_table(context).set_index("run_id").loc[slow, "score"] == ""  # cancelled: never scored


def test_a_running_score_is_the_share_correct_of_the_items_scored_so_far():
    assert job_score("running", None, {"scored": 4, "correct": 3}) == "so far 75.0% of 4 items correct"
    assert job_score("running", None, {"scored": 0, "correct": 0}) == SCORED_AT_THE_END
    assert job_score("queued", None, {}) == SCORED_AT_THE_END


def test_the_jobs_table_reads_every_report_in_one_query(runs, monkeypatch: pytest.MonkeyPatch):
    context, _, _ = runs
    monkeypatch.setattr(context.store, "load_report", lambda *a, **k: pytest.fail("one query per run"))
    assert list(jobs_table(context)["score"]) == ["Atom: Bool 100.0%"]


@pytest.mark.slow
def test_accuracy_vs_cost_charts_a_run_without_overall_and_says_what_is_missing(runs):
    context, run_id, _ = runs
    layout = layout_for("acebench")
    frame = board_rows("acebench", context.store)
    detailed = query_board(frame, layout, BoardQuery(view="en", details=True))
    figure = charts.accuracy_vs_cost(context.store, detailed, layout, "latency", "t")
    assert len(figure.data) == 1 and list(figure.data[0].y) == [100.0]
    assert list(figure.data[0].customdata) == ["Atom: Bool"]
    assert figure.layout.yaxis.title.text == "Atom: Bool (%)"
    tokens = charts.accuracy_vs_cost(context.store, detailed, layout, "tokens", "t")
    assert list(tokens.data[0].x) == [15.0]  # the scripted endpoint's usage
    # Without the detail columns the run has no value to plot: said so, never "no runs".
    plain = query_board(frame, layout, BoardQuery(view="en"))
    text = charts.accuracy_vs_cost(context.store, plain, layout, "latency", "t").layout.annotations[0].text
    assert "no score in any column" in text and "no runs" not in text.lower()
    published_only = query_board(frame, layout, BoardQuery(view="en", sources=("published",)))
    text = charts.accuracy_vs_cost(context.store, published_only, layout, "latency", "t").layout.annotations[0].text
    assert f"None of the {len(published_only)} charted rows was evaluated here" in text


@pytest.mark.slow
def test_error_types_are_shares_of_each_run_and_sum_to_100(runs):
    context, run_id, upload_id = runs
    frame = query_board(board_rows("acebench", context.store), layout_for("acebench"),
                        BoardQuery(view="en", sources=("evaluated", "uploaded")))
    assert set(frame["run_id"]) == {run_id, upload_id}
    figure = charts.error_types(context.store, frame, "t")
    runs_shown = list(figure.data[0].x)
    assert len(runs_shown) == 2
    for position in range(len(runs_shown)):
        assert sum(trace.y[position] for trace in figure.data) == pytest.approx(100)
    by_kind = {trace.name: list(trace.y) for trace in figure.data}
    upload_at = next(i for i, label in enumerate(runs_shown) if label.startswith("Example model"))
    # Legends read error types as a person does, not their keys.
    assert by_kind["Wrong value"][upload_at] == pytest.approx(100 * 2 / 20)  # 2 of the example's 20 items
    assert not any("_" in name for name in by_kind), sorted(by_kind)
    assert figure.layout.yaxis.range == (0, 100)
    assert figure.layout.legend.orientation == "h" and figure.layout.legend.y < 0


@pytest.mark.slow  # over half a second in the fast loop
def test_legends_sit_under_the_plot(runs):
    context, _, upload_id = runs
    layout = layout_for("acebench")
    rows = query_board(board_rows("acebench", context.store), layout, BoardQuery(view="en")).head(3)
    for figure in (charts.subset_bars(rows, layout, "t"), charts.radar(rows, layout, "t")):
        assert figure.layout.legend.orientation == "h" and figure.layout.legend.y < 0


def test_chart_axes_read_column_titles_not_keys(runs):
    context, _, _ = runs
    layout = layout_for("acebench")
    rows = query_board(board_rows("acebench", context.store), layout, BoardQuery(view="en")).head(3)
    bars = charts.subset_bars(rows, layout, "t")
    assert {"Similar API", "Preference", "Overall"} <= set(bars.data[0].x)
    assert not {"api", "pref"} & set(bars.data[0].x)
    radar = charts.radar(rows, layout, "t")
    assert "Similar API" in set(radar.data[0].theta) and "api" not in set(radar.data[0].theta)


def test_the_page_jobs_table_reads_titles_and_short_headers(runs):
    context, run_id, _ = runs
    api = jobs_table(context)
    assert list(api.columns) == list(JOB_COLUMNS) and api.iloc[0]["benchmark"] == "acebench"  # ids in the API
    page = page_jobs_table(context)
    assert all(" " not in header for header in page.columns)  # one word a header: it never needs to wrap
    row = page.iloc[0]
    assert (row["Run"], row["Benchmark"], row["Language"], row["Done"]) == (run_id, "ACEBench", "English", "6/6")
    assert row["ETA"] == "" and row["Req/s"] == ""  # a finished run: blank, never NaN
    detail, _ = job_detail(context, run_id)
    assert "on **ACEBench** (English)" in detail and "- Atom: Bool: 6/6" in detail


def test_a_report_json_survives_the_round_trip_through_the_store(runs):
    context, run_id, _ = runs
    stored = context.store.load_reports([run_id, "no-such-run"])
    assert list(stored) == [run_id] and stored[run_id] == context.store.load_report(run_id)
    assert json.dumps(report_view(stored[run_id]).views.to_dict())  # plain values, ready for the page


def test_an_odd_report_points_to_the_raw_json_instead_of_breaking_the_page():
    odd = {"benchmark": get_benchmark("toolbench_static").name, "subsets": {"in_domain": 5}, "summary": {"act_em": 0.5}}
    assert "see the raw JSON" in report_view(odd).summary
    assert score_text(odd) == "Act.EM 50.0%"  # the jobs panel still reads the summary
    assert report_view(None).summary == "" and score_text(None) == ""
