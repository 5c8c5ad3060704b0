"""The run document as one typed, versioned model (engine/run_document.RunDocument): a document written before the
model (today's version 2 shape, typed by hand here) still imports; what the model writes it reads back; a bad
document is refused with the sample, the field and what was expected; and a run read back from the results dataset
is the run document the dataset published. Real SQLite stores throughout."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from evaluators.core.errors import ToolboardError
from evaluators.engine.run_document import (
    DOCUMENT_VERSION,
    RunDocument,
    RunDocumentError,
    export_document,
    export_run,
    import_run,
    read_document,
)
from evaluators.engine.store import Evidence, Store
from evaluators.publish.dataset_rows import import_runs, published_document
from evaluators.publish.results_dataset import read_config, write_dataset
from tests.test_hub_sync import make_finished_run, table_counts

RUN_ID = "20260101-120000-abc123"


def document_before_the_model() -> dict[str, Any]:
    """A version 2 document as the exporter wrote it before the model: a prediction with evidence, events and a
    verdict given as true/false; an item an upload left out (no prediction); whole-number times."""
    config = {"benchmark": "acebench", "language": "en", "subsets": ["normal_atom_bool"],
              "model": {"base_url": "http://127.0.0.1:8000/v1", "model": "old-model", "api_key_env": "OPENAI_API_KEY"}}
    event = {"role": "model", "request": {"model": "old-model", "messages": [{"role": "user", "content": "hi"}]},
             "response": {"text": "[f()]", "tool_calls": None, "usage": {"prompt_tokens": 5}}, "error": None,
             "latency": 0.5, "cached": False}
    return {
        "format": "toolboard-run", "version": 2, "schema_version": 7,
        "run": {"id": RUN_ID, "benchmark": "acebench", "language": "en", "model": "old-model",
                "base_url": "http://127.0.0.1:8000/v1", "config": config, "fingerprint": "fp0123456789abcd",
                "status": "finished", "created_at": 1767268800, "started_at": 1767268801.5,
                "finished_at": 1767268900.25, "total": 2, "message": "2 samples", "source": "endpoint",
                "notes": "nightly — ü", "owner": None, "shared": 0},
        "samples": [
            {"id": "normal_atom_bool_0", "subset": "normal_atom_bool",
             "prediction": {"output": "[f()]", "tool_calls": None, "error": None, "latency": 0.5, "prompt_tokens": 5,
                            "completion_tokens": 3, "attempts": 1, "created_at": 1767268850},
             "evidence": {"judge": {"verdict": "ok"}}, "gold": [{"f": {}}], "request": event["request"],
             "events": [event],
             "scores": {"official": {"value": True, "answer": [{"f": {}}], "explanation": "", "error_type": None,
                                     "rule": "exact", "metrics": {"accuracy": 1.0}, "metadata": None},
                        "strict": {"value": 0.0, "answer": [{"f": {}}], "explanation": "differs",
                                   "error_type": "wrong_arguments", "rule": "exact", "metrics": None,
                                   "metadata": {"rationale": "differs"}}}},
            {"id": "normal_atom_bool_1", "subset": "normal_atom_bool", "prediction": None, "evidence": None,
             "gold": None, "request": None, "events": None,
             "scores": {"official": {"value": 0.0, "answer": None, "explanation": "missing", "error_type": "missed_call",
                                     "rule": None, "metrics": None, "metadata": None}}},
        ],
        "reports": [{"mode": "official", "report": {"summary": {"overall": 0.5}}, "created_at": 1767268900}],
    }


@pytest.fixture
def stores(tmp_path: Path) -> Iterator[tuple[Store, Store]]:
    """Two real stores: one a run is exported from, one it is imported into."""
    pair = Store(tmp_path / "store.db"), Store(tmp_path / "other.db")
    yield pair
    for opened in pair:
        opened.close()


@pytest.fixture
def store(stores: tuple[Store, Store]) -> Store:
    return stores[0]


@pytest.fixture
def other(stores: tuple[Store, Store]) -> Store:
    return stores[1]


def test_a_document_written_before_the_model_still_imports_and_exports_the_same(store: Store) -> None:
    written = document_before_the_model()
    assert import_run(store, json.loads(json.dumps(written)))
    exported = export_run(store, RUN_ID)
    # The same values; the model writes a verdict as the number it stands for and times as numbers.
    assert exported == {**written, "schema_version": store.schema_version()}
    assert exported["samples"][0]["scores"]["official"]["value"] == 1.0
    assert isinstance(exported["samples"][0]["scores"]["official"]["value"], float)
    assert exported["version"] == DOCUMENT_VERSION == 2


def test_the_model_reads_back_what_it_writes(store: Store, other: Store) -> None:
    run_id = make_finished_run(store)
    document = export_document(store, run_id)
    assert isinstance(document, RunDocument) and document.version == DOCUMENT_VERSION
    assert read_document(json.loads(json.dumps(document.to_json_value()))) == document
    assert import_run(other, document)
    assert export_document(other, run_id).model_dump(exclude={"schema_version"}) == \
        document.model_dump(exclude={"schema_version"})


def corrupt(path: list[Any], value: Any) -> dict[str, Any]:
    document = copy.deepcopy(document_before_the_model())
    node = document
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return document


@pytest.mark.parametrize("path, value, message", [
    (["samples", 0, "prediction", "created_at"], "yesterday",
     f"run '{RUN_ID}': samples[0].prediction: field 'created_at' must be a number, not a string"),
    (["samples", 1, "scores", "official", "value"], "wrong",
     f"run '{RUN_ID}': samples[1].scores['official']: field 'value' must be a number, not a string"),
    (["samples", 0, "events"], "all of them",
     f"run '{RUN_ID}': samples[0]: field 'events' must be a list of model calls, the note kept in their place (too"
     " large to store), or null"),
    (["run", "shared"], False, f"run '{RUN_ID}': run: field 'shared' must be a whole number, not true or false"),
    (["run", "total"], 2.5, f"run '{RUN_ID}': run: field 'total' must be a whole number, not a number"),
    (["reports", 0, "mode"], None, f"run '{RUN_ID}': reports[0]: field 'mode' must be a string, not null"),
])
def test_a_bad_document_names_the_sample_the_field_and_what_was_expected(store: Store, path: list[Any], value: Any,
                                                                        message: str) -> None:
    with pytest.raises(RunDocumentError) as refused:
        import_run(store, corrupt(path, value))
    assert str(refused.value) == message
    assert table_counts(store) == dict.fromkeys(Store.RUN_TABLES, 0)


def test_every_problem_is_counted_and_the_first_one_named(store: Store) -> None:
    document = corrupt(["samples", 0, "subset"], 3)
    document["samples"][1]["scores"]["official"]["surprise"] = 1
    with pytest.raises(RunDocumentError, match=r"^run '.*': samples\[0\]: field 'subset' must be a string, not a"
                                               r" number \(and 1 more problem\)$"):
        import_run(store, document)


def test_a_missing_field_and_an_unknown_one_are_named(store: Store) -> None:
    document = document_before_the_model()
    del document["samples"][1]["gold"]
    with pytest.raises(RunDocumentError, match=r"samples\[1\]: missing field 'gold'$"):
        import_run(store, document)
    with pytest.raises(RunDocumentError, match=r": run: unknown field 'colour' \(written by a newer toolboard\?\)$"):
        read_document(corrupt(["run", "colour"], 1))


def test_an_unfinished_run_is_not_exported(store: Store) -> None:
    run_id = store.create_run("acebench", "en", "m", "http://127.0.0.1:8000/v1", {}, "fp", 0)
    with pytest.raises(ToolboardError, match="is created; only finished runs are exported"):
        export_document(store, run_id)


@pytest.mark.slow  # over half a second in the fast loop
def test_a_run_read_back_from_the_results_dataset_equals_its_published_document(store: Store, other: Store,
                                                                               tmp_path: Path) -> None:
    run_id = make_finished_run(store)
    write_dataset(tmp_path / "results", store)
    imported = import_runs(other, read_config(tmp_path / "results", "runs"))
    assert imported.imported == [run_id] and not imported.skipped
    published = published_document(store, run_id).to_json_value()
    assert export_run(other, run_id) == published
    assert published["run"]["base_url"] == "" and published["run"]["config"]["model"]["api_key_env"] == ""


def test_a_sample_whose_model_calls_were_too_large_to_store_still_travels(store: Store, other: Store) -> None:
    """Its row keeps a note in place of the calls (store.oversized_note): the document carries the note."""
    run_id = make_finished_run(store, evidence=Evidence(events=[{"role": "model", "request": {"text": "x" * (1 << 20)}}]))
    document = export_run(store, run_id)
    note = document["samples"][0]["events"]
    assert isinstance(note, dict) and note["truncated"] is True and "not stored" in note["note"]
    assert import_run(other, json.loads(json.dumps(document)))
    assert export_run(other, run_id)["samples"][0]["events"] == note
