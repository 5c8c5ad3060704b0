"""The results dataset's rows, made from a store: `contents` (every board row, published rows included),
`details` (one row per scored item and scoring mode) and `runs` (each run's whole record, to rebuild a store),
and the import of a `runs` table into another store. Values are written as the schema types them
(dataset_schema) and as they may be published (engine.redact's public rules).

Runs scored on a benchmark's built-in example (a few items shipped to try the app) are never written: not in
`contents` (the board leaves them out), nor in `details` or `runs`; exporting every run leaves them out, naming one
is refused.

Nothing written names an endpoint: base URLs (even their hosts, which can name a private deployment),
API key variable names, the data folder and request bodies stay in the local store. Free text a user
typed (model names, notes) is written without key-shaped tokens and without local folders.

pyarrow is imported inside functions: the app imports this module's callers at start-up.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd

from evaluators.core.errors import ToolboardError
from evaluators.core.registry import MODES, Benchmark, benchmark_names, get_benchmark
from evaluators.core.types import Prediction, SampleScore
from evaluators.engine.redact import public_error, public_events, public_request, public_settings, public_text
from evaluators.engine.run_document import RunDocument, export_document, import_run
from evaluators.engine.store import RunRow, Store, StoredSample, json_or_null, json_text
from evaluators.publish.board_table import SOURCE_OF_RUN, board_rows, frame_records, run_ids_of, run_on_example_data
from evaluators.publish.dataset_schema import (
    ResultsDatasetError,
    arrow_frame,
    arrow_schema,
    config_schema,
    contents_columns,
    fixed_columns,
    iso_time,
    record,
)

if TYPE_CHECKING:
    import pyarrow as pa  # type: ignore[import-untyped]

# Detail rows made at a time (a run's outputs and gold answers can be large).
DETAIL_BATCH_ROWS = 512
FINISHED = "finished"


def _run_language(view_label: str, row: dict[str, Any], runs: list[RunRow]) -> str | None:
    """The language of the items behind a row: the run's; a published row's view when views are languages."""
    if row["source"] == "published":
        return row["view"] if view_label == "Language" else None
    languages = {run.language for run in runs}
    return languages.pop() if len(languages) == 1 else None


def _contents_record(benchmark: Benchmark, view_label: str, row: dict[str, Any], runs_by_id: dict[str, RunRow],
                     columns: list[tuple[str, str]]) -> dict[str, Any]:
    """One board row as a `contents` record: the board's values, with what the store knows of its runs."""
    runs = [runs_by_id[part] for part in run_ids_of(row) if part in runs_by_id]
    profiles = {(run.config.get("request_profile") or {}).get("prompt_style") for run in runs}
    created = [run.created_at for run in runs]
    values = {**row, "benchmark": benchmark.name, "view_label": view_label,
              "language": _run_language(view_label, row, runs),
              "request_profile": profiles.pop() if len(profiles) == 1 else None,
              "created": iso_time(min(created)) if created else None}
    if row["source"] != "published":  # typed by a user: published rows come from the project's own files
        values.update({name: public_text(values[name]) for name in ("model", "details")
                       if isinstance(values.get(name), str)})
    return record(values, columns, f"{benchmark.name} row of {row['model']!r} ({row['view']}, {row['mode']})")


# ---- contents --------------------------------------------------------------------------------------


def contents_table(store: Store | None, benchmarks: Iterable[str] | None = None,
                   run_ids: Iterable[str] | None = None) -> pa.Table:
    """The `contents` rows as an Arrow table: every board row of each benchmark (every registered one by
    default) in both scoring modes, published rows included. With `run_ids`, only the rows of those runs
    (a row averaging runs: when all of them are chosen) beside the published rows."""
    import pyarrow as pa

    names = list(benchmarks) if benchmarks is not None else benchmark_names()
    columns = contents_columns(names)
    chosen = set(run_ids) if run_ids is not None else None
    runs_by_id = {run.id: run for run in store.list_runs()} if store is not None else {}
    records = []
    for name in names:
        benchmark = get_benchmark(name)
        view_label = benchmark.board_layout().view_label
        for mode in MODES:
            frame = board_rows(name, store, mode)
            unwritten = [column for column in frame.columns if column not in dict(columns)]
            if unwritten:  # every board column is written: a new one needs its place in this schema
                raise ResultsDatasetError(f"{name}: board column(s) {', '.join(unwritten)} have no results dataset column")
            for row in frame_records(frame):
                if chosen is not None and row["source"] != "published" and not set(run_ids_of(row)) <= chosen:
                    continue
                records.append(_contents_record(benchmark, view_label, row, runs_by_id, columns))
    return pa.Table.from_pylist(records, schema=arrow_schema(columns))


def contents_rows(store: Store | None, benchmarks: Iterable[str] | None = None,
                  run_ids: Iterable[str] | None = None) -> pd.DataFrame:
    """The `contents` config as a DataFrame (nullable Arrow-backed columns): see contents_table."""
    return arrow_frame(contents_table(store, benchmarks, run_ids))


# ---- details ---------------------------------------------------------------------------------------


def chosen_runs(store: Store, run_ids: Iterable[str] | None = None) -> list[RunRow]:
    """The finished runs to export: those named (each must exist, be finished and not be scored on a built-in
    example), else every finished one not scored on a built-in example."""
    if run_ids is None:
        return [run for run in store.list_runs() if run.status == FINISHED and not run_on_example_data(run)]
    runs = []
    for run_id in dict.fromkeys(run_ids):
        if not store.has_run(run_id):
            raise ResultsDatasetError(f"no run {run_id!r} in the store")
        run = store.get_run(run_id)
        if run.status != FINISHED:
            raise ResultsDatasetError(f"run {run_id!r} is {run.status}; only finished runs are exported")
        if run_on_example_data(run):
            raise ResultsDatasetError(f"run {run_id!r} was scored on the built-in example data (a few items to try the"
                                      " app), not on the benchmark's data: it is never published; leave it out")
        runs.append(run)
    return runs


def example_data_runs(store: Store) -> list[RunRow]:
    """The finished runs scored on a built-in example: what an export or a push leaves out."""
    return [run for run in store.list_runs() if run.status == FINISHED and run_on_example_data(run)]


def _detail_record(run: RunRow, mode: str, sample_id: str, subset: str | None, stored: StoredSample | None,
                   score: SampleScore) -> dict[str, Any]:
    """One scored item in one mode as a `details` record (`stored` None: the item has no prediction)."""
    prediction = stored.prediction if stored is not None else None
    # An upload made no request: its tokens are unknown (the store reads them as 0), not 0.
    usage: dict[str, Any] = {}
    if prediction is not None and run.source == "endpoint" and isinstance(prediction.usage, dict):
        usage = prediction.usage
    calls = prediction.tool_calls if prediction is not None else None
    values = {
        "run_id": run.id, "benchmark": run.benchmark, "model": public_text(run.model), "language": run.language,
        "sample_id": sample_id, "subset": subset, "mode": mode,
        "raw_output": prediction.output if prediction is not None else None,
        "raw_tool_calls": json_or_null([{"name": c.name, "arguments": c.arguments} for c in calls]) if calls is not None else None,
        "decoded_calls": json_or_null(score.decoded),
        "gold": json_or_null(stored.gold) if stored is not None and stored.gold_kept else None,
        "correct": score.correct, "rule": score.rule, "error_type": score.error_type,
        "error_detail": public_error(score.detail or None, run.config),
        "sample_metrics": json_or_null(score.metrics), "evidence": json_or_null(public_request(_evidence(prediction, score))),
        "evidence_kinds": _evidence_kinds(run.benchmark),
        "request_error": public_error(prediction.error, run.config) if prediction is not None else None,
        "latency_s": prediction.latency if prediction is not None else None,
        "prompt_tokens": usage.get("prompt_tokens"), "completion_tokens": usage.get("completion_tokens"),
    }
    return record(values, fixed_columns("details"), f"run {run.id!r}, sample {sample_id!r} ({mode})")


def _evidence(prediction: Prediction | None, score: SampleScore) -> dict[str, Any] | None:
    """Every piece of a sample's own evidence: its prediction's, then its score's metadata (a key in both: the
    score's under `score.<key>`); None when it has none."""
    kept = dict(prediction.extra or {}) if prediction is not None else {}
    for key, value in (score.metadata or {}).items():
        kept[f"score.{key}" if key in kept else key] = value
    return kept or None


@functools.lru_cache(maxsize=64)
def _evidence_kinds(benchmark: str) -> str | None:
    """The benchmark's evidence declarations as JSON text (None when it declares none)."""
    try:
        kinds = get_benchmark(benchmark).evidence
    except ToolboardError:  # a run of a benchmark this installation does not have
        return None
    return json_text({kind.key: {"title": kind.title, "render": kind.render, "source": kind.source}
                      for kind in kinds}) if kinds else None


def detail_batches(store: Store, run_ids: Iterable[str] | None = None,
                   batch_rows: int = DETAIL_BATCH_ROWS) -> Iterator[pa.Table]:
    """The `details` rows, `batch_rows` at a time: per run, its predictions page by page in sample id order,
    each with its verdict in every mode it was scored in; then verdicts of items without a prediction (an
    upload that left them out). In memory at once: one page of predictions and one run's verdicts."""
    import pyarrow as pa

    schema = config_schema("details")
    batch: list[dict[str, Any]] = []
    for run in chosen_runs(store, run_ids):
        verdicts = {mode: {score.sample_id: score for score in store.load_scores(run.id, mode)} for mode in MODES}
        for stored in store.iter_stored_samples(run.id):
            for mode in MODES:
                score = verdicts[mode].pop(stored.sample_id, None)
                if score is not None:
                    batch.append(_detail_record(run, mode, stored.sample_id, stored.subset, stored, score))
            if len(batch) >= batch_rows:
                yield pa.Table.from_pylist(batch, schema=schema)
                batch = []
        for mode in MODES:
            for score in verdicts[mode].values():
                batch.append(_detail_record(run, mode, score.sample_id, score.subset, None, score))
    yield pa.Table.from_pylist(batch, schema=schema)


def details_rows(store: Store, run_ids: Iterable[str] | None = None) -> pd.DataFrame:
    """The `details` config as a DataFrame (nullable Arrow-backed columns): see detail_batches."""
    import pyarrow as pa

    return arrow_frame(pa.concat_tables(list(detail_batches(store, run_ids))))


# ---- runs ------------------------------------------------------------------------------------------


def published_document(store: Store, run_id: str) -> RunDocument:
    """The run's whole record (run_document.export_document) as a results dataset holds it: no base URL, no API key
    variable name, no data folder; what a user typed (model, notes, settings) as public_text; request bodies,
    evidence and checkers' metadata with `model` fields as public_text and key-shaped tokens redacted; errors
    without the endpoint's host.
    Imported into another store it rebuilds the run's board rows and its evidence."""
    document = export_document(store, run_id)
    run = document.run
    settings = run.config
    run.base_url = ""
    run.model = public_text(run.model)
    run.config = public_settings(settings)
    run.message = public_error(run.message, settings)
    if run.notes is not None:
        run.notes = public_text(run.notes)
    for sample in document.samples:
        sample.request = public_request(sample.request)
        sample.events = public_events(sample.events, settings)
        # evidence and a checker's metadata as `details` publishes them (_detail_record)
        sample.evidence = public_request(sample.evidence)
        if sample.prediction is not None:
            sample.prediction.error = public_error(sample.prediction.error, settings)
        for score in sample.scores.values():
            score.explanation = public_error(score.explanation, settings)
            score.metadata = public_request(score.metadata)
    return document


def runs_table(store: Store, run_ids: Iterable[str] | None = None) -> pa.Table:
    """The `runs` rows: one per finished run, with its whole record as JSON text (published_document)."""
    import pyarrow as pa

    records = []
    for run in chosen_runs(store, run_ids):
        values = {"run_id": run.id, "benchmark": run.benchmark, "model": public_text(run.model),
                  "language": run.language, "source": SOURCE_OF_RUN.get(run.source, run.source),
                  "created": iso_time(run.created_at), "finished": iso_time(run.finished_at),
                  "fingerprint": run.fingerprint, "document": json_text(published_document(store, run.id).to_json_value())}
        records.append(record(values, fixed_columns("runs"), f"run {run.id!r}"))
    return pa.Table.from_pylist(records, schema=config_schema("runs"))


@dataclass(frozen=True)
class ImportedRuns:
    imported: list[str]
    already_there: list[str]
    skipped: list[str]  # "run id: why", one per row that could not be imported


def import_runs(store: Store, runs: pd.DataFrame, replacing: tuple[str, ...] = ()) -> ImportedRuns:
    """Insert the runs of a `runs` table the store does not have (or holds with a status in `replacing`: see
    Store.import_rows), each all or nothing; a row that is not a valid run document is skipped and said why,
    the others still import."""
    imported: list[str] = []
    there: list[str] = []
    skipped: list[str] = []
    for row in runs.to_dict("records"):
        run_id = str(row.get("run_id"))
        try:
            document = json.loads(row.get("document") or "null")
            if not isinstance(document, dict) or (document.get("run") or {}).get("id") != run_id:
                raise ResultsDatasetError("its document is not the record of this run")
            (imported if import_run(store, document, replacing) else there).append(run_id)
        except (ToolboardError, ValueError) as problem:
            skipped.append(f"{run_id}: {problem}")
    return ImportedRuns(imported, there, skipped)


