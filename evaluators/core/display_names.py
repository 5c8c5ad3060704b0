"""Display names of a benchmark's subsets and metric columns, for whatever a person reads (reports, charts,
tables); ids stay in the API and URLs. Minimal version: the subset's key with underscores as spaces, the
metric's declared label."""

from __future__ import annotations

from evaluators.core.errors import ToolboardError
from evaluators.core.registry import get_benchmark


def subset_title(benchmark_name: str, key: str) -> str:
    """The declared title of a subset (or view, or group) of the benchmark, else the key with underscores as spaces."""
    return key.replace("_", " ")


def column_title(benchmark_name: str, column: str) -> str:
    """The metric label of a board or report column of the benchmark (the column's name when undeclared)."""
    try:
        return get_benchmark(benchmark_name).metric(column).shown_as
    except ToolboardError:
        return column.replace("_", " ")
