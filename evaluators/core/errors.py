"""Errors that tell the user exactly which file, line and field is wrong."""

from __future__ import annotations

from pathlib import Path


class ToolboardError(Exception):
    """Base class for errors shown to the user as they are (no traceback)."""


class DataError(ToolboardError):
    """Benchmark data is missing or malformed."""

    def __init__(self, message: str, path: str | Path | None = None, line: int | None = None):
        self.path = str(path) if path is not None else None
        self.line = line
        where = ""
        if self.path:
            where = self.path + (f", line {line}" if line is not None else "") + ": "
        super().__init__(where + message)


class PredictionsError(DataError):
    """A predictions file cannot be read or does not match the benchmark."""


class UnknownBenchmarkError(ToolboardError):
    pass
