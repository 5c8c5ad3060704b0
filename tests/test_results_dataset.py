"""Results as a Hugging Face dataset (evaluators/publish/results_dataset.py): written from a real store, read back
with `datasets.load_dataset` and with read_dataset.

Frames are compared after one normalisation, the same on both sides: each is cast to the Arrow schema
the export writes (nullable string / float64 / int64 / bool columns; `datasets` gives NaN for a null
float and float64 for an int64 column with nulls) and turned back into Arrow-backed pandas columns; then
`assert_frame_equal` (names, order, types) and every value compared as plain Python (floats exactly,
every kind of missing as None): every column, every row.
"""

from __future__ import annotations

import json
import logging
import math
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from evaluators.core.registry import MODES, benchmark_names
from evaluators.core.types import Prediction, Report, SampleScore, SubsetResult, ToolCall
from evaluators.engine import redact
from evaluators.engine.settings import Endpoint, ModelSettings, RunConfig
from evaluators.engine.store import Evidence, Store
from evaluators.publish import dataset_rows, dataset_schema, results_dataset
from evaluators.publish.dataset_rows import contents_rows, details_rows
from evaluators.publish.dataset_schema import ResultsDatasetError
from evaluators.publish.results_dataset import read_dataset, write_dataset
from evaluators.service.board import board_rows
from evaluators.service.submissions import check_submission, store_submission
from tests.acebench_fixtures import EXAMPLE_DIR
from tests.app_fixtures import items_copy

datasets = pytest.importorskip("datasets", reason="the `datasets` package is not installed (pip install -r requirements.txt)")
pa = pytest.importorskip("pyarrow", reason="pyarrow (installed with `datasets`) is not installed")
pq = pytest.importorskip("pyarrow.parquet", reason="pyarrow (installed with `datasets`) is not installed")

PROJECT = Path(__file__).resolve().parents[1]
# Planted in a run's settings: none of it may reach the written dataset.
PRIVATE_HOST = "gateway.corp-internal.example"
PRIVATE_URL = f"https://{PRIVATE_HOST}/tenant-42/secret-route/v1"
ROLE_URL = "http://10.1.2.3:9000/private-judge/v1"
KEY_VARIABLE = "TOOLBOARD_PLANTED_KEY_VARIABLE"
ROLE_KEY_VARIABLE = "TOOLBOARD_PLANTED_ROLE_KEY"
PLANTED_KEY = "sk-planted0123456789abcdefXYZ"
LOCAL_MODEL_FOLDER = "/home/alice/checkpoints"
VLLM_MODEL_NAME = f"{LOCAL_MODEL_FOLDER}/Qwen2.5-7B-Instruct"  # vLLM names a model by the folder it loaded


def upload(store: Store, model: str) -> str:
    """A stored run of the ACEBench example's predictions on a copy of its items (as tests/app_fixtures.py `upload`)."""
    submission = check_submission(EXAMPLE_DIR / "predictions.jsonl", "acebench", language="en", data_dir=items_copy(store))
    return store_submission(store, submission, model)


def planted_endpoint_run(store: Store, data_dir: Path) -> str:
    """A finished endpoint run stored through the real Store API, its settings holding a private base URL,
    key variable names, a local data folder, a key in its notes, its evidence and a checker's metadata, and a model
    named by a local folder."""
    config = RunConfig(benchmark="acebench", language="en", subsets=("normal_atom_bool",), data_dir=str(data_dir),
                       model=ModelSettings(base_url=PRIVATE_URL, model=VLLM_MODEL_NAME, api_key_env=KEY_VARIABLE),
                       roles={"user": Endpoint(ROLE_URL, "sim-user", ROLE_KEY_VARIABLE)})
    run_id = store.create_run("acebench", "en", VLLM_MODEL_NAME, PRIVATE_URL, config.to_json(), "fp0123456789abcd", 3,
                              source="endpoint", notes=f"nightly with {PLANTED_KEY}")
    store.set_status(run_id, "running")
    gold = Evidence(gold=[{"Clock.setAlarm": {"time": "07:00"}}],
                    request={"requests": 1, "body": {"model": VLLM_MODEL_NAME, "messages": [{"role": "user", "content": "hi"}]}})
    store.save_batch(run_id, [], [
        ("normal_atom_bool", Prediction("normal_atom_bool_0", output="[Clock.setAlarm(time='07:00')]", latency=0.25,
                                        usage={"prompt_tokens": 120, "completion_tokens": 9}), 1, gold),
        ("normal_atom_bool", Prediction("normal_atom_bool_1", tool_calls=[ToolCall("Clock.setAlarm", {"time": "08:30"})],
                                        latency=0.5, usage={"prompt_tokens": 100, "completion_tokens": 12},
                                        extra={"transcript": [{"said": f"my key is {PLANTED_KEY}"}]}), 1),
        ("normal_atom_bool", Prediction("normal_atom_bool_2", error=f"request_error: host {PRIVATE_HOST} could not be"
                                                                     " resolved"), 6),
    ])
    for mode in MODES:
        scores = [
            SampleScore("normal_atom_bool_0", "normal_atom_bool", True, rule="exact",
                        decoded=[{"Clock.setAlarm": {"time": "07:00"}}], metrics={"accuracy": 1.0}),
            SampleScore("normal_atom_bool_1", "normal_atom_bool", mode == "official",
                        error_type=None if mode == "official" else "wrong_arguments", detail="time differs",
                        metadata={"checker_note": f"saw {PLANTED_KEY}"}),
            SampleScore("normal_atom_bool_2", "normal_atom_bool", False, error_type="request_error"),
        ]
        accuracy = round(sum(s.correct for s in scores) / len(scores), 3)
        report = Report("acebench", mode, {"normal_atom_bool": SubsetResult(3, {"accuracy": accuracy})},
                        {"normal": accuracy, "overall": accuracy}, {"request_error": 1}, language="en")
        store.save_scores(run_id, mode, scores, report)
    store.set_status(run_id, "finished", "3 samples, 1 request error")
    return run_id


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    store = Store(tmp_path / "home" / "toolboard.db")
    yield store
    store.close()


@pytest.fixture
def runs(store: Store, tmp_path: Path) -> dict[str, str]:
    return {"uploaded": upload(store, "example-model"), "evaluated": planted_endpoint_run(store, tmp_path / "private-data")}


def loaded(folder: Path, config: str, cache: Path) -> pd.DataFrame:
    dataset = datasets.load_dataset(str(folder), config, cache_dir=str(cache))
    assert list(dataset) == ["train"]
    return dataset["train"].to_pandas()


def normalised(frame: pd.DataFrame, like: pd.DataFrame) -> pd.DataFrame:
    """The frame cast to the export's Arrow schema (taken from `like`, a frame the module built), as
    Arrow-backed pandas columns."""
    schema = pa.Schema.from_pandas(like, preserve_index=False)
    return pa.Table.from_pandas(frame[like.columns.tolist()], schema=schema, preserve_index=False).to_pandas(
        types_mapper=pd.ArrowDtype)


def assert_same_frames(back: pd.DataFrame, expected: pd.DataFrame) -> None:
    """Every column and row equal after normalisation: types by assert_frame_equal, values as plain Python
    (assert_frame_equal compares Arrow-backed floats with a tolerance even with check_exact=True)."""
    back = normalised(back, expected)
    pd.testing.assert_frame_equal(back, expected, check_exact=True)
    for column in expected.columns:
        found, wanted = back[column].tolist(), expected[column].tolist()
        differ = [index for index, (a, b) in enumerate(zip(found, wanted)) if plain(a) != plain(b)]
        assert not differ, f"column {column!r}, row {differ[0]}: {found[differ[0]]!r} != {wanted[differ[0]]!r}"


def plain(value: Any) -> Any:
    """A board or contents value as plain Python (None for every kind of missing)."""
    if value is None or value is pd.NA or isinstance(value, float) and math.isnan(value):
        return None
    return value.item() if hasattr(value, "item") else value


# ---- contents ------------------------------------------------------------------------------------


@pytest.mark.slow
def test_contents_round_trip_through_load_dataset(store: Store, runs: dict[str, str], tmp_path: Path) -> None:
    expected = contents_rows(store)
    written = write_dataset(tmp_path / "results", store)
    assert written.contents_rows == len(expected)

    back = loaded(tmp_path / "results", "contents", tmp_path / "cache")

    assert back.columns.tolist() == expected.columns.tolist()
    assert_same_frames(back, expected)
    assert set(expected["source"]) == {"published", "evaluated", "uploaded"}
    assert set(expected["mode"]) == set(MODES)
    assert set(expected["benchmark"]) == set(benchmark_names())


@pytest.mark.slow
def test_contents_are_the_board_every_row_every_column(store: Store, runs: dict[str, str]) -> None:
    contents = contents_rows(store)
    for benchmark in benchmark_names():
        for mode in MODES:
            board = board_rows(benchmark, store, mode)
            ours = contents[(contents["benchmark"] == benchmark) & (contents["mode"] == mode)].reset_index(drop=True)
            assert len(ours) == len(board), (benchmark, mode)
            for column in board.columns:
                if column in ("model", "details"):  # free text: written without keys and local folders
                    continue
                assert [plain(v) for v in ours[column]] == [plain(v) for v in board[column]], (benchmark, mode, column)
    evaluated = contents[contents["run_id"] == runs["evaluated"]]
    assert set(evaluated["model"]) == {"Qwen2.5-7B-Instruct"}
    assert set(evaluated["language"]) == {"en"}
    assert all(created.endswith("+00:00") for created in evaluated["created"])
    assert evaluated["request_errors"].tolist() == [1] * len(evaluated)


@pytest.mark.slow  # over half a second in the fast loop
def test_contents_of_chosen_runs_keep_the_published_rows(store: Store, runs: dict[str, str]) -> None:
    contents = contents_rows(store, run_ids=[runs["uploaded"]])
    assert set(contents["source"]) == {"published", "uploaded"}
    assert set(contents.loc[contents["source"] == "uploaded", "run_id"]) == {runs["uploaded"]}
    only = contents_rows(store, benchmarks=["toolbench_static"])
    assert set(only["benchmark"]) == {"toolbench_static"}
    assert "atom" not in only.columns  # another benchmark's columns are not in a one-benchmark table


# ---- details -------------------------------------------------------------------------------------


@pytest.mark.slow
def test_details_round_trip_one_row_per_scored_item_and_mode(store: Store, runs: dict[str, str], tmp_path: Path) -> None:
    expected = details_rows(store)
    written = write_dataset(tmp_path / "results", store)
    assert written.details_rows == len(expected)
    scored = sum(len(store.load_scores(run_id, mode)) for run_id in runs.values() for mode in MODES)
    assert len(expected) == scored

    back = loaded(tmp_path / "results", "details", tmp_path / "cache")
    assert back.columns.tolist() == expected.columns.tolist()
    assert_same_frames(back, expected)

    row = expected[(expected["run_id"] == runs["evaluated"]) & (expected["sample_id"] == "normal_atom_bool_0")
                   & (expected["mode"] == "official")].iloc[0]
    assert row["raw_output"] == "[Clock.setAlarm(time='07:00')]"
    assert row["decoded_calls"] == '[{"Clock.setAlarm": {"time": "07:00"}}]'
    assert row["gold"] == '[{"Clock.setAlarm": {"time": "07:00"}}]'
    assert (row["correct"], row["rule"], row["latency_s"], row["prompt_tokens"]) == (True, "exact", 0.25, 120)
    failed = expected[(expected["sample_id"] == "normal_atom_bool_2") & (expected["mode"] == "strict")].iloc[0]
    # A connection error names the endpoint's host: published as <endpoint>.
    assert (failed["error_type"], failed["request_error"]) == ("request_error",
                                                               "request_error: host <endpoint> could not be resolved")
    uploaded = expected[expected["run_id"] == runs["uploaded"]]
    assert uploaded["prompt_tokens"].isna().all()  # no request was made: unknown, not 0


def test_details_come_in_batches_that_make_the_same_table(store: Store, runs: dict[str, str]) -> None:
    batches = list(dataset_rows.detail_batches(store, batch_rows=5))
    assert len(batches) > 2
    assert all(batch.num_rows <= 5 + 2 * len(MODES) for batch in batches)  # a page closes after its item's modes
    whole = pa.concat_tables(batches).to_pandas(types_mapper=pd.ArrowDtype)
    assert_same_frames(whole, details_rows(store))


def test_only_finished_runs_that_exist_are_exported(store: Store, runs: dict[str, str], tmp_path: Path) -> None:
    with pytest.raises(ResultsDatasetError, match="no run 'nope'"):
        details_rows(store, ["nope"])
    unfinished = store.create_run("acebench", "en", "m", "upload", {"model": {}}, "fp", 1, source="upload")
    with pytest.raises(ResultsDatasetError, match=f"run '{unfinished}' is created; only finished runs"):
        write_dataset(tmp_path / "results", store, [unfinished])
    assert set(details_rows(store, [runs["uploaded"]])["run_id"]) == {runs["uploaded"]}


def example_upload(store: Store, model: str) -> str:
    """An upload checked against the built-in example's items (as the Submit tab's "built-in example")."""
    submission = check_submission(EXAMPLE_DIR / "predictions.jsonl", "acebench", language="en", data_dir=EXAMPLE_DIR)
    assert submission.on_example_data
    return store_submission(store, submission, model)


@pytest.mark.slow  # over half a second in the fast loop
def test_runs_on_example_data_are_left_out_of_the_dataset_and_refused_by_name(
        store: Store, runs: dict[str, str], tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    toy = example_upload(store, "toy-upload-model")
    folder = tmp_path / "results"
    with caplog.at_level(logging.INFO, logger="evaluators.publish.results_dataset"):
        written = write_dataset(folder, store)
    assert (written.runs_rows, written.example_runs_left_out) == (2, 1)
    assert "left out 1 run scored on the built-in example data" in caplog.text
    contents, details = read_dataset(folder)
    assert set(details["run_id"]) == set(runs.values())
    assert set(results_dataset.read_config(folder, "runs")["run_id"]) == set(runs.values())
    assert toy not in set(contents["run_id"]) and "toy-upload-model" not in set(contents["model"])
    assert set(details_rows(store)["run_id"]) == set(runs.values())
    with pytest.raises(ResultsDatasetError, match=f"run '{toy}' was scored on the built-in example data"):
        write_dataset(tmp_path / "named", store, [runs["evaluated"], toy])
    assert not (tmp_path / "named").exists()


@pytest.mark.slow
def test_a_store_without_runs_exports_the_published_rows_alone(store: Store, runs: dict[str, str], tmp_path: Path) -> None:
    folder = tmp_path / "results"
    write_dataset(folder, store)
    empty = Store(tmp_path / "empty.db")
    written = write_dataset(folder, empty)  # over the earlier export: its details must not stay behind

    assert written.details_rows == 0
    assert not list((folder / "details").glob("*.parquet"))
    header = (folder / "README.md").read_text(encoding="utf-8").split("---")[1]
    assert "config_name: contents" in header and "config_name: details" not in header  # datasets loads no empty split
    expected = contents_rows(empty)
    assert set(expected["source"]) == {"published"} and written.contents_rows == len(expected) > 0
    assert_same_frames(loaded(folder, "contents", tmp_path / "cache"), expected)
    contents, details = read_dataset(folder)
    assert details.empty and details.columns.tolist() == [name for name, _, _ in dataset_schema.DETAILS_COLUMNS]
    empty.close()


# ---- nothing private is written --------------------------------------------------------------------


@pytest.mark.slow  # over half a second in the fast loop
def test_no_base_url_key_or_local_path_in_the_written_dataset(store: Store, runs: dict[str, str], tmp_path: Path) -> None:
    folder = tmp_path / "results"
    write_dataset(folder, store)
    contents, details = read_dataset(folder)
    records = results_dataset.read_config(folder, "runs")
    texts = [path.read_bytes().decode("utf-8", "replace") for path in folder.rglob("*") if path.is_file()]
    # Parquet pages are compressed: the values themselves are searched too, not only the bytes.
    texts += [str(value) for frame in (contents, details, records) for column in frame.columns for value in frame[column]]
    planted = [PRIVATE_HOST, "tenant-42", "secret-route", "10.1.2.3", "private-judge", KEY_VARIABLE, ROLE_KEY_VARIABLE,
               PLANTED_KEY, LOCAL_MODEL_FOLDER, str(tmp_path), str(PROJECT), "private-data"]
    found = {word for word in planted for text in texts if word in text}
    assert not found
    assert "Qwen2.5-7B-Instruct" in set(details["model"])
    for text in records["document"]:  # a run's record keeps the settings' shape, with every endpoint emptied
        document = json.loads(text)
        assert document["run"]["base_url"] == "" and document["run"]["config"]["model"]["base_url"] == ""
        assert document["run"]["config"]["model"]["api_key_env"] == "" and document["run"]["config"].get("data_dir") is None


def test_public_text_keeps_urls_and_drops_local_folders_and_keys() -> None:
    assert redact.public_text("/data/models/Qwen2.5-7B") == "Qwen2.5-7B"
    assert redact.public_text("C:\\Users\\me\\m.gguf and ~/x/y.bin") == "m.gguf and y.bin"
    assert redact.public_text("see https://example.org/a/b (and gpt-4o/mini)") == \
        "see https://example.org/a/b (and gpt-4o/mini)"
    assert redact.public_text(f"key {PLANTED_KEY}") == "key [redacted]"


# ---- the card ------------------------------------------------------------------------------------


@pytest.mark.slow  # over half a second in the fast loop
def test_card_declares_the_configs_licences_and_citations(store: Store, runs: dict[str, str], tmp_path: Path) -> None:
    folder = tmp_path / "results"
    write_dataset(folder, store)
    card = (folder / "README.md").read_text(encoding="utf-8")
    header = card.split("---")[1]
    assert "- config_name: contents" in header and "- config_name: details" in header
    assert "path: contents/*.parquet" in header and "path: details/*.parquet" in header
    for name in benchmark_names():
        assert f"(`{name}`)" in card
    assert "- Data licence: MIT" in card  # ACEBench's declaration
    assert "Chen et al., ACEBench" in card
    for column, _, _ in dataset_schema.CONTENTS_COLUMNS + dataset_schema.DETAILS_COLUMNS:
        assert f"| `{column}` |" in card


# ---- reading back: clear errors ------------------------------------------------------------------


@pytest.mark.slow
def test_a_truncated_parquet_file_is_named_in_a_clear_error(store: Store, runs: dict[str, str], tmp_path: Path) -> None:
    folder = tmp_path / "results"
    write_dataset(folder, store)
    damaged = folder / "contents" / dataset_schema.DATA_FILE
    damaged.write_bytes(damaged.read_bytes()[: damaged.stat().st_size // 2])
    with pytest.raises(ResultsDatasetError, match=r"contents/train-00000-of-00001\.parquet: not a readable Parquet file"):
        read_dataset(folder)


@pytest.mark.slow  # over half a second in the fast loop
def test_a_file_that_is_not_parquet_is_named(store: Store, runs: dict[str, str], tmp_path: Path) -> None:
    folder = tmp_path / "results"
    write_dataset(folder, store)
    (folder / "details" / dataset_schema.DATA_FILE).write_text('{"run_id": "x"}\n', encoding="utf-8")
    with pytest.raises(ResultsDatasetError, match=r"details/train-00000-of-00001\.parquet: not a readable Parquet file"):
        read_dataset(folder)


@pytest.mark.slow  # over half a second in the fast loop
def test_a_wrong_schema_says_which_column_and_what_was_expected(store: Store, runs: dict[str, str], tmp_path: Path) -> None:
    folder = tmp_path / "results"
    write_dataset(folder, store)
    path = folder / "details" / dataset_schema.DATA_FILE
    table = pq.read_table(path)
    pq.write_table(table.set_column(table.schema.get_field_index("correct"), "correct",
                                    pa.array(["yes"] * table.num_rows)), path)
    with pytest.raises(ResultsDatasetError, match=r"details/train-00000-of-00001\.parquet: column 'correct' is string, expected bool"):
        read_dataset(folder)
    pq.write_table(table.drop_columns(["sample_id", "gold"]), path)
    with pytest.raises(ResultsDatasetError, match="missing column.s. sample_id, gold"):
        read_dataset(folder)


def test_missing_folders_and_stray_files_are_refused(store: Store, runs: dict[str, str], tmp_path: Path) -> None:
    with pytest.raises(ResultsDatasetError, match="is not a folder"):
        read_dataset(tmp_path / "nowhere")
    (tmp_path / "empty" / "contents").mkdir(parents=True)
    with pytest.raises(ResultsDatasetError, match=r"contents: no Parquet file; expected contents/train-00000"):
        read_dataset(tmp_path / "empty")
    (tmp_path / "other" / "details").mkdir(parents=True)
    (tmp_path / "other" / "details" / "old.parquet").write_bytes(b"")
    with pytest.raises(ResultsDatasetError, match=r"holds other Parquet files \(old\.parquet\)"):
        write_dataset(tmp_path / "other", store)


@pytest.mark.slow
def test_export_again_into_the_same_folder_replaces_it(store: Store, runs: dict[str, str], tmp_path: Path) -> None:
    folder = tmp_path / "results"
    write_dataset(folder, store, [runs["uploaded"]])
    write_dataset(folder, store)
    contents, details = read_dataset(folder)
    assert set(details["run_id"]) == set(runs.values())
    assert not list(folder.rglob("*.partial"))


# ---- the app's start-up does not pay for it ------------------------------------------------------


@pytest.mark.slow
def test_the_app_does_not_import_datasets() -> None:
    probe = "import sys, ui.app, evaluators.publish.results_dataset; print(sorted(m for m in ('datasets',) if m in sys.modules))"
    result = subprocess.run([sys.executable, "-c", probe], cwd=PROJECT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip().splitlines()[-1] == "[]"


# ---- runs: rebuilding a store ----------------------------------------------------------------------


@pytest.mark.slow
def test_the_runs_config_rebuilds_a_store_with_the_same_board(store: Store, runs: dict[str, str], tmp_path: Path) -> None:
    folder = tmp_path / "results"
    written = write_dataset(folder, store)
    assert written.runs_rows == 2
    records = loaded(folder, "runs", tmp_path / "cache")
    assert sorted(records["run_id"]) == sorted(runs.values())
    rebuilt = Store(tmp_path / "rebuilt.db")
    result = dataset_rows.import_runs(rebuilt, results_dataset.read_config(folder, "runs"))
    assert sorted(result.imported) == sorted(runs.values()) and not result.skipped
    # The same board as published. The planted run's model, named by a local folder, is published as the folder's
    # last part; only under that name does the facts table know it, so its facts are not compared.
    facts = ["organisation", "params_b", "licence", "open_weights", "link"]
    assert_same_frames(contents_rows(rebuilt).drop(columns=facts), contents_rows(store).drop(columns=facts))
    assert_same_frames(details_rows(rebuilt), details_rows(store))
    again = dataset_rows.import_runs(rebuilt, results_dataset.read_config(folder, "runs"))
    assert sorted(again.already_there) == sorted(runs.values()) and not again.imported
    rebuilt.close()


def test_a_damaged_run_record_is_skipped_and_named(store: Store, runs: dict[str, str], tmp_path: Path) -> None:
    table = dataset_rows.runs_table(store).to_pandas()
    table.loc[0, "document"] = "{not json"
    table.loc[1, "document"] = json.dumps({"format": "toolboard-run", "version": 1, "run": {"id": "another"}})
    rebuilt = Store(tmp_path / "rebuilt.db")
    result = dataset_rows.import_runs(rebuilt, table)
    assert not result.imported and len(result.skipped) == 2
    assert result.skipped[0].startswith(f"{table.loc[0, 'run_id']}: ")
    assert "not the record of this run" in result.skipped[1]
    assert rebuilt.list_runs() == []
    rebuilt.close()
