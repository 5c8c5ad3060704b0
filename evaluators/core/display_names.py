"""What a person reads for a benchmark's subsets, views and columns: the titles its package declares
(`Benchmark.titles`, metric labels), else the key made readable. Reports, charts, the jobs panel and the
board read names here; ids stay in the API and in URLs."""

from __future__ import annotations

from evaluators.core.errors import ToolboardError
from evaluators.core.registry import get_benchmark, readable


def subset_title(benchmark_name: str, key: str) -> str:
    """A subset's, group's or view's title (`non_live_ast` -> "Non-live AST"); for an undeclared key or an
    unknown benchmark, the key with underscores as spaces, capitalised."""
    try:
        return get_benchmark(benchmark_name).subset_title(key)
    except ToolboardError:
        return readable(key)


def column_title(benchmark_name: str, column: str) -> str:
    """A column's title: the metric's declared label, else as `subset_title` (detail columns are subsets)."""
    try:
        return get_benchmark(benchmark_name).column_title(column)
    except ToolboardError:
        return readable(column)


def benchmark_title(benchmark_name: str) -> str:
    """A benchmark's declared title; the name itself for one not registered (a run stored by a deployment that
    had it)."""
    try:
        return get_benchmark(benchmark_name).title
    except ToolboardError:
        return benchmark_name


def error_type_title(key: str) -> str:
    """An error type as a person reads it (`wrong_value` -> "Wrong value"): benchmarks declare no titles for
    error types, so the key made readable."""
    return readable(key)
