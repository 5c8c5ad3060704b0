"""Display names where a person reads: a benchmark's subsets (views) and its columns (metric labels); the ids
stay in the API and URLs. (A minimal version: the names part declares subset titles per benchmark package.)"""

from __future__ import annotations

from evaluators.core.errors import UnknownBenchmarkError
from evaluators.core.registry import get_benchmark


def subset_title(benchmark_name: str, key: str) -> str:
    """A subset's (a view's) declared title, else the key with underscores as spaces."""
    return key.replace("_", " ")


def column_title(benchmark_name: str, column: str) -> str:
    """A board column's metric label as the benchmark declares it, else the column with underscores as spaces."""
    try:
        labels = get_benchmark(benchmark_name).board_layout().labels
    except UnknownBenchmarkError:
        labels = {}
    return labels.get(column) or column.replace("_", " ")
