"""Hub sync: run documents (export / import between two stores) and push / pull of the results dataset
against a fake Hub."""

from __future__ import annotations

import copy
import json
import logging
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from datasets import load_dataset

from evaluators.core.errors import ToolboardError
from evaluators.core.types import Prediction, Report, SampleScore, SubsetResult, ToolCall
from evaluators.engine.redact import without_credentials
from evaluators.engine.run_document import RunDocumentError, export_run, import_run
from evaluators.engine.settings import ModelSettings, RunConfig
from evaluators.engine.store import Evidence, JSONText, Store
from evaluators.publish import dataset_rows, hub_sync
from evaluators.publish.hub_sync import HubSync
from evaluators.service.board import board_rows
from evaluators.service.submissions import check_submission, store_submission
from tests.acebench_fixtures import EXAMPLE_DIR
from tests.fake_hub_repo import PUBLIC_PATHS, FakeHubRepo, FakeRepo, pointed_hub

TOKEN = "hf_fakeToken0123456789abcdef"
REPO = "toolboard-org/toolboard-results"
API_KEY = "sk-never-export-this-0123456789"
MODES = ("official", "strict")


def make_finished_run(store: Store, model: str = "my-model", evidence: Evidence | None = None,
                      data_dir: str | None = None) -> str:
    """A run stored through the real Store API: predictions, scores and reports in both modes (and, if
    given, evidence with the first prediction); `data_dir` the data folder its settings name."""
    config = RunConfig(benchmark="acebench", language="en", subsets=("normal_atom_bool",), data_dir=data_dir,
                       model=ModelSettings(base_url="http://127.0.0.1:8000/v1", model=model, api_key_env="OPENAI_API_KEY"))
    run_id = store.create_run("acebench", "en", model, config.model.base_url, config.to_json(), "fp0123456789abcd", 3,
                              source="endpoint", notes="nightly — ü")
    store.set_status(run_id, "running")
    predictions = [
        ("normal_atom_bool", Prediction("normal_atom_bool_0", output="[Clock.setAlarm(time='07:00')]", latency=0.25,
                                        usage={"prompt_tokens": 120, "completion_tokens": 9}), 1, evidence),
        ("normal_atom_bool", Prediction("normal_atom_bool_1", tool_calls=[ToolCall("Clock.setAlarm", {"time": "08:30"})],
                                        extra={"judge": {"verdict": "ok", "raw": "是"}}), 2),
        ("normal_atom_bool", Prediction("normal_atom_bool_2", error="request_error: 503 after 6 attempts"), 6),
    ]
    store.save_batch(run_id, [], predictions)
    for mode in MODES:
        scores = [
            SampleScore("normal_atom_bool_0", "normal_atom_bool", True, rule="exact",
                        decoded=[{"Clock.setAlarm": {"time": "07:00"}}], metrics={"accuracy": 1.0}),
            SampleScore("normal_atom_bool_1", "normal_atom_bool", mode == "official",
                        error_type=None if mode == "official" else "wrong_arguments", detail="time differs",
                        metrics={"process_score": 0.5}, metadata={"rationale": "time differs"}),
            SampleScore("normal_atom_bool_2", "normal_atom_bool", False, error_type="request_error"),
        ]
        accuracy = sum(s.correct for s in scores) / len(scores)
        report = Report("acebench", mode, {"normal_atom_bool": SubsetResult(3, {"accuracy": round(accuracy, 3)})},
                        {"normal": round(accuracy, 3), "overall": None}, {"request_error": 1}, language="en")
        store.save_scores(run_id, mode, scores, report)
    store.set_status(run_id, "finished", "3 samples, 1 request errors")
    return run_id


def everything_about(store: Store, run_id: str) -> dict[str, Any]:
    """What the leaderboard and the evidence views read, to compare two stores."""
    run = store.get_run(run_id)
    return {
        "run": {**vars(run)},
        "predictions": store.load_predictions(run_id),
        "scores": {mode: store.load_scores(run_id, mode) for mode in MODES},
        "reports": {mode: store.load_report(run_id, mode) for mode in MODES},
    }


def table_counts(store: Store) -> dict[str, int]:
    return {table: store._query(f"SELECT COUNT(*) FROM {table}")[0][0] for table in Store.RUN_TABLES}


@pytest.fixture
def source(tmp_path: Path) -> Iterator[Store]:
    store = Store(tmp_path / "source.db")
    yield store
    store.close()


@pytest.fixture
def target(tmp_path: Path) -> Iterator[Store]:
    store = Store(tmp_path / "target.db")
    yield store
    store.close()


# ---- documents ---------------------------------------------------------------------------------


def test_export_import_roundtrip_between_two_stores(source: Store, target: Store, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    run_id = make_finished_run(source)
    document = export_run(source, run_id)
    text = json.dumps(document, ensure_ascii=False)
    assert API_KEY not in text
    assert document["run"]["config"]["model"]["api_key_env"] == "OPENAI_API_KEY"
    assert document["version"] == 2 and len(document["samples"]) == 3 and len(document["reports"]) == 2
    assert [sorted(sample["scores"]) for sample in document["samples"]] == [["official", "strict"]] * 3
    assert import_run(target, json.loads(text)) is True
    assert everything_about(target, run_id) == everything_about(source, run_id)
    assert target.get_run(run_id).source == "endpoint" and target.get_run(run_id).notes == "nightly — ü"
    assert export_run(target, run_id) == document


def test_import_of_a_run_already_stored_changes_nothing(source: Store, target: Store):
    run_id = make_finished_run(source)
    document = export_run(source, run_id)
    assert import_run(target, document) is True
    before = table_counts(target)
    assert import_run(target, document) is False
    assert import_run(source, document) is False
    assert table_counts(target) == before


def test_only_finished_runs_are_exported(source: Store):
    run_id = source.create_run("acebench", "en", "m", "http://h/v1", {}, "fp", 1)
    source.set_status(run_id, "running")
    with pytest.raises(ToolboardError, match="is running; only finished runs are exported"):
        export_run(source, run_id)
    with pytest.raises(ToolboardError, match="no run 'nope'"):
        export_run(source, "nope")


def test_export_removes_credentials_from_base_urls(source: Store):
    config = RunConfig(benchmark="acebench", model=ModelSettings(base_url="https://bob:pw123@api.example.com/v1?api_key=k1&x=1",
                                                                 model="m"))
    run_id = source.create_run("acebench", "en", "m", config.model.base_url, config.to_json(), "fp", 0)
    source.set_status(run_id, "finished")
    document = export_run(source, run_id)
    assert document["run"]["base_url"] == "https://api.example.com/v1?x=1"
    assert document["run"]["config"]["model"]["base_url"] == "https://api.example.com/v1?x=1"
    assert "pw123" not in json.dumps(document) and "k1" not in json.dumps(document)
    assert without_credentials("http://[::1]:8000/v1") == "http://[::1]:8000/v1"


def corruptions() -> list[tuple[str, Any, str]]:
    """(what, how to break a document, the message expected)."""
    def drop(path: list[Any]) -> Any:
        def apply(document: dict[str, Any]) -> None:
            node = document
            for key in path[:-1]:
                node = node[key]
            del node[path[-1]]
        return apply

    def put(path: list[Any], value: Any) -> Any:
        def apply(document: dict[str, Any]) -> None:
            node = document
            for key in path[:-1]:
                node = node[key]
            node[path[-1]] = value
        return apply

    return [
        ("wrong format", put(["format"], "something-else"), "not a run document"),
        ("newer version", put(["version"], 99), "version 99 is not supported"),
        ("run missing", drop(["run"]), "the document: missing field 'run'"),
        ("run id missing", drop(["run", "id"]), "missing field 'id'"),
        ("path in run id", put(["run", "id"], "../../etc"), "the id must be letters"),
        ("unfinished", put(["run", "status"], "running"), "only finished runs are imported"),
        ("total as text", put(["run", "total"], "3"), "run: field 'total' must be a whole number, not a string"),
        ("config as text", put(["run", "config"], "{}"), "field 'config' must be an object, not a string"),
        ("a version 1 document", put(["version"], 1), "version 1 is not supported: this toolboard reads version 2"),
        ("samples not a list", put(["samples"], {"a": 1}), "'samples' must be a list"),
        ("sample not an object", put(["samples", 1], "oops"), r"samples\[1\] must be an object"),
        ("sample id missing", drop(["samples", 2, "id"]), r"samples\[2\]: missing field 'id'"),
        ("scores not an object", put(["samples", 0, "scores"], []), r"samples\[0\]: field 'scores' must be an object, not a list"),
        ("nested value in a text field", put(["samples", 0, "scores", "official", "explanation"], {"x": 1}),
         r"samples\[0\].scores\['official'\]: field 'explanation' must be a string or null, not an object"),
        ("evidence not an object", put(["samples", 0, "evidence"], [1]), "'evidence' must be an object or null"),
        ("events not a list", put(["samples", 0, "events"], {"a": 1}), "field 'events' must be a list of model calls, the note kept in their place"),
        ("report not an object", put(["reports", 1, "report"], None), r"reports\[1\]: field 'report' must be an object, not null"),
        ("unknown column", put(["samples", 2, "prediction", "surprise"], 1), r"samples\[2\].prediction: unknown field 'surprise' \(written by a newer toolboard\?\)"),
        ("unknown score field", put(["samples", 2, "scores", "strict", "surprise"], 1), r"samples\[2\].scores\['strict'\]: unknown field 'surprise'"),
        ("duplicate sample", put(["samples", 2, "id"], "normal_atom_bool_0"), "nothing was written"),
        ("verdict as null", put(["samples", 2, "scores", "strict", "value"], None), r"samples\[2\].scores\['strict'\]: field 'value' must be a number, not null"),
        ("null in a not-null column", put(["run", "source"], None), "field 'source' must be a string, not null"),
    ]


@pytest.mark.parametrize("what, corrupt, message", corruptions(), ids=[c[0] for c in corruptions()])
def test_a_corrupt_document_is_refused_and_the_store_is_unchanged(source: Store, target: Store, what: str, corrupt: Any,
                                                                   message: str):
    other = make_finished_run(target, model="already-here")
    document = copy.deepcopy(export_run(source, make_finished_run(source)))
    before = table_counts(target)
    corrupt(document)
    with pytest.raises(ToolboardError, match=message):
        import_run(target, document)
    assert table_counts(target) == before
    assert [run.id for run in target.list_runs()] == [other]


def test_a_failure_inside_the_transaction_writes_nothing(source: Store, target: Store):
    document = export_run(source, make_finished_run(source))
    document["reports"].append(dict(document["reports"][0]))  # same (run, mode) twice: fails on the last insert
    with pytest.raises(ToolboardError, match="nothing was written"):
        import_run(target, document)
    assert table_counts(target) == dict.fromkeys(Store.RUN_TABLES, 0)


def test_non_objects_are_refused(target: Store):
    for document in (None, [], "text"):
        with pytest.raises(RunDocumentError, match="a run document is a JSON object"):
            import_run(target, document)


# ---- the Hub ---------------------------------------------------------------------------------------


@pytest.fixture
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHubRepo]:
    """A fake Hub that only accepts TOKEN, with HF_ENDPOINT pointing at it (fake_hub_repo.pointed_hub)."""
    with pointed_hub(tmp_path, monkeypatch, TOKEN) as server:
        yield server


def test_from_env_is_off_without_a_repo(source: Store, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("TOOLBOARD_HUB_REPO", raising=False)
    assert hub_sync.from_env(source) is None
    monkeypatch.setenv("TOOLBOARD_HUB_REPO", REPO)
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    sync = hub_sync.from_env(source)
    assert sync is not None and sync.repo_id == REPO and TOKEN not in repr(sync)
    monkeypatch.setenv("TOOLBOARD_HUB_REPO", "no-slash")
    with pytest.raises(ToolboardError, match="should look like 'org/name'"):
        hub_sync.from_env(source)


def pushed_paths(run_id: str) -> list[str]:
    return [f"runs/{run_id}.parquet", f"details/{run_id}.parquet", "contents/train-00000-of-00001.parquet", "README.md"]


def same_but_the_endpoint(target: Store, source: Store, run_id: str) -> None:
    """The run as rebuilt from the dataset: everything but its endpoint (base URL and key variable, emptied)."""
    rebuilt, original = everything_about(target, run_id), everything_about(source, run_id)
    for name in ("base_url", "api_key_env"):
        assert rebuilt["run"]["config"]["model"].pop(name) == ""
        original["run"]["config"]["model"].pop(name)
    assert rebuilt["run"].pop("base_url") == ""
    original["run"].pop("base_url")
    assert rebuilt == original


@pytest.mark.slow
def test_a_run_whose_request_held_a_lone_surrogate_pushes_and_pulls(hub: FakeHubRepo, source: Store, target: Store):
    """A model's reply with a lone surrogate, fed back in a dialogue, is in the request kept as evidence:
    the run's record still encodes, and comes back whole."""
    request = JSONText(json.dumps({"requests": 2, "body": {"messages": [{"role": "assistant", "content": "bad \ud800 reply"}]}}))
    run_id = make_finished_run(source, evidence=Evidence({"Clock.setAlarm": {"time": "07:00"}}, request))
    assert HubSync(REPO, TOKEN, source).push(run_id) == pushed_paths(run_id)
    assert HubSync(REPO, TOKEN, target).pull() == 1
    kept = target.load_sample_evidence(run_id, "normal_atom_bool_0")
    assert kept.request["body"]["messages"][0]["content"] == "bad \\ud800 reply" and kept.gold == {"Clock.setAlarm": {"time": "07:00"}}


@pytest.mark.slow
def test_push_then_pull_rebuilds_the_board_in_a_fresh_store(hub: FakeHubRepo, source: Store, target: Store,
                                                           monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    first, second = make_finished_run(source, "model-a"), make_finished_run(source, "model-b")
    monkeypatch.setenv("TOOLBOARD_HUB_REPO", REPO)
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    pusher = hub_sync.from_env(source)
    assert pusher is not None and pusher.endpoint == hub.endpoint
    assert pusher.push(first) == pushed_paths(first)
    pusher.push_in_background(second).join(30)
    stored = hub.files(REPO)
    assert sorted(stored) == sorted({*pushed_paths(first), *pushed_paths(second)})
    assert hub.repos[f"datasets/{REPO}"].private
    assert len(hub.repos[f"datasets/{REPO}"].commits) == 3  # created, then one commit per run

    puller = HubSync(REPO, TOKEN, target)
    assert puller.pull() == 2
    assert puller.pull() == 0  # already there
    requests = list(hub.requests)
    for run_id in (first, second):
        same_but_the_endpoint(target, source, run_id)
    for mode in MODES:  # what a restarted Space shows
        assert board_rows("acebench", target, mode).equals(board_rows("acebench", source, mode))
    assert any(r.path.startswith("/api/datasets/") and "/commit/" in r.path for r in requests)
    assert any("/resolve/" in r.path and r.method == "GET" for r in requests)
    for request in requests:
        if request.path not in PUBLIC_PATHS:
            assert request.authorization == f"Bearer {TOKEN}"  # the only place the token goes
        assert TOKEN not in request.path and TOKEN not in request.body
        assert API_KEY not in request.body and "127.0.0.1:8000" not in request.body and "OPENAI_API_KEY" not in request.body

    folder = repo_folder(hub, tmp_path / "copy")  # the repo is a results dataset anyone with access can load
    contents = load_dataset(str(folder), "contents", split="train", cache_dir=str(tmp_path / "cache")).to_pandas()
    assert {first, second} <= set(contents["run_id"]) and "published" in set(contents["source"])
    details = load_dataset(str(folder), "details", split="train", cache_dir=str(tmp_path / "cache")).to_pandas()
    assert sorted(set(details["run_id"])) == sorted([first, second]) and len(details) == 2 * 3 * len(MODES)
    runs = load_dataset(str(folder), "runs", split="train", cache_dir=str(tmp_path / "cache")).to_pandas()
    assert sorted(runs["run_id"]) == sorted([first, second])


def repo_folder(hub: FakeHubRepo, folder: Path) -> Path:
    """The fake repo's files at its head, written into `folder`."""
    for path, content in hub.files(REPO).items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_bytes(content)
    return folder


@pytest.mark.slow
def test_a_run_pushed_again_replaces_its_own_files(hub: FakeHubRepo, source: Store, target: Store):
    run_id = make_finished_run(source)
    sync = HubSync(REPO, TOKEN, source)
    sync.push(run_id)
    source.set_shared(run_id, True)
    sync.push(run_id)  # sharing pushes again: the copy must say shared too
    assert sorted(hub.files(REPO)) == sorted(pushed_paths(run_id))
    assert HubSync(REPO, TOKEN, target).pull() == 1
    assert target.get_run(run_id).shared


@pytest.mark.slow
def test_pull_skips_damaged_files_and_imports_the_rest(hub: FakeHubRepo, source: Store, target: Store,
                                                       caplog: pytest.LogCaptureFixture):
    run_id, other = make_finished_run(source), make_finished_run(source, "model-b")
    sync = HubSync(REPO, TOKEN, source)
    sync.push(run_id)
    sync.push(other)
    repo = hub.repos[f"datasets/{REPO}"]
    shard = repo.commits[repo.head][f"runs/{other}.parquet"]
    repo.commits[repo.head][f"runs/{other}.parquet"] = shard[: len(shard) // 2]  # truncated
    with caplog.at_level(logging.WARNING, logger="evaluators.publish.hub_sync"):
        assert HubSync(REPO, TOKEN, target).pull() == 1
    assert f"skipped runs/{other}.parquet" in caplog.text and "not a readable Parquet file" in caplog.text
    assert "truncated" in caplog.text
    assert target.has_run(run_id) and not target.has_run(other)
    assert not board_rows("acebench", target).empty  # the board still loads


def test_pull_reads_only_the_results_dataset_form(hub: FakeHubRepo, source: Store, target: Store):
    """Runs are kept as runs/<id>.parquet; a runs/<id>.json file (a layout that never shipped) is not read."""
    run_id = make_finished_run(source, "model-a")
    with FakeRepoWriter(hub) as write:
        write(f"runs/{run_id}.json", json.dumps(export_run(source, run_id)).encode())
    assert HubSync(REPO, TOKEN, target).pull() == 0
    assert target.list_runs() == []


class FakeRepoWriter:
    """Files put straight into the fake repo as one commit (a repo some other tool wrote)."""

    def __init__(self, hub: FakeHubRepo):
        self.hub = hub
        self.files: dict[str, bytes] = {}

    def __enter__(self) -> Any:
        return self.files.__setitem__

    def __exit__(self, *exc: Any) -> None:
        repo = self.hub.repos.setdefault(f"datasets/{REPO}", FakeRepo(private=True))
        repo.head = "1" * 40
        repo.commits[repo.head] = dict(self.files)


def test_pull_of_a_repo_that_does_not_exist_yet_imports_nothing(hub: FakeHubRepo, target: Store):
    assert HubSync(REPO, TOKEN, target).pull() == 0
    assert target.list_runs() == []


def test_hub_failures_are_clear_and_never_show_the_token(hub: FakeHubRepo, source: Store, target: Store,
                                                         caplog: pytest.LogCaptureFixture):
    run_id = make_finished_run(source)
    wrong = "hf_wrongToken9876543210zyxw"
    with pytest.raises(ToolboardError, match=f"hub sync: could not push run {run_id} to dataset {REPO}") as pushed:
        HubSync(REPO, wrong, source).push(run_id)
    with pytest.raises(ToolboardError, match=f"hub sync: could not pull runs from dataset {REPO}") as pulled:
        HubSync(REPO, wrong, target).pull()
    with caplog.at_level(logging.WARNING, logger="evaluators.publish.hub_sync"):
        HubSync(REPO, wrong, source).push_in_background(run_id).join(30)
    assert "could not push run" in caplog.text
    with socket.socket() as closed:  # a port nobody listens on: a network failure
        closed.bind(("127.0.0.1", 0))
        endpoint = f"http://127.0.0.1:{closed.getsockname()[1]}"
    with pytest.raises(ToolboardError, match="could not push run") as unreachable:
        HubSync(REPO, wrong, source, endpoint=endpoint).push(run_id)
    for error in (pushed.value, pulled.value, unreachable.value):
        assert wrong not in str(error) and error.__cause__ is None
    assert wrong not in caplog.text
    assert target.list_runs() == []


# ---- runs scored on a built-in example: never pushed ---------------------------------------------


def example_upload(store: Store, model: str) -> str:
    """An upload checked against the built-in example's items (as the Submit tab's "built-in example")."""
    submission = check_submission(EXAMPLE_DIR / "predictions.jsonl", "acebench", language="en", data_dir=EXAMPLE_DIR)
    assert submission.on_example_data
    return store_submission(store, submission, model)


def pushed_text(hub: FakeHubRepo) -> str:
    """Every file of the repo's head as text: Parquet files as their rows (compression hides no value), the card."""
    texts = []
    for path, content in hub.files(REPO).items():
        if path.endswith(".parquet"):
            texts.append(json.dumps(pq.read_table(pa.BufferReader(content)).to_pylist(), default=str))
        else:
            texts.append(content.decode("utf-8"))
    return "\n".join(texts)


def loaded_run_ids(hub: FakeHubRepo, folder: Path, config: str) -> set[str]:
    copy = repo_folder(hub, folder)
    return set(load_dataset(str(copy), config, split="train", cache_dir=str(folder.parent / "cache"))["run_id"])


@pytest.mark.slow
def test_runs_and_uploads_on_example_data_are_never_pushed(hub: FakeHubRepo, source: Store, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch,
                                                           caplog: pytest.LogCaptureFixture):
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    real = make_finished_run(source, "real-data-model", data_dir=str(tmp_path / "acebench-data"))
    toy_run = make_finished_run(source, "toy-run-model", data_dir=str(EXAMPLE_DIR))
    toy_upload = example_upload(source, "toy-upload-model")
    sync = HubSync(REPO, TOKEN, source)
    with caplog.at_level(logging.INFO, logger="evaluators.publish.hub_sync"):
        assert sync.push(toy_run) == []
        assert hub.repos == {} and hub.requests == []  # nothing sent: not even the repo is made for it
        assert sync.push(real) == pushed_paths(real)
        sent = len(hub.requests)
        sync.push_in_background(toy_upload).join(30)
        assert len(hub.requests) == sent
    assert sorted(hub.files(REPO)) == sorted(pushed_paths(real))
    assert loaded_run_ids(hub, tmp_path / "copy", "runs") == {real}
    assert loaded_run_ids(hub, tmp_path / "copy", "details") == {real}
    assert real in loaded_run_ids(hub, tmp_path / "copy", "contents")
    text = pushed_text(hub)
    assert "real-data-model" in text
    for toy in (toy_run, toy_upload, "toy-run-model", "toy-upload-model"):
        assert toy not in text
    left_out = [record for record in caplog.records if "example data" in record.getMessage()]
    assert [record.levelno for record in left_out] == [logging.INFO, logging.INFO]
    assert [f"run {toy}" in record.getMessage() and "left out 1 run" in record.getMessage()
            for record, toy in zip(left_out, (toy_run, toy_upload))] == [True, True]
    for secret in ("127.0.0.1:8000", TOKEN, API_KEY, "OPENAI_API_KEY", str(EXAMPLE_DIR)):
        assert secret not in caplog.text


@pytest.mark.slow
def test_a_run_left_out_stays_left_out_and_real_runs_stay_as_pushed_after_a_restart(
        hub: FakeHubRepo, source: Store, target: Store, tmp_path: Path):
    """A Space restarts with a fresh store rebuilt by pull: the example's run never comes back, a later push
    (here or there) leaves it out again, and the real run's files stay byte for byte as first pushed."""
    real = make_finished_run(source, "real-data-model")
    toy = make_finished_run(source, "toy-run-model", data_dir=str(EXAMPLE_DIR))
    sync = HubSync(REPO, TOKEN, source)
    sync.push(real)
    sync.push(toy)
    first = {path: hub.files(REPO)[path] for path in pushed_paths(real)[:2]}

    assert HubSync(REPO, TOKEN, target).pull() == 1  # the restarted Space
    assert target.has_run(real) and not target.has_run(toy)
    restarted = HubSync(REPO, TOKEN, target)
    later = make_finished_run(target, "later-model")
    toy_again = example_upload(target, "toy-upload-model")
    assert restarted.push(toy_again) == []
    assert restarted.push(later) == pushed_paths(later)
    sync.push(toy)  # the store that ran it pushes it again (shared): still left out
    assert sorted(hub.files(REPO)) == sorted({*pushed_paths(real), *pushed_paths(later)})
    assert {path: hub.files(REPO)[path] for path in first} == first
    assert loaded_run_ids(hub, tmp_path / "copy", "runs") == {real, later}
    text = pushed_text(hub)
    for gone in (toy, toy_again, "toy-run-model", "toy-upload-model"):
        assert gone not in text


@pytest.mark.slow
def test_files_an_earlier_version_pushed_for_a_run_on_example_data_are_deleted_by_the_next_push(
        hub: FakeHubRepo, source: Store, tmp_path: Path, caplog: pytest.LogCaptureFixture):
    real = make_finished_run(source, "real-data-model")
    toy = make_finished_run(source, "toy-run-model", data_dir=str(EXAMPLE_DIR))
    sync = HubSync(REPO, TOKEN, source)
    sync.push(real)
    with pytest.MonkeyPatch.context() as earlier_version:  # one that pushed every run
        earlier_version.setattr(hub_sync, "run_on_example_data", lambda run: False)
        earlier_version.setattr(dataset_rows, "run_on_example_data", lambda run: False)
        assert sync.push(toy) == pushed_paths(toy)
    first = {path: hub.files(REPO)[path] for path in pushed_paths(real)[:2]}
    later = make_finished_run(source, "later-model")
    with caplog.at_level(logging.INFO, logger="evaluators.publish.hub_sync"):
        assert sync.push(later) == pushed_paths(later)
    assert sorted(hub.files(REPO)) == sorted({*pushed_paths(real), *pushed_paths(later)})
    assert {path: hub.files(REPO)[path] for path in first} == first
    assert "deleted the files of 1 run scored on the built-in example data" in caplog.text
    assert loaded_run_ids(hub, tmp_path / "copy", "details") == {real, later}
    assert toy not in pushed_text(hub) and "toy-run-model" not in pushed_text(hub)
