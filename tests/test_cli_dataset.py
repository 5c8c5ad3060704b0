"""`python -m evaluators export --dataset DIR [--run ID ...] [--push ORG/NAME] [--public]` as a user runs it:
a real subprocess over a real SQLite store (TOOLBOARD_HOME), the folder read back with `datasets.load_dataset`,
and the push sent to the project's fake Hub (HF_ENDPOINT, set before the process starts)."""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from evaluators.engine.store import Store
from evaluators.publish import dataset_rows, dataset_schema
from tests.conftest import run_cli
from tests.fake_hub_repo import PUBLIC_PATHS, FakeHubRepo, LoggedRequest
from tests.test_results_dataset import (
    KEY_VARIABLE,
    LOCAL_MODEL_FOLDER,
    PLANTED_KEY,
    PRIVATE_HOST,
    ROLE_KEY_VARIABLE,
    example_upload,
    planted_endpoint_run,
    upload,
)

datasets = pytest.importorskip("datasets", reason="the `datasets` package is not installed (pip install -r requirements.txt)")
pa = pytest.importorskip("pyarrow", reason="pyarrow (installed with `datasets`) is not installed")
pq = pytest.importorskip("pyarrow.parquet", reason="pyarrow (installed with `datasets`) is not installed")

TOKEN = "hf_fakeToken0123456789abcdef"
WRONG_TOKEN = "hf_wrongToken9876543210zyxw"
REPO = "toolboard-org/toolboard-results"
DATA_FILE = dataset_schema.DATA_FILE
SHARDS = {f"{config}/{DATA_FILE}" for config in dataset_schema.CONFIGS}


@pytest.fixture
def runs(isolated_home: Path, tmp_path: Path) -> dict[str, str]:
    """In the store the CLI opens (TOOLBOARD_HOME): an upload and an endpoint run, both finished (the endpoint
    run's settings hold a private URL, key variable names, a key in its notes and a local data folder), and
    one run still running."""
    store = Store(isolated_home / "toolboard.db")
    try:
        made = {"uploaded": upload(store, "example-model"),
                "evaluated": planted_endpoint_run(store, tmp_path / "private-data")}
        running = store.create_run("acebench", "en", "unfinished-model", "http://127.0.0.1:9/v1", {}, "fp", 3)
        store.set_status(running, "running")
        made["running"] = running
    finally:
        store.close()
    return made


@pytest.fixture
def expected(isolated_home: Path, runs: dict[str, str]) -> Iterator[Store]:
    """The same store, read in this process: what the module makes of it, to compare the CLI's output with."""
    store = Store(isolated_home / "toolboard.db")
    yield store
    store.close()


@pytest.fixture
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHubRepo]:
    """A fake Hub that only accepts TOKEN. The CLI runs in a new process, so the environment it starts with is
    enough: huggingface_hub reads HF_ENDPOINT at import; HF_HOME keeps its caches (its agent registry) in tmp."""
    with FakeHubRepo(token=TOKEN) as server:
        monkeypatch.setenv("HF_ENDPOINT", server.endpoint)
        monkeypatch.setenv("HF_HOME", str(tmp_path / "hf_home"))
        monkeypatch.setenv("HF_TOKEN", TOKEN)
        monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
        yield server


def printed_rows(stdout: str) -> dict[str, int]:
    """The rows per config the command printed ("  contents     111 rows  contents/...")."""
    return {config: int(count) for config, count in re.findall(r"^\s+(contents|details|runs)\s+(\d+) rows", stdout, re.M)}


def loaded(folder: Path, config: str, cache: Path):
    return datasets.load_dataset(str(folder), config, split="train", cache_dir=str(cache))


def assert_one_clear_error(result, *phrases: str) -> None:
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()  # a push says first what it is about to do
    assert [line for line in lines if line.startswith("error: ")] == lines[-1:], result.stderr
    for phrase in phrases:
        assert phrase in lines[-1]


# ---- the folder ------------------------------------------------------------------------------------


@pytest.mark.slow
def test_export_of_every_finished_run_loads_with_datasets(runs: dict[str, str], expected: Store, tmp_path: Path):
    folder = tmp_path / "results"
    result = run_cli("export", "--dataset", str(folder))
    assert result.returncode == 0, result.stderr
    counts = printed_rows(result.stdout)
    finished = [runs["uploaded"], runs["evaluated"]]
    assert counts == {"contents": len(dataset_rows.contents_rows(expected)),
                      "details": len(dataset_rows.details_rows(expected, finished)), "runs": 2}
    assert counts["details"] > 0 and counts["contents"] > 0
    assert f"wrote the results dataset to {folder}" in result.stdout
    assert f'datasets.load_dataset("{folder}", "contents", split="train")' in result.stdout
    cache = tmp_path / "hf_cache"
    for config, count in counts.items():
        assert loaded(folder, config, cache).num_rows == count
    # every finished run, and only those (the running one is left out)
    assert set(loaded(folder, "runs", cache)["run_id"]) == set(finished)
    assert set(loaded(folder, "details", cache)["run_id"]) == set(finished)
    assert (folder / "README.md").is_file()


@pytest.mark.slow
def test_run_and_run_id_choose_the_runs(runs: dict[str, str], expected: Store, tmp_path: Path):
    cache = tmp_path / "hf_cache"
    only_upload = tmp_path / "upload-only"
    result = run_cli("export", "--dataset", str(only_upload), "--run", runs["uploaded"])
    assert result.returncode == 0, result.stderr
    assert printed_rows(result.stdout) == {
        "contents": len(dataset_rows.contents_rows(expected, run_ids=[runs["uploaded"]])),
        "details": len(dataset_rows.details_rows(expected, [runs["uploaded"]])), "runs": 1}
    assert list(loaded(only_upload, "runs", cache)["run_id"]) == [runs["uploaded"]]
    assert set(loaded(only_upload, "details", cache)["run_id"]) == {runs["uploaded"]}
    evaluated = set(loaded(only_upload, "contents", cache)["run_id"]) - {"", None}
    assert evaluated == {runs["uploaded"]}  # published rows, and the chosen run's rows

    # RUN_ID and --run together; RUN_ID's --predictions still written beside the dataset
    both, predictions = tmp_path / "both", tmp_path / "predictions.jsonl"
    result = run_cli("export", runs["evaluated"], "--predictions", str(predictions), "--dataset", str(both),
                     "--run", runs["uploaded"])
    assert result.returncode == 0, result.stderr
    assert printed_rows(result.stdout)["runs"] == 2
    assert set(loaded(both, "runs", cache)["run_id"]) == {runs["uploaded"], runs["evaluated"]}
    assert len(predictions.read_text(encoding="utf-8").splitlines()) == 3


@pytest.mark.slow
def test_an_unknown_or_unfinished_run_is_refused_and_nothing_is_written(runs: dict[str, str], tmp_path: Path):
    folder = tmp_path / "results"
    assert_one_clear_error(run_cli("export", "--dataset", str(folder), "--run", runs["uploaded"], "--run", "nope"),
                           "no run 'nope'")
    assert_one_clear_error(run_cli("export", runs["running"], "--dataset", str(folder)),
                           f"run '{runs['running']}' is running; only finished runs are exported")
    assert not folder.exists()


@pytest.mark.slow
def test_a_folder_holding_stray_parquet_files_is_refused(runs: dict[str, str], tmp_path: Path):
    folder = tmp_path / "results"
    (folder / "details").mkdir(parents=True)
    (folder / "details" / "old-run.parquet").write_bytes(b"PAR1")
    assert_one_clear_error(run_cli("export", "--dataset", str(folder)), "holds other Parquet files (old-run.parquet)")
    assert not (folder / "contents" / DATA_FILE).exists() and not (folder / "README.md").exists()


@pytest.mark.slow
def test_usage_errors_are_one_clear_line(runs: dict[str, str], tmp_path: Path):
    folder = tmp_path / "results"
    assert_one_clear_error(run_cli("export"), "export needs RUN_ID", "--dataset DIR")
    assert_one_clear_error(run_cli("export", "--report", str(tmp_path / "r.json"), "--dataset", str(folder)),
                           "--predictions and --report need RUN_ID")
    assert_one_clear_error(run_cli("export", "--push", REPO), "--push needs --dataset DIR")
    assert_one_clear_error(run_cli("export", runs["uploaded"], "--run", runs["evaluated"]), "--run needs --dataset DIR")
    assert_one_clear_error(run_cli("export", "--dataset", str(folder), "--public"), "--public only works with --push")
    assert_one_clear_error(run_cli("export", "--dataset", str(folder), "--push", "no-slash"), "should look like 'org/name'")
    assert not folder.exists()
    # the run export of before is unchanged
    result = run_cli("export", runs["uploaded"])
    assert result.returncode == 0 and json.loads(result.stdout)["run_id"] == runs["uploaded"]


# ---- the Hub ---------------------------------------------------------------------------------------


def commit_lines(requests: list[LoggedRequest]) -> list[dict]:
    """The NDJSON lines of the commits among `requests` (header, file, deletedFile)."""
    bodies = [r.body for r in requests if r.method == "POST" and "/commit/" in r.path]
    return [json.loads(line) for body in bodies for line in body.splitlines()]


@pytest.mark.slow
def test_push_sends_the_folder_to_a_private_repo_and_nothing_secret(hub: FakeHubRepo, runs: dict[str, str],
                                                                    tmp_path: Path):
    folder = tmp_path / "results"
    result = run_cli("export", "--dataset", str(folder), "--push", REPO)
    assert result.returncode == 0, result.stderr
    repo = hub.repos[f"datasets/{REPO}"]
    assert repo.private
    assert f"pushed to dataset {REPO}: {hub.endpoint}/datasets/{REPO}/commit/{repo.head}" in result.stdout
    assert f'datasets.load_dataset("{REPO}", "contents", split="train")' in result.stdout
    stored = hub.files(REPO)
    assert set(stored) == {"README.md", *SHARDS}
    for path in SHARDS:
        assert stored[path] == (folder / path).read_bytes()
    assert stored["README.md"] == (folder / "README.md").read_bytes()

    # nothing secret in any request, in the files' text, or on the terminal
    planted = [TOKEN, PLANTED_KEY, PRIVATE_HOST, KEY_VARIABLE, ROLE_KEY_VARIABLE, LOCAL_MODEL_FOLDER, str(tmp_path)]
    for request in hub.requests:
        if request.path not in PUBLIC_PATHS:
            assert request.authorization == f"Bearer {TOKEN}"  # the only place the token goes
        for secret in planted:
            assert secret not in request.path and secret not in request.body
    scanned = []
    for line in commit_lines(hub.requests):
        if line["key"] == "file":
            scanned.append(line["value"]["path"])
            content = base64.b64decode(line["value"]["content"])
            text = content.decode("utf-8") if line["value"]["path"].endswith(".md") else json.dumps(
                pq.read_table(pa.BufferReader(content)).to_pylist(), ensure_ascii=False)
            for secret in planted:
                assert secret not in text, (line["value"]["path"], secret)
    assert sorted(scanned) == sorted({"README.md", *SHARDS})
    assert TOKEN not in result.stdout + result.stderr


@pytest.mark.slow
def test_a_second_push_with_fewer_runs_replaces_the_rows_and_deletes_stale_files(hub: FakeHubRepo,
                                                                                 runs: dict[str, str], tmp_path: Path):
    folder = tmp_path / "results"
    assert run_cli("export", "--dataset", str(folder), "--push", REPO).returncode == 0
    # files the hub sync writes run by run (runs/<id>.parquet, details/<id>.parquet) would load as rows too
    repo = hub.repos[f"datasets/{REPO}"]
    files = hub.files(REPO)
    files[f"runs/{runs['evaluated']}.parquet"] = files[f"runs/{DATA_FILE}"]
    files[f"details/{runs['evaluated']}.parquet"] = files[f"details/{DATA_FILE}"]
    files["notes.txt"] = b"kept: not a config's Parquet file"
    before = len(hub.requests)

    result = run_cli("export", "--dataset", str(folder), "--run", runs["uploaded"], "--push", REPO)
    assert result.returncode == 0, result.stderr
    assert printed_rows(result.stdout)["runs"] == 1
    stored = hub.files(REPO)
    assert set(stored) == {"README.md", "notes.txt", *SHARDS}
    assert [row["run_id"] for row in pq.read_table(pa.BufferReader(stored[f"runs/{DATA_FILE}"])).to_pylist()] == [runs["uploaded"]]
    assert stored[f"details/{DATA_FILE}"] == (folder / "details" / DATA_FILE).read_bytes()
    deleted = [line["value"]["path"] for line in commit_lines(hub.requests[before:])
               if line["key"] == "deletedFile"]
    assert sorted(deleted) == sorted([f"runs/{runs['evaluated']}.parquet", f"details/{runs['evaluated']}.parquet"])
    assert repo.private


@pytest.mark.slow
def test_a_pushed_dataset_holds_nothing_of_a_run_on_example_data(hub: FakeHubRepo, runs: dict[str, str],
                                                                 isolated_home: Path, tmp_path: Path):
    store = Store(isolated_home / "toolboard.db")
    try:
        toy = example_upload(store, "toy-upload-model")
    finally:
        store.close()
    folder = tmp_path / "results"
    result = run_cli("export", "--dataset", str(folder), "--push", REPO)
    assert result.returncode == 0, result.stderr
    assert printed_rows(result.stdout)["runs"] == 2
    assert "left out 1 run scored on the built-in example data (never published)" in result.stdout
    for path, content in hub.files(REPO).items():
        text = content.decode("utf-8") if path.endswith(".md") else json.dumps(
            pq.read_table(pa.BufferReader(content)).to_pylist(), ensure_ascii=False)
        assert toy not in text and "toy-upload-model" not in text, path
    assert_one_clear_error(run_cli("export", "--dataset", str(tmp_path / "named"), "--run", toy),
                           f"run '{toy}' was scored on the built-in example data")
    assert not (tmp_path / "named").exists()


@pytest.mark.slow
def test_public_makes_a_new_repo_public(hub: FakeHubRepo, runs: dict[str, str], tmp_path: Path):
    result = run_cli("export", "--dataset", str(tmp_path / "results"), "--run", runs["uploaded"], "--push", REPO, "--public")
    assert result.returncode == 0, result.stderr
    assert not hub.repos[f"datasets/{REPO}"].private


@pytest.mark.slow
def test_push_without_a_token_is_refused_before_anything_is_written(hub: FakeHubRepo, runs: dict[str, str],
                                                                    tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("HF_TOKEN")
    folder = tmp_path / "results"
    assert_one_clear_error(run_cli("export", "--dataset", str(folder), "--push", REPO),
                           "--push needs a Hugging Face token", "HF_TOKEN")
    assert not folder.exists()
    assert hub.requests == [] and hub.repos == {}


@pytest.mark.slow
def test_a_refused_token_is_one_clear_error_without_the_token(hub: FakeHubRepo, runs: dict[str, str],
                                                               tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("HF_TOKEN", WRONG_TOKEN)
    folder = tmp_path / "results"
    result = run_cli("export", "--dataset", str(folder), "--push", REPO)
    assert_one_clear_error(result, f"could not push results to dataset {REPO}", "check that HF_TOKEN is set")
    assert WRONG_TOKEN not in result.stdout + result.stderr
    assert hub.repos == {}
    assert (folder / "contents" / DATA_FILE).is_file()  # the local folder is written first, and kept
