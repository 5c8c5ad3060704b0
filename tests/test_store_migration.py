"""Migration 6 of the store (issue 28): a store written with the old schema, whose rows held one benchmark's
shape in every table (a prediction's `result` and `process`, a verdict's `process_score`), opens once migrated:
those values are the prediction's evidence and the verdict's per-sample metric, nothing else changes, and the
run's record and scores read back as before."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from evaluators.benchmarks.acebench.checker import score
from evaluators.core.errors import ToolboardError
from evaluators.core.types import Sample
from evaluators.engine.run_document import export_run
from evaluators.engine.store import MIGRATIONS, SCHEMA_VERSION, Store

END_STATE = [{"ReminderApi": {"reminders": {"1": {"title": "call mum", "n": 10**40}}}}]
PROCESS = ["[add_reminder(title='call mum')]", "[view_reminders()]"]


def _schema_5_store(path: Path) -> None:
    """A store file as the previous release wrote it: the first five migrations, and rows in their columns."""
    with sqlite3.connect(path) as db:
        for script in MIGRATIONS[:5]:
            assert isinstance(script, str)
            db.executescript(script)
        db.execute("PRAGMA user_version=5")
        db.execute("INSERT INTO runs (id, benchmark, language, model, base_url, config, fingerprint, status, created_at,"
                   " total, source) VALUES ('old-run', 'acebench', 'en', 'm', 'http://h/v1', '{}', 'fp', 'finished', 1.0, 3,"
                   " 'upload')")
        rows = [
            ("agent_multi_step_0", "agent_multi_step", None, f'{_json(END_STATE)}', _json(PROCESS), '{"stop": "finish"}'),
            ("agent_multi_step_1", "agent_multi_step", None, "[]", None, None),
            ("normal_atom_bool_0", "normal_atom_bool", "[f(x=True)]", None, None, None),
        ]
        db.executemany("INSERT INTO predictions (run_id, sample_id, subset, output, result, process, extra, created_at)"
                       " VALUES ('old-run', ?, ?, ?, ?, ?, ?, 2.0)", rows)
        scores = [("agent_multi_step_0", "agent_multi_step", 1, 1.0, None),
                  ("agent_multi_step_1", "agent_multi_step", 0, 0.5, '{"other": 2.0}'),
                  ("normal_atom_bool_0", "normal_atom_bool", 1, None, None)]
        for mode in ("official", "strict"):
            db.executemany("INSERT INTO sample_scores (run_id, mode, sample_id, subset, correct, process_score, metrics)"
                           f" VALUES ('old-run', '{mode}', ?, ?, ?, ?, ?)", scores)
        db.execute("INSERT INTO reports (run_id, mode, report, created_at) VALUES ('old-run', 'official', '{}', 3.0)")


def _json(value: object) -> str:
    import json

    return json.dumps(value)


def test_an_old_store_migrates_once_moving_the_benchmark_columns_into_evidence_and_metrics(tmp_path: Path):
    path = tmp_path / "old.db"
    _schema_5_store(path)
    store = Store(path)
    assert store.schema_version() == SCHEMA_VERSION == 7
    assert "result" not in store.table_columns("predictions") and "process" not in store.table_columns("predictions")
    assert "process_score" not in store.table_columns("sample_scores")
    assert {"events", "extra"} <= set(store.table_columns("predictions")) and "metadata" in store.table_columns("sample_scores")
    # Migration 7: each run's bytes of text, counted once from what it holds (a visitor's daily byte budget).
    expected = store._query("SELECT sum(length(CAST(extra AS BLOB))) + sum(length(CAST(output AS BLOB))) FROM predictions")[0][0]
    assert store.get_run("old-run").stored_bytes >= expected > 0

    predictions = store.load_predictions("old-run")
    assert predictions["agent_multi_step_0"].extra == {"stop": "finish", "result": END_STATE, "process": PROCESS}
    assert predictions["agent_multi_step_0"].extra["result"][0]["ReminderApi"]["reminders"]["1"]["n"] == 10**40
    assert predictions["agent_multi_step_1"].extra == {"result": []}
    assert predictions["normal_atom_bool_0"].extra is None and predictions["normal_atom_bool_0"].output == "[f(x=True)]"
    for mode in ("official", "strict"):
        scores = {s.sample_id: s for s in store.load_scores("old-run", mode)}
        assert scores["agent_multi_step_0"].metrics == {"process_score": 1.0}
        assert scores["agent_multi_step_1"].metrics == {"other": 2.0, "process_score": 0.5}
        assert scores["normal_atom_bool_0"].metrics is None and scores["normal_atom_bool_0"].metadata is None

    # The migrated evidence is what the checker reads: the end state and process score as before.
    sample = Sample("agent_multi_step_0", "agent_multi_step", {}, END_STATE, {"mile_stone": PROCESS})
    again = score(sample, predictions["agent_multi_step_0"])
    assert again.correct and again.metrics == {"process_score": 1.0} and again.decoded == END_STATE

    document = export_run(store, "old-run")
    first = document["samples"][0]
    assert first["id"] == "agent_multi_step_0" and first["evidence"]["process"] == PROCESS
    assert first["scores"]["official"] == {"value": 1.0, "answer": None, "explanation": None, "error_type": None,
                                           "rule": None, "metrics": {"process_score": 1.0}, "metadata": None}
    store.close()

    reopened = Store(path)  # once: opening again changes nothing
    assert reopened.load_predictions("old-run") == predictions
    reopened.close()


def test_a_migration_that_fails_leaves_the_old_store_as_it_was(tmp_path: Path):
    path = tmp_path / "old.db"
    _schema_5_store(path)
    with sqlite3.connect(path) as db:  # a value that is not JSON: the move cannot read it
        db.execute("UPDATE predictions SET result = 'not json' WHERE sample_id = 'agent_multi_step_1'")
    with pytest.raises(ToolboardError, match="could not be upgraded to schema 6 \\(nothing in it was changed\\)"):
        Store(path)
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == 5
        assert "result" in [row[1] for row in db.execute("PRAGMA table_info(predictions)")]


def test_a_new_run_id_already_taken_is_drawn_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Hundreds of runs made in one second (a flood of uploads) may draw a taken id: it is drawn again, while a
    given id that is taken is refused."""
    from evaluators.engine.store import runs as store_module

    store = Store(tmp_path / "ids.sqlite")
    taken = store.create_run("acebench", "en", "m", "upload", {}, "fp", 1, source="upload")
    draws = iter([taken, taken, "20260101-000000-abcdef"])
    monkeypatch.setattr(store_module, "new_run_id", lambda: next(draws))
    assert store.create_run("acebench", "en", "m2", "upload", {}, "fp", 1, source="upload") == "20260101-000000-abcdef"
    with pytest.raises(sqlite3.IntegrityError):
        store.create_run("acebench", "en", "m3", "upload", {}, "fp", 1, source="upload", run_id=taken)
    monkeypatch.setattr(store_module, "new_run_id", lambda: taken)
    with pytest.raises(ToolboardError, match="no free run id"):
        store.create_run("acebench", "en", "m4", "upload", {}, "fp", 1, source="upload")
