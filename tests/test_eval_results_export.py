"""A run's figures as the Hub's `.eval_results` entries: written with huggingface_hub's own types, read back with
its own parser (parse_eval_result_entries) to the values the board shows; a run that is not the board's ranked
experiment (or not finished, an upload, a benchmark with no Hub task) refused with the reason and nothing written;
`--open-pr` making exactly one pull-request commit holding exactly that file on the project's fake Hub.

The runs are real (the scripted server, a real store). The ranking rule has its own tests; where a test needs a run
the board ranks, a small run stands in with the rule answering "ranked" (`ranked` below), and a benchmark with a
Hub declaration is the registered ACEBench given one here (the declared τ²-bench one is checked as declared)."""

from __future__ import annotations

import dataclasses
import datetime
from pathlib import Path

import pytest
import yaml
from huggingface_hub import HfApi, parse_eval_result_entries

from evaluators.core import registry
from evaluators.core.declarations import HubBenchmark, HubTask
from evaluators.core.errors import ToolboardError
from evaluators.core.registry import get_benchmark
from evaluators.engine.store import Store
from evaluators.publish import eval_results
from evaluators.publish.board_table import board_rows
from evaluators.publish.eval_results import NotExportable, eval_result_file, open_pull_request, write_eval_results
from tests.conftest import run_cli
from tests.engine_fixtures import correct_reply, run_to_end, scripted_run_config, write_dataset
from tests.fake_hub_repo import pointed_hub
from tests.scripted_server import ScriptedServer

TOKEN = "hf_operator_token"
HUB = HubBenchmark(dataset_id="example-org/acebench", file_stem="acebench",
                   tasks=(HubTask("atom_bool", "en", "normal_atom_bool"),),
                   setup="the en split")


@pytest.fixture
def store(tmp_path: Path) -> Store:
    made = Store(tmp_path / "runs.sqlite")
    data = write_dataset(tmp_path / "data", 8)
    with ScriptedServer(reply=correct_reply) as server:
        run_to_end(made, scripted_run_config(server, data))
    return made


@pytest.fixture
def declared(monkeypatch: pytest.MonkeyPatch) -> None:
    """ACEBench with a Hub declaration of one task (its board's normal_atom_bool accuracy)."""
    monkeypatch.setitem(registry._FOUND, "acebench", dataclasses.replace(get_benchmark("acebench"), hub=HUB))


@pytest.fixture
def ranked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(eval_results, "apart_reason", lambda *args, **kwargs: "")


def _run_id(store: Store) -> str:
    return store.list_runs()[0].id


def test_the_file_reads_back_with_the_hubs_parser_as_the_board_shows_it(store: Store, declared: None, ranked: None,
                                                                      tmp_path: Path):
    run_id = _run_id(store)
    written = write_eval_results(store, run_id, tmp_path / "model-repo", source_repo="org/toolboard-results")
    assert written == tmp_path / "model-repo" / ".eval_results" / "acebench_en.yaml"  # the run's language
    entries = parse_eval_result_entries(yaml.safe_load(written.read_text()))
    board = board_rows("acebench", store)
    shown = board[(board["run_id"] == run_id) & (board["view"] == "en")].iloc[0]["normal_atom_bool"]
    assert len(entries) == 1
    entry = entries[0]
    assert (entry.dataset_id, entry.task_id) == ("example-org/acebench", "atom_bool")
    assert entry.value == pytest.approx(round(shown * 100, 2)) and entry.value == 100.0
    finished = store.list_runs()[0].finished_at
    assert finished is not None
    assert entry.date == datetime.datetime.fromtimestamp(finished, datetime.UTC).date().isoformat()
    assert entry.source_url == "https://huggingface.co/datasets/org/toolboard-results"
    assert run_id in (entry.source_name or "") and run_id in (entry.notes or "")
    assert "the en split" in (entry.notes or "") and "prompt mode" in (entry.notes or "")
    assert not list(written.parent.glob("*.part"))


def test_runs_that_do_not_rank_are_refused_with_the_reason_and_nothing_is_written(store: Store, declared: None,
                                                                                  tmp_path: Path):
    run_id = _run_id(store)
    with pytest.raises(NotExportable, match="not the board's ranked experiment.*own prompts; partial: 1 of 17"):
        write_eval_results(store, run_id, tmp_path / "repo")
    assert not (tmp_path / "repo").exists()


def test_a_benchmark_without_a_hub_task_an_unfinished_run_and_an_upload_are_refused(store: Store, ranked: None,
                                                                                    monkeypatch: pytest.MonkeyPatch):
    run_id = _run_id(store)
    with pytest.raises(NotExportable, match="no Hub benchmark dataset measures ACEBench"):
        eval_result_file(store, run_id)
    monkeypatch.setitem(registry._FOUND, "acebench", dataclasses.replace(get_benchmark("acebench"), hub=HUB))
    store.set_status(run_id, "interrupted", "stopped")
    with pytest.raises(NotExportable, match="is interrupted, not finished"):
        eval_result_file(store, run_id)
    with pytest.raises(ToolboardError, match="no run 'nope'"):
        eval_result_file(store, "nope")
    missing = dataclasses.replace(HUB, tasks=(HubTask("atom_enum", "en", "normal_atom_enum"),))
    store.set_status(run_id, "finished", "done")
    monkeypatch.setitem(registry._FOUND, "acebench", dataclasses.replace(get_benchmark("acebench"), hub=missing))
    with pytest.raises(NotExportable, match="no figure for atom_enum .*partial run"):
        eval_result_file(store, run_id)


def test_a_declaration_naming_no_board_figure_is_refused_when_the_benchmark_is_made():
    wrong = dataclasses.replace(HUB, tasks=(HubTask("x", "en", "no_such_column"),))
    with pytest.raises(ToolboardError, match="Hub task 'x' reads en/no_such_column"):
        dataclasses.replace(get_benchmark("acebench"), hub=wrong)


def test_tau2_declares_one_task_per_domain_read_from_its_pass_1():
    hub = get_benchmark("tau2").hub
    assert hub is not None and hub.dataset_id == "HuggingFaceH4/tau2-bench-data"
    assert [(t.task_id, t.view, t.column) for t in hub.tasks] == [
        (f"tau2_bench_{d}", d, "pass_1") for d in ("airline", "retail", "telecom")]
    assert "base split (airline 50, retail 114, telecom 114 tasks)" in hub.setup
    assert get_benchmark("bfcl").hub is None  # the Hub's BFCL tasks (v2, v3) are not BFCL v4's figures


def test_open_pr_makes_one_pull_request_commit_holding_exactly_the_file(store: Store, declared: None, ranked: None,
                                                                         tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch):
    run_id = _run_id(store)
    expected = eval_result_file(store, run_id)
    with pointed_hub(tmp_path, monkeypatch, TOKEN) as hub:
        HfApi(endpoint=hub.endpoint, token=TOKEN).create_repo("org/my-model")
        before = dict(hub.files("org/my-model", "models"))
        url = open_pull_request(store, run_id, "org/my-model", TOKEN, endpoint=hub.endpoint)
        repo = hub.repos["models/org/my-model"]
        assert url.endswith("/models/org/my-model/discussions/1")
        assert len(repo.pull_requests) == 1 and run_id in repo.pull_requests[0][1]
        added = {path: content for path, content in repo.commits[repo.pull_requests[0][0]].items()
                 if before.get(path) != content}
        assert added == {expected.path: expected.text.encode()}
        assert hub.files("org/my-model", "models") == before  # the model's main branch is untouched
        with pytest.raises(ToolboardError, match="org/other: the pull request could not be opened") as refused:
            open_pull_request(store, run_id, "org/other", TOKEN, endpoint=hub.endpoint)
        assert TOKEN not in str(refused.value)


@pytest.mark.slow
def test_the_cli_refuses_with_the_reason_and_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    home = tmp_path / "home"
    made = Store(home / "toolboard.db")
    data = write_dataset(tmp_path / "data", 3)
    with ScriptedServer(reply=correct_reply) as server:
        run_to_end(made, scripted_run_config(server, data))
    run_id = _run_id(made)
    made.close()
    monkeypatch.setenv("TOOLBOARD_HOME", str(home))
    monkeypatch.delenv("HF_TOKEN", raising=False)
    target = tmp_path / "model-repo"
    refused = run_cli("export", run_id, "--eval-results", str(target))
    assert refused.returncode != 0 and "no Hub benchmark dataset measures ACEBench" in refused.stderr
    no_token = run_cli("export", run_id, "--open-pr", "org/my-model")
    assert no_token.returncode != 0 and "--open-pr needs a Hugging Face token in HF_TOKEN" in no_token.stderr
    no_run = run_cli("export", "--eval-results", str(target))
    assert no_run.returncode != 0 and "--eval-results and --open-pr need RUN_ID" in no_run.stderr
    assert not target.exists()
