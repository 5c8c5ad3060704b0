"""The board's views as the page, the API and the downloads give them: in %, bounded for API callers, charted,
written to a file; each shared by every visitor asking the same one until the board changes."""

from __future__ import annotations

import re
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from evaluators.core.csv_files import write_csv
from evaluators.core.registry import get_benchmark
from evaluators.service.board import as_json_records, bounded, layout_for, more_rows_note
from evaluators.service.board_queries import view_rows
from ui import charts
from ui.context import AppContext
from ui.format import as_percent, table_json, without_empty_info_columns


def percent_table(context: AppContext, *values: Any, part: str = "all") -> pd.DataFrame:
    """view_rows in % (as the page, the API and the downloads give it): metric shares and their
    interval bounds ×100 with one decimal; `_n` and count metrics as they are."""
    benchmark, view, search, sources, columns, details, mode, sort_by, *facts = values
    frame = view_rows(context, benchmark, view, search, sources, columns, details, mode, sort_by, part, *facts)
    return as_percent(frame, layout_for(benchmark))


def hashable(values: tuple[Any, ...]) -> tuple[Any, ...]:
    """Control values as a cache key (lists become tuples)."""
    return tuple(tuple(v) if isinstance(v, list | tuple) else v for v in values)


def chart_figure(context: AppContext, *values: Any) -> Any:
    """The chart of the view's top rows, shared by every visitor asking the same one until the board changes."""
    return context.board_view(("chart", *hashable(values)), lambda: _chart_figure(context, *values))


def _chart_figure(context: AppContext, benchmark: str, view: str, search: str, sources: list[str], columns: list[str],
                  details: bool, mode: str, sort_by: str, organisations: list[str], open_weights_only: bool,
                  request_modes: list[str], kind: str, top: float) -> Any:
    """The chart of the view's top rows (fractions, as the charts take them)."""
    chosen = layout_for(benchmark)
    rows = view_rows(context, benchmark, view, search, sources, columns, details, mode, sort_by, "all",
                      organisations, open_weights_only, request_modes).head(int(top))
    title = f"{get_benchmark(benchmark).title} · {chosen.view_label.lower()} {view} · {mode}"
    if kind == "radar":
        return charts.radar(rows, chosen, title)
    if kind in ("accuracy vs latency", "accuracy vs tokens"):
        return charts.accuracy_vs_cost(context.store, rows, chosen, kind.split()[-1], title, score_column=sort_by or None)
    if kind == "error types":
        return charts.error_types(context.store, rows, title)
    return charts.subset_bars(rows, chosen, title)


def exporter(context: AppContext, kind: str) -> Callable[..., str]:
    """The handler of a download button: writes the view the controls give as a CSV or JSON file."""
    def write(*values: Any) -> str:
        """The current view as a file, in % like the table and the /leaderboard API."""
        frame = percent_table(context, *values)
        folder = Path(tempfile.mkdtemp(prefix="toolboard-view-"))
        name = re.sub(r"[^A-Za-z0-9_.-]", "_", f"leaderboard-{values[0]}-{values[1] or 'all'}")
        path = folder / f"{name}.{kind}"
        if kind == "csv":
            write_csv(frame, path)  # text cells a spreadsheet would run as formulas are neutralised
        else:
            path.write_text(as_json_records(frame), encoding="utf-8")
        return str(path)
    return write


def bounded_json(frame: pd.DataFrame) -> dict[str, Any]:
    """A queried view for API callers: at most MAX_BOARD_ROWS rows (evaluators.service.board.bounded) as {"headers",
    "data"}, with "total_rows" (the view's rows), "more_rows" (left out) and "note" (how to see them; empty when
    none was left out)."""
    shown, more = bounded(frame)
    return table_json(without_empty_info_columns(shown), total_rows=len(frame), more_rows=more,
                      note=more_rows_note(len(shown), more, "rows (ranked rows first, then by the sort column)"))
