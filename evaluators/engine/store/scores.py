"""The sample_scores and reports tables: a run's verdicts and report in one scoring mode, written together and
read back."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import Any

from evaluators.core.types import Report, SampleScore
from evaluators.engine.store.byte_counts import count_stored_bytes
from evaluators.engine.store.connection import StoreConnection
from evaluators.engine.store.rows import sample_score_row, score_of_row
from evaluators.engine.store.values import json_text


class ScoreQueries(StoreConnection):
    """A run's verdicts and reports, per scoring mode."""

    def save_scores(self, run_id: str, mode: str, scores: list[SampleScore], report: Report,
                    rows: Sequence[tuple[Any, ...]] | None = None) -> None:
        """The run's verdicts in `mode` (replacing any stored) and its report. `rows`: the verdicts' rows made
        already (sample_score_row), in their order."""
        rows = rows if rows is not None else [sample_score_row(run_id, mode, score) for score in scores]
        report_text = json_text(report.to_json())
        with self._transaction() as db:
            db.execute("DELETE FROM sample_scores WHERE run_id=? AND mode=?", (run_id, mode))
            db.executemany(
                "INSERT INTO sample_scores (run_id, mode, sample_id, subset, correct, error_type, rule, detail, decoded,"
                " metrics, metadata) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                rows,
            )
            db.execute("INSERT OR REPLACE INTO reports (run_id, mode, report, created_at) VALUES (?,?,?,?)",
                       (run_id, mode, report_text, time.time()))
            count_stored_bytes(db, [*rows, (run_id, mode, report_text)])

    def load_report(self, run_id: str, mode: str = "official") -> dict[str, Any] | None:
        rows = self._query("SELECT report FROM reports WHERE run_id=? AND mode=?", (run_id, mode))
        return json.loads(rows[0][0]) if rows else None

    def load_reports(self, run_ids: list[str], mode: str = "official") -> dict[str, dict[str, Any]]:
        """The reports of several runs in one query (the jobs panel polls every second); runs without one
        are left out."""
        if not run_ids:
            return {}
        rows = self._query(f"SELECT run_id, report FROM reports WHERE mode=? AND run_id IN ({', '.join('?' * len(run_ids))})",
                           (mode, *run_ids))
        return {run_id: json.loads(text) for run_id, text in rows}

    def load_scores(self, run_id: str, mode: str = "official") -> list[SampleScore]:
        """The stored verdicts of a run, in the order the samples were scored."""
        rows = self._query("SELECT * FROM sample_scores WHERE run_id=? AND mode=? ORDER BY rowid", (run_id, mode))
        return [score_of_row(row) for row in rows]
