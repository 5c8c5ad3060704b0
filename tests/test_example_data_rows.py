"""Rows scored on a benchmark's built-in example (a few items shipped to try the app) never join the board, the
Overview or the results dataset's contents: an upload checked against it, or a run that read it. They stay in the
store, for their owner in Explore and the jobs panel, labelled "example data"; the Submit tab says why."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from evaluators.core.registry import get_benchmark
from evaluators.engine.store import Store
from evaluators.publish.dataset_rows import contents_rows
from evaluators.publish.ranking_rule import on_example_data
from evaluators.service.board import board_rows
from evaluators.service.overview import overview_rows
from evaluators.service.submissions import check_submission, store_submission
from tests.acebench_fixtures import EXAMPLE_DIR
from tests.app_fixtures import running_app, wait_for_status, write_predictions
from tests.scripted_server import ScriptedServer
from ui.context import AppContext
from ui.run_form import run_request

PREDICTIONS = EXAMPLE_DIR / "predictions.jsonl"


def copied_items(root: Path) -> Path:
    """The example's items in a folder of one's own: real data as far as the board can tell."""
    return Path(shutil.copytree(EXAMPLE_DIR, root / "my-acebench-items"))


def test_uploads_and_runs_on_the_example_never_join_the_board_the_overview_or_the_contents(tmp_path: Path):
    store = Store(tmp_path / "t.db")
    toy = check_submission(PREDICTIONS, "acebench", language="en", data_dir=EXAMPLE_DIR)
    assert toy.on_example_data and toy.validation()["example_data"]
    toy_run = store_submission(store, toy, "toy-example-model")
    # the same items from a folder of one's own are data like any other: that row joins (not ranked: uploaded)
    own = check_submission(PREDICTIONS, "acebench", language="en", data_dir=copied_items(tmp_path))
    assert not own.on_example_data
    own_run = store_submission(store, own, "own-folder-model")
    frame = board_rows("acebench", store)
    assert "own-folder-model" in set(frame["model"]) and "toy-example-model" not in set(frame["model"])
    assert toy_run not in set(frame["run_id"]) and own_run in set(frame["run_id"])
    overview = overview_rows({"acebench": frame})
    assert "toy-example-model" not in json.dumps(overview.to_dict("records"), default=str)
    contents = contents_rows(store, ["acebench"])
    assert "own-folder-model" in set(contents["model"]) and "toy-example-model" not in set(contents["model"])
    # kept in the store for its owner (Explore lists finished runs)
    assert store.get_run(toy_run).status == "finished" and store.load_report(toy_run) is not None


def test_the_rule_knows_the_example_folder_here_and_in_another_install():
    acebench = get_benchmark("acebench")
    assert on_example_data({"data_dir": str(EXAMPLE_DIR)}, acebench)
    assert on_example_data({"data_dir": "/home/user/app/evaluators/benchmarks/acebench/example"}, acebench)
    assert not on_example_data({"data_dir": "/data/acebench"}, acebench)
    assert not on_example_data({"data_dir": None}, acebench) and not on_example_data({}, acebench)
    assert not on_example_data({"data_dir": str(EXAMPLE_DIR)}, get_benchmark("bfcl"))  # no example of its own


def test_an_evaluated_run_on_the_example_stays_off_the_board_and_is_labelled_in_explore_and_jobs(tmp_path: Path):
    from tests.engine_fixtures import correct_reply
    from ui.explore_tab import run_choices
    from ui.jobs_panel import job_detail, jobs_table

    context = AppContext(store=Store(tmp_path / "t.db"))
    try:
        with ScriptedServer(reply=correct_reply) as server:
            form = {"base_url": server.base_url, "model": "demo-like-model", "benchmark": "acebench", "language": "en",
                    "subsets": ["normal_atom_bool"], "data_source": "built-in example", "concurrency": 2}
            run_id = context.jobs.start(run_request(context, form))
            assert context.jobs.wait(run_id, timeout=60) == "finished"
        assert "demo-like-model" not in set(board_rows("acebench", context.store)["model"])
        assert "demo-like-model" not in set(context.board_frame("acebench", "official")["model"])
        label = dict((value, label) for label, value in run_choices(context))[run_id]
        assert "example data" in label
        detail, _ = job_detail(context, run_id)
        assert "example data" in detail
        shown = jobs_table(context)
        assert "example data" in " ".join(str(value) for value in shown.loc[shown["run_id"] == run_id].iloc[0])
    finally:
        context.close()


@pytest.mark.slow
def test_the_api_reports_every_problem_at_once_and_says_an_example_score_is_not_on_the_board(tmp_path: Path):
    from gradio_client import Client, handle_file

    with running_app(tmp_path / "app") as app:
        client = Client(app.url, verbose=False)
        bad = write_predictions(tmp_path / "two-problems.jsonl", [
            {"id": "normal_atom_bool_0", "output": "[x()]"}, "{broken json", {"id": "normal_atom_enum_0"}])
        validation, report, message = client.predict(handle_file(str(bad)), "acebench", "en", "built-in example", "",
                                                     api_name="/check_upload")
        assert report is None and validation["problems"] == 2
        assert "two-problems.jsonl, line 2: invalid JSON" in message
        assert "two-problems.jsonl, line 3: needs 'output'" in message
        validation, report, message = client.predict(handle_file(str(PREDICTIONS)), "acebench", "en",
                                                     "built-in example", "", api_name="/check_upload")
        assert validation["ok"] and validation["example_data"]
        assert "not on the leaderboard" in message.lower() and "example data" in message and "61.7%" in message
        added = client.predict("toy-example-model", "", api_name="/add_upload")
        assert "Added as run" in added and "not on the leaderboard" in added
        assert "toy-example-model" not in set(app.context.board_frame("acebench", "official")["model"])
        wait_for_status(app.context, app.context.store.list_runs()[0].id, ("finished",))
