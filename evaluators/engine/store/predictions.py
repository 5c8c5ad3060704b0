"""The predictions table: a batch of a run's predictions written with its evidence and cached responses in
one transaction (a value SQLite refuses costs only its own row), and a run's predictions, evidence, usage and
totals read back."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from typing import Any, cast

from evaluators.core.types import Prediction
from evaluators.engine.store.byte_counts import count_stored_bytes
from evaluators.engine.store.cache import CACHE_INSERT_SQL
from evaluators.engine.store.connection import StoreConnection
from evaluators.engine.store.evidence import Evidence, evidence_texts
from evaluators.engine.store.rows import (
    EVIDENCE_COLUMNS,
    PREDICTION_COLUMNS,
    SCORE_COLUMNS,
    TOTAL_KEYS,
    StoredSample,
    prediction_of_row,
    prediction_row,
    score_of_row,
    with_evidence,
)
from evaluators.engine.store.values import REFUSED_VALUE, json_text, storable_prediction, unstorable


class PredictionQueries(StoreConnection):
    """A run's predictions and each sample's evidence, in the predictions table."""

    def save_batch(
        self,
        run_id: str,
        responses: list[tuple[str, dict[str, Any]]],
        predictions: Sequence[tuple[str, Prediction, int] | tuple[str, Prediction, int, Evidence | None]],
    ) -> list[Prediction]:
        """One transaction: cached responses, and predictions as (subset, prediction, attempts) or (subset,
        prediction, attempts, evidence): the sample's gold answer and request, kept in its row (bounded, see
        evidence_text). Returns the predictions as stored. A prediction the store cannot take is stored as
        its own failure (with its evidence) and never takes its neighbours down with it; a response that
        cannot be cached is not cached."""
        now = time.time()
        cache_rows = []
        for key, response in responses:
            try:
                cache_rows.append((key, json_text(response), now))
            except (ValueError, TypeError, RecursionError):
                continue  # the cache is an optimisation: such a response is requested again if needed
        stored = [storable_prediction(item[1]) for item in predictions]
        evidence = [evidence_texts(item[3] if len(item) > 3 else None) for item in predictions]
        rows = [prediction_row(run_id, item[0], prediction, item[2], now, kept)
                for item, prediction, kept in zip(predictions, stored, evidence, strict=True)]
        bad = {index for index, row in enumerate(rows) if isinstance(row, BaseException)}
        try:
            self._write_batch(cache_rows, [row for index, row in enumerate(rows) if index not in bad], run_id)
        except REFUSED_VALUE:  # one value SQLite refuses: each row on its own
            self._write_cache_rows_alone(cache_rows, run_id)
            for index, row in enumerate(rows):
                if index not in bad:
                    try:
                        self._write_batch([], [row])
                    except REFUSED_VALUE as problem:
                        rows[index] = problem
                        bad.add(index)
        for index in sorted(bad):
            subset, attempts = predictions[index][0], predictions[index][2]
            stored[index] = unstorable(stored[index], cast(BaseException, rows[index]))  # a row in `bad` is its problem
            self._write_batch([], [prediction_row(run_id, subset, stored[index], attempts, now, evidence[index])])
        return stored

    def _write_cache_rows_alone(self, cache_rows: list[tuple[Any, ...]], run_id: str) -> None:
        for row in cache_rows:
            try:
                self._write_batch([row], [], run_id)
            except REFUSED_VALUE:
                continue

    def _write_batch(self, cache_rows: list[tuple[Any, ...]], rows: list[Any], run_id: str | None = None) -> None:
        """Cached answers and predictions rows in one transaction; the cached answers' bytes count for `run_id`,
        whose requests they answered (the rows' own for theirs)."""
        with self._transaction() as db:
            db.executemany(CACHE_INSERT_SQL, cache_rows)
            db.executemany(
                "INSERT OR REPLACE INTO predictions (run_id, sample_id, subset, output, tool_calls, error,"
                " latency, prompt_tokens, completion_tokens, attempts, created_at, extra, gold, request, events)"
                " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                rows,
            )
            count_stored_bytes(db, [*rows, *((run_id, *row) for row in cache_rows if run_id is not None)])

    def load_predictions(self, run_id: str) -> dict[str, Prediction]:
        """The run's predictions by sample id (without their evidence: see load_sample_evidence)."""
        rows = self._query(f"SELECT {', '.join(PREDICTION_COLUMNS)} FROM predictions WHERE run_id = ?", (run_id,))
        return {row["sample_id"]: prediction_of_row(row) for row in rows}

    def load_sample_evidence(self, run_id: str, sample_id: str, mode: str = "official") -> StoredSample:
        """One sample of a run: its prediction, its verdict in `mode` and its evidence (gold answer, request),
        in one query of two primary-key lookups (whichever of the rows exists; `subset` None when neither)."""
        columns = ", ".join([*(f"p.{name} AS p_{name}" for name in (*PREDICTION_COLUMNS, *EVIDENCE_COLUMNS)),
                             *(f"s.{name} AS s_{name}" for name in SCORE_COLUMNS)])
        row = self._query(
            f"SELECT {columns} FROM (SELECT ? AS run_id, ? AS sample_id) AS k"
            " LEFT JOIN predictions AS p ON p.run_id = k.run_id AND p.sample_id = k.sample_id"
            " LEFT JOIN sample_scores AS s ON s.run_id = k.run_id AND s.mode = ? AND s.sample_id = k.sample_id",
            (run_id, sample_id, mode),
        )[0]
        prediction = prediction_of_row(row, "p_") if row["p_sample_id"] is not None else None
        score = score_of_row(row, "s_") if row["s_sample_id"] is not None else None
        sample = StoredSample(sample_id, row["p_subset"] or row["s_subset"], prediction, score)
        return with_evidence(sample, row["p_gold"], row["p_request"], row["p_events"])

    def iter_stored_samples(self, run_id: str, page: int = 256) -> Iterator[StoredSample]:
        """Every prediction of the run with its evidence (no verdicts), in sample id order, read `page` rows
        at a time: a run's requests together can be large, so they are never all in memory at once."""
        columns = ", ".join((*PREDICTION_COLUMNS, *EVIDENCE_COLUMNS))
        after: str | None = None
        while True:
            if after is None:
                rows = self._query(f"SELECT {columns} FROM predictions WHERE run_id = ? ORDER BY sample_id LIMIT ?",
                                   (run_id, page))
            else:
                rows = self._query(f"SELECT {columns} FROM predictions WHERE run_id = ? AND sample_id > ?"
                                   " ORDER BY sample_id LIMIT ?", (run_id, after, page))
            for row in rows:
                yield with_evidence(StoredSample(row["sample_id"], row["subset"], prediction_of_row(row)),
                                     row["gold"], row["request"], row["events"])
            if len(rows) < page:
                return
            after = rows[-1]["sample_id"]

    def prediction_states(self, run_id: str) -> dict[str, bool]:
        """sample id -> True if it ended with a request error."""
        rows = self._query("SELECT sample_id, error IS NOT NULL FROM predictions WHERE run_id = ?", (run_id,))
        return {sample_id: bool(is_error) for sample_id, is_error in rows}

    def sample_usage(self, run_ids: list[str]) -> dict[str, list[tuple[float | None, int | None, int | None, bool]]]:
        """Each asked run's predictions as (latency, prompt_tokens, completion_tokens, failed), in one query: what
        a run's cost and latency figures are computed from (NULL tokens: the endpoint reported no usage)."""
        found: dict[str, list[tuple[float | None, int | None, int | None, bool]]] = {run_id: [] for run_id in run_ids}
        if not run_ids:
            return found
        rows = self._query("SELECT run_id, latency, prompt_tokens, completion_tokens, error IS NOT NULL FROM predictions"
                           f" WHERE run_id IN ({', '.join('?' * len(run_ids))})", tuple(run_ids))
        for run_id, latency, prompt_tokens, completion_tokens, failed in rows:
            found[run_id].append((latency, prompt_tokens, completion_tokens, bool(failed)))
        return found

    def run_totals(self, run_id: str) -> dict[str, Any]:
        return self.all_run_totals([run_id])[run_id]

    def all_run_totals(self, run_ids: list[str] | None = None) -> dict[str, dict[str, Any]]:
        """Done, errors, latency and tokens per run (all runs, or those asked), in one query."""
        sql = ("SELECT run_id, COUNT(*) AS done, SUM(error IS NOT NULL) AS errors, SUM(latency) AS latency,"
               " SUM(prompt_tokens) AS prompt_tokens, SUM(completion_tokens) AS completion_tokens FROM predictions")
        params: tuple[Any, ...] = ()
        if run_ids is not None:
            sql += f" WHERE run_id IN ({', '.join('?' * len(run_ids))})"
            params = tuple(run_ids)
        found = {row["run_id"]: {key: row[key] or 0 for key in TOTAL_KEYS}
                 for row in self._query(sql + " GROUP BY run_id", params)}
        for run_id in run_ids or ():
            found.setdefault(run_id, dict.fromkeys(TOTAL_KEYS, 0))
        return found
