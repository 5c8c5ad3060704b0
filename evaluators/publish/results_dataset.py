"""Results as a Hugging Face dataset: `contents` (one row per leaderboard row, published rows included)
and `details` (one row per scored sample), as Parquet beside a dataset card, so that
`datasets.load_dataset(folder, "contents")` reads them. Pure data (pandas, pyarrow); no gradio.

Schema of `contents`: one wide table, one row per board row, with the fixed columns of CONTENTS_COLUMNS,
then every registered benchmark's metric columns (their union, in benchmark order; a benchmark's columns
are null on other benchmarks' rows). Wide, not long (metric/value rows), because a row is then exactly a
board row (what the issue asks and what a notebook user filters on), and the column types are declared
(fraction and count columns float64, `<column>_n` int64, text labels string), so one Parquet table holds
every benchmark. The same column name in two benchmarks must have one type (checked).

Runs scored on a benchmark's built-in example (a few items shipped to try the app) are never written: not in
`contents` (the board leaves them out), nor in `details` or `runs`; exporting every run leaves them out, naming one
is refused.

Nothing written names an endpoint: base URLs (even their hosts, which can name a private deployment),
API key variable names, the data folder and request bodies stay in the local store. Free text a user
typed (model names, notes) is written without key-shaped tokens and without local folders (an absolute
path keeps only its last part: vLLM names a model by the folder it was loaded from).

pyarrow is imported inside functions: the app imports this module's callers at start-up.
"""

from __future__ import annotations

import functools
import json
import logging
import math
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from evaluators.core.errors import ToolboardError
from evaluators.core.registry import MODES, Benchmark, benchmark_names, get_benchmark
from evaluators.core.types import Prediction, SampleScore
from evaluators.engine.redact import redact
from evaluators.engine.run_document import export_run, import_run
from evaluators.engine.store import RunRow, Store, StoredSample, json_or_null, json_text, storable_text
from evaluators.publish.board_table import (
    N_SUFFIX,
    SOURCE_OF_RUN,
    board_rows,
    fraction_columns,
    published_table,
    run_ids_of,
    run_on_example_data,
)

if TYPE_CHECKING:
    import pyarrow as pa

logger = logging.getLogger(__name__)

CONFIGS = ("contents", "details", "runs")
# One split per config; the file name is the Hub's usual shard name, so the Hub viewer reads it too.
SPLIT = "train"
DATA_FILE = f"{SPLIT}-00000-of-00001.parquet"
CARD_FILE = "README.md"
# Detail rows written to Parquet at a time (a run's outputs and gold answers can be large).
DETAIL_BATCH_ROWS = 512
FINISHED = "finished"

# (name, Arrow type, what it holds) of the fixed `contents` columns, in order.
CONTENTS_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("benchmark", "string", "the benchmark's name (`python -m evaluators list`)"),
    ("view_label", "string", "what the benchmark's views are: Language, Subset, Tool…"),
    ("view", "string", "the board view of the row (a language, a subset, a tool, or a view averaging others)"),
    ("language", "string", "the language of the items behind the row; null when not one language or none declared"),
    ("model", "string", "the model as the row names it"),
    ("source", "string", "published (the paper's or site's table), evaluated (a run against an endpoint) or uploaded"),
    ("mode", "string", "scoring mode: official (the reference implementation, quirks included) or strict"),
    ("request_mode", "string", "how requests were made: prompt or native tools; null when not known"),
    ("request_profile", "string", "the prompt style of an evaluated run (official or toolboard) for benchmarks "
                                  "whose requests come in styles; null otherwise"),
    ("apart_reason", "string", "why the row is kept apart from the published ranking; null or empty when comparable"),
    ("organisation", "string", "the model's organisation (leaderboard_data/models.json)"),
    ("params_b", "float64", "the model's parameters, in billions"),
    ("licence", "string", "the model's licence"),
    ("open_weights", "bool", "whether the model's weights are published"),
    ("link", "string", "the model's page"),
    ("flag", "string", "why the row's figures cannot be tied to one released model (leaderboard_data/models.json); "
                       "null when the row is not flagged"),
    ("request_errors", "int64", "failed requests of an evaluated run (scored as failures; can be re-sent)"),
    ("run_id", "string", "the run behind the row (`a + b` for a view averaging two runs); empty for published rows"),
    ("fingerprint", "string", "the run's settings fingerprint: equal fingerprints, same experiment"),
    ("details", "string", "how the row was made (settings of a run, notes of an upload, source of a published table)"),
    ("newest", "bool", "the row belongs to the benchmark's newest evaluated or uploaded run in the exporting store"),
    ("created", "string", "when the run was created (ISO 8601, UTC); null for published rows"),
    ("updated", "string", "the date the row's numbers were produced (ISO date, UTC): the published table's date, "
                          "the run's end"),
    ("usd_per_1k_items", "float64", "an evaluated run's cost in USD per 1,000 items: its reported tokens x the model's "
                                    "list price (leaderboard_data/prices.json); null when not known"),
    ("latency_mean_s", "float64", "an evaluated run's mean seconds per item (answers from the cache left out)"),
    ("latency_p95_s", "float64", "an evaluated run's 95th percentile of seconds per item (nearest rank)"),
    ("cost_note", "string", "the price the cost was computed with, or why the cost or latency is null"),
)
# (name, Arrow type, what it holds) of the `details` columns, in order.
DETAILS_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("run_id", "string", "the run (the `run_id` of its `contents` rows)"),
    ("benchmark", "string", "the benchmark's name"),
    ("model", "string", "the run's model"),
    ("language", "string", "the run's language; null when the benchmark declares none"),
    ("sample_id", "string", "the item's id, as the benchmark's data names it"),
    ("subset", "string", "the item's subset"),
    ("mode", "string", "scoring mode of the verdict: official or strict"),
    ("raw_output", "string", "the model's raw text output"),
    ("raw_tool_calls", "string", "native tool calls as returned, JSON text ([{name, arguments}])"),
    ("decoded_calls", "string", "the calls the checker decoded from the output, JSON text"),
    ("gold", "string", "the item's gold answer, JSON text; null for runs stored before gold answers were kept"),
    ("correct", "bool", "the verdict"),
    ("rule", "string", "the checker rule that decided the verdict"),
    ("error_type", "string", "the kind of error: format error, wrong function, wrong arguments, missed call, …"),
    ("error_detail", "string", "what the checker found"),
    ("sample_metrics", "string", "per-item metric values, JSON text"),
    ("evidence", "string", "the benchmark's own evidence for the item (an agent's end state and transcript, a judge's"
                           " verdict and rationale…), JSON text: an object by evidence key, with the score's metadata"
                           " (its keys as the benchmark declares them, see `evidence_kinds`)"),
    ("evidence_kinds", "string", "how the benchmark declares each evidence key: JSON text, {key: {title, render,"
                                 " source}}"),
    ("request_error", "string", "why the request failed (a failed request is scored as a failure)"),
    ("latency_s", "float64", "seconds the request took"),
    ("prompt_tokens", "int64", "prompt tokens the endpoint counted"),
    ("completion_tokens", "int64", "completion tokens the endpoint counted"),
)
# (name, Arrow type, what it holds) of the `runs` columns: what another toolboard store needs to rebuild them.
RUNS_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("run_id", "string", "the run"),
    ("benchmark", "string", "the benchmark's name"),
    ("model", "string", "the run's model"),
    ("language", "string", "the run's language; null when the benchmark declares none"),
    ("source", "string", "evaluated or uploaded"),
    ("created", "string", "when the run was created (ISO 8601, UTC)"),
    ("finished", "string", "when the run ended (ISO 8601, UTC)"),
    ("fingerprint", "string", "the run's settings fingerprint"),
    ("document", "string", "the run's whole record as JSON, a run document of version 2 (settings without endpoints,"
                           " key names or folders; sample by sample its prediction, its evidence, the last request"
                           " body sent, every model call made for it as an event, and its score in both scoring"
                           " modes; the reports): what a toolboard Space imports to rebuild its board"),
)
# Arrow types of metric columns, by the metric's declared kind (a count can be a mean over views: float).
KIND_TYPES = {"fraction": "float64", "count": "float64", "text": "string"}
INTERVAL_TYPES = {N_SUFFIX: "int64", "_low": "float64", "_high": "float64"}

# An absolute local path (POSIX, home-relative or Windows) that is not part of a URL or a relative path:
# group 1 is its last part, which is all that is kept.
LOCAL_PATH = re.compile(r"(?<![\w:/.~\\-])(?:~|[A-Za-z]:)?[/\\](?:[^\s/\\,;:()'\"]+[/\\])+([^\s/\\,;:()'\"]*)")


class ResultsDatasetError(ToolboardError):
    """A results dataset (folder, Parquet file or schema) is not what this module writes."""


@dataclass(frozen=True)
class WrittenDataset:
    folder: Path
    contents_rows: int
    details_rows: int
    runs_rows: int
    example_runs_left_out: int = 0  # finished runs scored on a built-in example, never written


# ---- schemas ---------------------------------------------------------------------------------------


def _arrow_type(name: str) -> pa.DataType:
    import pyarrow as pa

    return {"string": pa.string(), "float64": pa.float64(), "int64": pa.int64(), "bool": pa.bool_()}[name]


def _schema(columns: Iterable[tuple[str, str]]) -> pa.Schema:
    import pyarrow as pa

    return pa.schema([pa.field(name, _arrow_type(kind), nullable=True) for name, kind in columns])


def metric_columns(benchmark: Benchmark) -> list[tuple[str, str]]:
    """The benchmark's board columns beyond the fixed ones, with their Arrow types: metric columns, text
    labels, and the n and 95% interval bounds beside each fraction column."""
    layout = benchmark.board_layout()
    columns = [(name, KIND_TYPES.get(benchmark.metric(name).kind, "float64"))
               for name in (*layout.columns, *layout.detail_columns)]
    columns += [(name, "string") for name in layout.text_columns]
    columns += [(name + suffix, kind) for name in fraction_columns(benchmark, layout)
                for suffix, kind in INTERVAL_TYPES.items()]
    return columns


def contents_columns(benchmarks: Iterable[str]) -> list[tuple[str, str]]:
    """Every `contents` column with its Arrow type: the fixed ones, then each benchmark's (their union)."""
    columns = {name: kind for name, kind, _ in CONTENTS_COLUMNS}
    owner = dict.fromkeys(columns, "the fixed columns")
    for benchmark in benchmarks:
        for name, kind in metric_columns(get_benchmark(benchmark)):
            if name in columns and columns[name] != kind or owner.get(name) == "the fixed columns":
                raise ResultsDatasetError(
                    f"{benchmark}: board column {name!r} ({kind}) clashes with {owner[name]}'s {name!r} ({columns[name]});"
                    " one results table cannot hold both: rename one of them in its benchmark declaration")
            columns.setdefault(name, kind)
            owner.setdefault(name, benchmark)
    return list(columns.items())


def details_schema() -> pa.Schema:
    return _schema((name, kind) for name, kind, _ in DETAILS_COLUMNS)


# ---- values as written -----------------------------------------------------------------------------


def public_text(text: str) -> str:
    """Free text a user typed, as it may be published: no key-shaped tokens, no local folders."""
    return LOCAL_PATH.sub(lambda match: match.group(1), redact(storable_text(text)))


def endpoint_names(config: dict[str, Any]) -> list[str]:
    """The hosts (and host:port) of a run's endpoints (the model's and every role's), longest first."""
    from urllib.parse import urlsplit

    urls = [(config.get("model") or {}).get("base_url")]
    urls += [(role or {}).get("base_url") for role in (config.get("roles") or {}).values()]
    names = set()
    for url in urls:
        try:
            parts = urlsplit(url or "")
            if parts.hostname:
                names.update({parts.hostname, parts.netloc.rpartition("@")[2]})
        except ValueError:
            continue
    return sorted(names, key=len, reverse=True)


def public_error(text: str | None, config: dict[str, Any]) -> str | None:
    """An error or status message as it may be published: the run's endpoint hosts (a connection error names
    them) replaced by `<endpoint>`, then as public_text."""
    if text is None:
        return None
    for name in endpoint_names(config):
        text = text.replace(name, "<endpoint>")
    return public_text(text)


def _missing(value: Any) -> bool:
    return value is None or value is pd.NA or isinstance(value, float) and math.isnan(value)


def _cell(value: Any, kind: str, where: str) -> Any:
    """One value in its column's Arrow type (None where missing); ResultsDatasetError names a wrong one."""
    if _missing(value):
        return None
    if kind == "string":
        return storable_text(str(value))
    if kind == "bool":
        return bool(value)
    if not isinstance(value, int | float):
        raise ResultsDatasetError(f"{where} holds {value!r}, not a number")
    if kind == "int64":
        if float(value) != int(value):
            raise ResultsDatasetError(f"{where} holds {value!r}, not a whole number")
        return int(value)
    return float(value)


def _iso_time(timestamp: float | None) -> str | None:
    return None if timestamp is None else datetime.fromtimestamp(timestamp, UTC).isoformat(timespec="seconds")


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
              "created": _iso_time(min(created)) if created else None}
    if row["source"] != "published":  # typed by a user: published rows come from the project's own files
        values.update({name: public_text(values[name]) for name in ("model", "details")
                       if isinstance(values.get(name), str)})
    where = f"{benchmark.name} row of {row['model']!r} ({row['view']}, {row['mode']})"
    return {name: _cell(values.get(name), kind, f"{where}: column {name!r}") for name, kind in columns}


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
            for row in frame.to_dict("records"):
                if chosen is not None and row["source"] != "published" and not set(run_ids_of(row)) <= chosen:
                    continue
                records.append(_contents_record(benchmark, view_label, row, runs_by_id, columns))
    return pa.Table.from_pylist(records, schema=_schema(columns))


def contents_rows(store: Store | None, benchmarks: Iterable[str] | None = None,
                  run_ids: Iterable[str] | None = None) -> pd.DataFrame:
    """The `contents` config as a DataFrame (nullable Arrow-backed columns): see contents_table."""
    return contents_table(store, benchmarks, run_ids).to_pandas(types_mapper=pd.ArrowDtype)


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
    requested = prediction is not None and run.source == "endpoint" and isinstance(prediction.usage, dict)
    usage = prediction.usage if requested else {}
    calls = prediction.tool_calls if prediction is not None else None
    record = {
        "run_id": run.id, "benchmark": run.benchmark, "model": public_text(run.model), "language": run.language,
        "sample_id": sample_id, "subset": subset, "mode": mode,
        "raw_output": prediction.output if prediction is not None else None,
        "raw_tool_calls": json_or_null([{"name": c.name, "arguments": c.arguments} for c in calls]) if calls is not None else None,
        "decoded_calls": json_or_null(score.decoded),
        "gold": json_or_null(stored.gold) if stored is not None and stored.gold_kept else None,
        "correct": score.correct, "rule": score.rule, "error_type": score.error_type,
        "error_detail": public_error(score.detail or None, run.config),
        "sample_metrics": json_or_null(score.metrics), "evidence": json_or_null(_public_request(_evidence(prediction, score))),
        "evidence_kinds": _evidence_kinds(run.benchmark),
        "request_error": public_error(prediction.error, run.config) if prediction is not None else None,
        "latency_s": prediction.latency if prediction is not None else None,
        "prompt_tokens": usage.get("prompt_tokens"), "completion_tokens": usage.get("completion_tokens"),
    }
    where = f"run {run.id!r}, sample {sample_id!r} ({mode})"
    return {name: _cell(record[name], kind, f"{where}: column {name!r}") for name, kind, _ in DETAILS_COLUMNS}


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

    schema = details_schema()
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

    return pa.concat_tables(list(detail_batches(store, run_ids))).to_pandas(types_mapper=pd.ArrowDtype)


# ---- runs ------------------------------------------------------------------------------------------


def published_document(store: Store, run_id: str) -> dict[str, Any]:
    """The run's whole record (run_document.export_run) as a results dataset holds it: no base URL, no API key
    variable name, no data folder; what a user typed (model, notes, settings) as public_text; request bodies
    with their `model` fields as public_text and key-shaped tokens redacted (a body names no endpoint and no
    key: those travel in the URL and headers). Imported into another store it rebuilds the run's board rows
    and its evidence."""
    document = export_run(store, run_id)
    run = document["run"]
    settings = run["config"]
    run.update(base_url="", model=public_text(run["model"]), config=_public_settings(settings),
               message=public_error(run.get("message"), settings))
    if isinstance(run.get("notes"), str):
        run["notes"] = public_text(run["notes"])
    for sample in document["samples"]:
        sample["request"] = _public_request(sample.get("request"))
        sample["events"] = _public_events(sample.get("events"), settings)
        if sample.get("prediction") is not None:
            sample["prediction"]["error"] = public_error(sample["prediction"].get("error"), settings)
        for score in sample["scores"].values():
            score["explanation"] = public_error(score.get("explanation"), settings)
    return document


def _public_events(events: Any, settings: dict[str, Any]) -> Any:
    """A sample's model calls as they may be published: requests and responses as _public_request makes them,
    errors as public_error (a connection error names the endpoint)."""
    if not isinstance(events, list):
        return events
    return [{**_public_request(event), "error": public_error(event.get("error"), settings)}
            if isinstance(event, dict) else event for event in events]


def _public_request(value: Any, key: str = "") -> Any:
    """A kept request body as it may be published: `model` names (a local server names a model by its folder)
    as public_text, any other text without key-shaped tokens."""
    if isinstance(value, dict):
        return {name: _public_request(item, name) for name, item in value.items()}
    if isinstance(value, list):
        return [_public_request(item, key) for item in value]
    if isinstance(value, str):
        return public_text(value) if key == "model" else redact(value)
    return value


def _public_settings(config: Any) -> Any:
    """A run's settings without endpoints, key variable names or local folders; other text as public_text."""
    if isinstance(config, dict):
        return {name: "" if name in ("base_url", "api_key_env") else None if name == "data_dir"
                else _public_settings(value) for name, value in config.items()}
    if isinstance(config, list):
        return [_public_settings(value) for value in config]
    return public_text(config) if isinstance(config, str) else config


def runs_table(store: Store, run_ids: Iterable[str] | None = None) -> pa.Table:
    """The `runs` rows: one per finished run, with its whole record as JSON text (published_document)."""
    import pyarrow as pa

    records = []
    for run in chosen_runs(store, run_ids):
        record = {"run_id": run.id, "benchmark": run.benchmark, "model": public_text(run.model),
                  "language": run.language, "source": SOURCE_OF_RUN.get(run.source, run.source),
                  "created": _iso_time(run.created_at), "finished": _iso_time(run.finished_at),
                  "fingerprint": run.fingerprint, "document": json_text(published_document(store, run.id))}
        where = f"run {run.id!r}"
        records.append({name: _cell(record[name], kind, f"{where}: column {name!r}") for name, kind, _ in RUNS_COLUMNS})
    return pa.Table.from_pylist(records, schema=_schema((name, kind) for name, kind, _ in RUNS_COLUMNS))


@dataclass(frozen=True)
class ImportedRuns:
    imported: list[str]
    already_there: list[str]
    skipped: list[str]  # "run id: why", one per row that could not be imported


def import_runs(store: Store, runs: pd.DataFrame, replacing: tuple[str, ...] = ()) -> ImportedRuns:
    """Insert the runs of a `runs` table the store does not have (or holds with a status in `replacing`: see
    Store.import_rows), each all or nothing; a row that is not a valid run document is skipped and said why,
    the others still import."""
    imported, there, skipped = [], [], []
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


# ---- the dataset folder ----------------------------------------------------------------------------


def write_dataset(folder: str | Path, store: Store, run_ids: Iterable[str] | None = None,
                  benchmarks: Iterable[str] | None = None) -> WrittenDataset:
    """Write `contents/`, `details/`, `runs/` (one Parquet file each) and the dataset card into `folder`. Files of an
    earlier export there are replaced; other Parquet files in those folders are refused (they would load too).
    A config without rows is left out (file and card): `datasets` cannot load an empty split."""
    import pyarrow.parquet as pq

    folder = Path(folder)
    names = list(benchmarks) if benchmarks is not None else benchmark_names()
    runs = [run.id for run in chosen_runs(store, run_ids)]
    left_out = len(example_data_runs(store)) if run_ids is None else 0
    if left_out:
        logger.info("results dataset: left out %d run%s scored on the built-in example data", left_out,
                    "" if left_out == 1 else "s")
    for config in CONFIGS:
        (folder / config).mkdir(parents=True, exist_ok=True)
        strays = sorted(p.name for p in (folder / config).glob("*.parquet") if p.name != DATA_FILE)
        if strays:
            raise ResultsDatasetError(f"{folder / config} holds other Parquet files ({', '.join(strays)}): they would"
                                      f" load as part of the {config!r} config; export into an empty folder")
    contents = contents_table(store, names, runs if run_ids is not None else None)
    if not contents.num_rows:
        raise ResultsDatasetError(f"nothing to export for {', '.join(names)}: no published rows and no finished runs")
    _replace(folder / "contents" / DATA_FILE, lambda path: pq.write_table(contents, path))
    details_count = _write_details(folder / "details" / DATA_FILE, store, runs)
    records = runs_table(store, runs)
    _replace(folder / "runs" / DATA_FILE, lambda path: pq.write_table(records, path) if records.num_rows else None)
    configs = [config for config, count in zip(CONFIGS, (contents.num_rows, details_count, records.num_rows)) if count]
    _replace(folder / CARD_FILE, lambda path: path.write_text(dataset_card(names, configs), encoding="utf-8"))
    return WrittenDataset(folder, contents.num_rows, details_count, records.num_rows, left_out)


def run_shard_name(run_id: str) -> str:
    """The file of one run in each config of a dataset grown run by run (the hub sync appends this way)."""
    return f"{run_id}.parquet"


def write_run_shards(folder: str | Path, store: Store, run_id: str) -> list[str]:
    """Write one finished run's `runs` row and `details` rows as `runs/<id>.parquet` and `details/<id>.parquet`
    under `folder` (details left out when it has no scored item); returns the paths written, relative to it. A run
    scored on a built-in example is refused (chosen_runs)."""
    import pyarrow.parquet as pq

    folder = Path(folder)
    written = []
    for config in ("runs", "details"):
        (folder / config).mkdir(parents=True, exist_ok=True)
    pq.write_table(runs_table(store, [run_id]), folder / "runs" / run_shard_name(run_id))
    written.append(f"runs/{run_shard_name(run_id)}")
    if _write_details(folder / "details" / run_shard_name(run_id), store, [run_id]):
        written.append(f"details/{run_shard_name(run_id)}")
    return written


def write_contents_and_card(folder: str | Path, store: Store, configs: Iterable[str]) -> list[str]:
    """Write the whole `contents` (every board row the store makes, published rows included) and the dataset
    card naming `configs`; returns the paths written, relative to `folder`."""
    import pyarrow.parquet as pq

    folder = Path(folder)
    names = benchmark_names()
    (folder / "contents").mkdir(parents=True, exist_ok=True)
    pq.write_table(contents_table(store, names), folder / "contents" / DATA_FILE)
    (folder / CARD_FILE).write_text(dataset_card(names, configs), encoding="utf-8")
    return [f"contents/{DATA_FILE}", CARD_FILE]


def _write_details(path: Path, store: Store, run_ids: list[str]) -> int:
    """The details rows written to `path` batch by batch; none written (and an earlier file removed) when
    there are no rows. Returns how many were written."""
    import pyarrow.parquet as pq

    count = 0

    def write(partial: Path) -> None:
        nonlocal count
        writer = None
        try:
            for batch in detail_batches(store, run_ids):
                if batch.num_rows:
                    writer = writer or pq.ParquetWriter(partial, details_schema())
                    writer.write_table(batch)
                    count += batch.num_rows
        finally:
            if writer is not None:
                writer.close()

    _replace(path, write)
    return count


def _replace(path: Path, write: Any) -> None:
    """Write beside `path`, then move into place: a reader never sees half a file (and *.parquet globs skip
    it). When `write` wrote nothing, `path` is removed: what an earlier export left there is not this one."""
    partial = path.with_name(path.name + ".partial")
    try:
        write(partial)
        if partial.exists():
            os.replace(partial, path)
        else:
            path.unlink(missing_ok=True)
    finally:
        partial.unlink(missing_ok=True)


def read_dataset(folder: str | Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The `contents` and `details` of a results dataset folder, checked: every Parquet file readable and
    with the columns and types this module writes (other benchmarks' metric columns are welcome)."""
    return read_config(folder, "contents"), read_config(folder, "details")


def read_config(folder: str | Path, config: str) -> pd.DataFrame:
    """One config (contents, details or runs) of a results dataset folder, checked as read_dataset checks it."""
    if config not in CONFIGS:
        raise ResultsDatasetError(f"unknown config {config!r}: one of {', '.join(CONFIGS)}")
    folder = Path(folder)
    if not folder.is_dir():
        raise ResultsDatasetError(f"{folder} is not a folder (a results dataset is a folder with contents/, details/"
                                  " and runs/)")
    return _read_config(folder, config)


def read_config_file(path: str | Path, config: str) -> pd.DataFrame:
    """One Parquet file of a config, checked as read_config checks every file (a dataset grown run by run is
    read file by file, so one damaged file costs only its own rows)."""
    if config not in CONFIGS:
        raise ResultsDatasetError(f"unknown config {config!r}: one of {', '.join(CONFIGS)}")
    return _read_parquet(Path(path), config).to_pandas(types_mapper=pd.ArrowDtype)


def _fixed_columns(config: str) -> list[tuple[str, str]]:
    """The columns every table of a config has (contents adds each benchmark's)."""
    columns = {"contents": CONTENTS_COLUMNS, "details": DETAILS_COLUMNS, "runs": RUNS_COLUMNS}[config]
    return [(name, kind) for name, kind, _ in columns]


def _read_config(folder: Path, config: str) -> pd.DataFrame:
    import pyarrow as pa

    files = sorted((folder / config).glob("*.parquet"))
    if not files and config != "contents":  # an export without runs or scored items writes none
        return _schema(_fixed_columns(config)).empty_table().to_pandas(types_mapper=pd.ArrowDtype)
    if not files:
        raise ResultsDatasetError(f"{folder / config}: no Parquet file; expected {config}/{DATA_FILE}"
                                  " (written by `python -m evaluators export --dataset`)")
    tables = [_read_parquet(path, config) for path in files]
    return pa.concat_tables(tables, promote_options="default").to_pandas(types_mapper=pd.ArrowDtype)


def _read_parquet(path: Path, config: str) -> pa.Table:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except (pa.ArrowException, OSError) as problem:
        raise ResultsDatasetError(f"{path}: not a readable Parquet file ({problem}); truncated or not a results"
                                  " dataset file? Export it again") from None
    expected = _fixed_columns(config)
    missing = [name for name, _ in expected if name not in table.schema.names]
    if missing:
        raise ResultsDatasetError(f"{path}: not a {config!r} table of a results dataset: missing column(s)"
                                  f" {', '.join(missing)}")
    for name, kind in expected:
        found = table.schema.field(name).type
        if found != _arrow_type(kind) and found != pa.null():
            raise ResultsDatasetError(f"{path}: column {name!r} is {found}, expected {kind}")
    if config != "contents":
        extra = [name for name in table.schema.names if name not in dict(expected)]
        if extra:
            raise ResultsDatasetError(f"{path}: unknown column(s) {', '.join(extra)} in a {config!r} table"
                                      " (written by a newer toolboard?)")
    else:
        for field in table.schema:
            if field.name not in dict(expected) and field.type not in (pa.float64(), pa.int64(), pa.string(), pa.null()):
                raise ResultsDatasetError(f"{path}: metric column {field.name!r} is {field.type}, expected"
                                          " float64, int64 or string")
    return table.cast(_schema((f.name, _type_name(f.type, dict(expected).get(f.name))) for f in table.schema))


def _type_name(found: pa.DataType, expected: str | None) -> str:
    """The Arrow type name a column is read as: its expected one (an all-null column takes it too)."""
    import pyarrow as pa

    if expected is not None:
        return expected
    return {pa.float64(): "float64", pa.int64(): "int64"}.get(found, "string")


# ---- the dataset card ------------------------------------------------------------------------------

CARD_TAGS = ("leaderboard", "tool-calling", "function-calling", "evaluation")


def card_header(configs: Iterable[str]) -> str:
    """The card's YAML: the configs `datasets` loads (contents is the default) and the Hub's metadata."""
    lines = ["---", "license: other", "license_name: per-benchmark", "pretty_name: Toolboard results", "tags:",
             *(f"- {tag}" for tag in CARD_TAGS), "configs:"]
    for config in configs:
        lines.append(f"- config_name: {config}")
        if config == "contents":
            lines.append("  default: true")
        lines += ["  data_files:", f"  - split: {SPLIT}", f"    path: {config}/*.parquet"]
    return "\n".join([*lines, "---", ""])


def _cell_text(text: Any) -> str:
    """Text for one Markdown table cell."""
    return " ".join(str(text or "").split()).replace("|", "\\|")


def _column_table(columns: Iterable[tuple[str, str, str]]) -> list[str]:
    lines = ["| column | type | holds |", "|---|---|---|"]
    lines += [f"| `{name}` | {kind} | {_cell_text(meaning)} |" for name, kind, meaning in columns]
    return lines


def dataset_card(benchmarks: Iterable[str], configs: Iterable[str] = CONFIGS) -> str:
    """The README.md of a results dataset: YAML configs, how to load it, every column, each benchmark's
    data licence and how to cite. Built from declarations only: nothing of the local machine."""
    names = list(benchmarks)
    lines = [card_header(configs), "# Toolboard results", "",
             "Tool-calling scores from toolboard: the leaderboard rows (published tables, runs evaluated against"
             " endpoints, uploaded predictions) and the per-item verdicts behind them.", "",
             "```python", "from datasets import load_dataset", "",
             f'contents = load_dataset("ORG/NAME", "contents", split="{SPLIT}")  # or a local folder',
             f'details = load_dataset("ORG/NAME", "details", split="{SPLIT}")', "```", "",
             "Fraction columns hold values in [0, 1], rounded as each benchmark's reference implementation rounds"
             " them; count columns hold counts. No base URL (not even its host), API key, key variable name,"
             " request body or local path is in this dataset.", "",
             "## `contents`: one row per leaderboard row", "", *_column_table(CONTENTS_COLUMNS), "",
             "Then each benchmark's columns (null on other benchmarks' rows). Beside each fraction column `c`:"
             " `c_n` (the items behind it) and `c_low`, `c_high` (its 95% Wilson interval); null when not known.", ""]
    for name in names:
        benchmark = get_benchmark(name)
        layout = benchmark.board_layout()
        lines += [f"### {benchmark.title} (`{name}`)", "", "| column | type | holds |", "|---|---|---|"]
        for column in (*layout.columns, *layout.detail_columns, *layout.text_columns):
            metric = benchmark.metric(column)
            kind = "string" if column in layout.text_columns else KIND_TYPES.get(metric.kind, "float64")
            lines.append(f"| `{column}` | {kind} | {_cell_text(metric.description or metric.shown_as)} |")
        lines.append("")
    lines += ["## `details`: one row per scored item and scoring mode", "", *_column_table(DETAILS_COLUMNS), "",
              "## `runs`: one row per run, to rebuild a toolboard store", "", *_column_table(RUNS_COLUMNS), "",
              "## Benchmarks: data, licences and citations", ""]
    for name in names:
        benchmark = get_benchmark(name)
        about = benchmark.about
        published = (published_table(name) or {}).get("source") or {}
        lines += [f"### {benchmark.title} (`{name}`)", "",
                  f"- Data licence: {_cell_text(about.licence) or 'not stated'}"]
        if about.data:
            lines.append(f"- Data: {_cell_text(about.data)}")
        if about.source_url:
            lines.append(f"- Source: {about.source_url}")
        if published.get("url"):
            lines.append(f"- Published rows: {published['url']}" + (f" ({published['date']})" if published.get("date") else ""))
        if about.citation:
            lines.append(f"- Cite: {_cell_text(about.citation)}" + (f" ({about.paper_url})" if about.paper_url else ""))
        lines.append("")
    lines += ["## How to cite", "",
              "Cite the benchmarks whose rows you use (above), and this dataset by its Hub address and the"
              " `updated` dates of the rows you quote. Published rows are the benchmark authors' numbers; cite"
              " their sources.", ""]
    return "\n".join(lines)


__all__ = ["CONFIGS", "CONTENTS_COLUMNS", "DETAILS_COLUMNS", "RUNS_COLUMNS", "ImportedRuns", "ResultsDatasetError",
           "WrittenDataset", "chosen_runs", "contents_rows", "contents_table", "dataset_card", "detail_batches", "details_rows",
           "example_data_runs", "import_runs", "public_text", "published_document", "read_config", "read_config_file", "read_dataset", "runs_table",
           "run_shard_name", "write_contents_and_card", "write_dataset", "write_run_shards"]

