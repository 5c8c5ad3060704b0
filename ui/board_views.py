"""The board's views as the page, the API and the downloads give them: in %, bounded for API callers, charted,
written to a file; each shared by every visitor asking the same one until the board changes."""

from __future__ import annotations

import inspect
import re
import tempfile
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pandas as pd

from evaluators.core.csv_files import write_csv
from evaluators.core.display_names import subset_title
from evaluators.core.registry import get_benchmark
from evaluators.service.board import as_json_records, bounded, fact_choices, layout_for, more_rows_note
from evaluators.service.board_queries import view_rows
from ui import charts
from ui.board_state import BoardState, controls_state
from ui.context import AppContext
from ui.format import as_percent, table_json, without_empty_info_columns

# The model filters the board service may take by keyword (size range, weights, flags): passed when it does.
NEW_FILTERS = ("min_params_b", "max_params_b", "weights", "hide_flagged")
DEFAULT_CHARTED = 5


def percent_table(context: AppContext, *values: Any, part: str = "all") -> pd.DataFrame:
    """view_rows in % (as the page, the API and the downloads give it): metric shares and their
    interval bounds ×100 with one decimal; `_n` and count metrics as they are."""
    benchmark, view, search, sources, columns, details, mode, sort_by, *facts = values
    frame = view_rows(context, benchmark, view, search, sources, columns, details, mode, sort_by, part, *facts)
    return as_percent(frame, layout_for(benchmark))


def state_rows(context: AppContext, state: BoardState, part: str = "all") -> pd.DataFrame:
    """view_rows of a board state (fractions): the model filters the service takes by keyword are passed to it;
    while it takes none, "open weights" is its open-weights-only filter."""
    accepted = inspect.signature(view_rows).parameters
    extra: dict[str, Any] = {name: getattr(state, name) for name in NEW_FILTERS if name in accepted}
    open_only = state.weights == "open" and "weights" not in accepted
    return view_rows(context, state.benchmark, state.view, state.search, list(state.sources), list(state.columns),
                      state.details, state.mode, state.sort_by, part, list(state.organisations), open_only,
                      list(state.request_modes), **extra)


def state_percent(context: AppContext, state: BoardState, part: str = "all") -> pd.DataFrame:
    """state_rows in % (as the page and the downloads give it)."""
    return as_percent(state_rows(context, state, part), layout_for(state.benchmark))


def facts_of(context: AppContext) -> Callable[[str, str], dict[str, list[str]]]:
    """(benchmark, mode) -> the organisations and request modes its board has (what the filters accept), read once
    per board version."""
    return lambda benchmark, mode: context.board_view(
        ("facts", benchmark, mode), lambda: fact_choices(context.board_frame(benchmark, mode)))


def chart_key(row: pd.Series) -> str:
    """A board row's name in the "models to chart" choice: the model, and for a run its source and run id's end
    (a model may have a published row and runs)."""
    if row.get("source") == "published":
        return str(row["model"])
    return f"{row['model']} · {row['source']} {str(row.get('run_id') or '')[-6:]}".strip()


def chart_choices(frame: pd.DataFrame) -> list[str]:
    """The view's rows as chart choices, in the table's order (ranked first)."""
    return list(dict.fromkeys(chart_key(row) for _, row in frame.iterrows()))


def charted(choices: list[str], chosen: list[str] | None) -> list[str]:
    """The models to chart: the chosen ones still in the view, else the first DEFAULT_CHARTED rows."""
    kept = [c for c in chosen or [] if c in choices]
    return kept or choices[:DEFAULT_CHARTED]


def state_chart(context: AppContext, state: BoardState, kind: str, models: list[str]) -> Any:
    """The chart of the chosen models of a board state's view, shared by every visitor asking the same one."""
    return context.board_view(("state-chart", state, kind, tuple(models or ())),
                              lambda: _state_chart(context, state, kind, list(models or ())))


def _state_chart(context: AppContext, state: BoardState, kind: str, models: list[str]) -> Any:
    frame = state_rows(context, state)
    rows = frame[[chart_key(row) in models for _, row in frame.iterrows()]] if len(frame) else frame
    layout = layout_for(state.benchmark)
    title = (f"{get_benchmark(state.benchmark).title} · {layout.view_label.lower()} "
             f"{subset_title(state.benchmark, state.view)} · {state.mode}")
    return _figure(context, rows, state.benchmark, kind, title, state.sort_by)


def _figure(context: AppContext, rows: pd.DataFrame, benchmark: str, kind: str, title: str, sort_by: str) -> Any:
    chosen = layout_for(benchmark)
    if kind == "radar":
        return charts.radar(rows, chosen, title)
    if kind in ("accuracy vs latency", "accuracy vs tokens"):
        return charts.accuracy_vs_cost(context.store, rows, chosen, kind.split()[-1], title, score_column=sort_by or None,
                                       resolve=context.board_run_id)
    if kind == "error types":
        return charts.error_types(context.store, rows, title, resolve=context.board_run_id)
    return charts.subset_bars(rows, chosen, title)


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
    title = f"{get_benchmark(benchmark).title} · {chosen.view_label.lower()} {subset_title(benchmark, view)} · {mode}"
    return _figure(context, rows, benchmark, kind, title, sort_by)


def exporter(context: AppContext, kind: str) -> Callable[..., str]:
    """The handler of a download button: writes the view the controls give as a CSV or JSON file."""
    def write(*values: Any) -> str:
        """The current view as a file, in % like the table and the /leaderboard API."""
        state = controls_state(values, facts_of(context))
        if len(values) > 1 and not values[1]:  # an API caller's empty view: every view, as /leaderboard gives it
            state = replace(state, view="")
        frame = state_percent(context, state)
        folder = Path(tempfile.mkdtemp(prefix="toolboard-view-"))
        # Named for what it holds: the benchmark, the view (or every view) and the scoring.
        name = re.sub(r"[^A-Za-z0-9_.-]", "_", f"leaderboard-{state.benchmark}-{state.view or 'every-view'}-{state.mode}")
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
