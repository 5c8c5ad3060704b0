"""The results dataset's schema: its configs (`contents`, one row per leaderboard row, published rows included;
`details`, one row per scored sample; `runs`, one row per run), their columns with Arrow types and what each
holds, and each value as its column's type takes it. Pure data; pyarrow is imported inside functions (the app
imports this module's callers at start-up).

Schema of `contents`: one wide table, one row per board row, with the fixed columns of CONTENTS_COLUMNS,
then every registered benchmark's metric columns (their union, in benchmark order; a benchmark's columns
are null on other benchmarks' rows). Wide, not long (metric/value rows), because a row is then exactly a
board row (what the issue asks and what a notebook user filters on), and the column types are declared
(fraction and count columns float64, `<column>_n` int64, text labels string), so one Parquet table holds
every benchmark. The same column name in two benchmarks must have one type (checked).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import pandas as pd

from evaluators.core.errors import ToolboardError
from evaluators.core.registry import Benchmark, get_benchmark
from evaluators.engine.store import storable_text
from evaluators.publish.board_table import N_SUFFIX, fraction_columns

if TYPE_CHECKING:
    import pyarrow as pa  # type: ignore[import-untyped]

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


class ResultsDatasetError(ToolboardError):
    """A results dataset (folder, Parquet file or schema) is not what this module writes."""


def arrow_type(name: str) -> pa.DataType:
    import pyarrow as pa

    return {"string": pa.string(), "float64": pa.float64(), "int64": pa.int64(), "bool": pa.bool_()}[name]


def arrow_schema(columns: Iterable[tuple[str, str]]) -> pa.Schema:
    import pyarrow as pa

    return pa.schema([pa.field(name, arrow_type(kind), nullable=True) for name, kind in columns])


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


def fixed_columns(config: str) -> list[tuple[str, str]]:
    """The columns every table of a config has (contents adds each benchmark's)."""
    columns = {"contents": CONTENTS_COLUMNS, "details": DETAILS_COLUMNS, "runs": RUNS_COLUMNS}[config]
    return [(name, kind) for name, kind, _ in columns]


def config_schema(config: str) -> pa.Schema:
    """The Arrow schema of the `details` or `runs` config (contents: contents_columns)."""
    return arrow_schema(fixed_columns(config))


def arrow_frame(table: pa.Table) -> pd.DataFrame:
    """An Arrow table as a DataFrame of nullable Arrow-backed columns (a null stays null, not NaN)."""
    frame: pd.DataFrame = table.to_pandas(types_mapper=pd.ArrowDtype)
    return frame


def is_missing(value: Any) -> bool:
    return value is None or value is pd.NA or isinstance(value, float) and math.isnan(value)


def cell(value: Any, kind: str, where: str) -> Any:
    """One value in its column's Arrow type (None where missing); ResultsDatasetError names a wrong one."""
    if is_missing(value):
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


def record(values: dict[str, Any], columns: Iterable[tuple[str, str]], where: str) -> dict[str, Any]:
    """The values of one row in its columns' types, in column order (cell)."""
    return {name: cell(values.get(name), kind, f"{where}: column {name!r}") for name, kind in columns}


def iso_time(timestamp: float | None) -> str | None:
    return None if timestamp is None else datetime.fromtimestamp(timestamp, UTC).isoformat(timespec="seconds")
