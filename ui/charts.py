"""Plotly charts, each answering one question a user has:
- subset bars: where is a model strong or weak, next to the others I picked?
- radar: what is each model's shape across subsets?
- accuracy vs cost: which run buys its score with the least latency (or tokens)?
- error types: what share of each run's samples fails in each way (format, wrong function, wrong value…)?
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any

import pandas as pd
import plotly.graph_objects as go  # type: ignore[import-untyped]  # Plotly ships no type information

from evaluators.core.display_names import error_type_title
from evaluators.engine.store import Store
from evaluators.service.board import ORIGIN_COLUMN, BoardLayout
from evaluators.service.chart_data import run_costs, run_model, run_report

CHARTS = ("subset bars", "radar", "accuracy vs latency", "accuracy vs tokens", "error types")
MAX_MODELS = 8
# Rows that average several runs (e.g. a combined language view) carry their ids joined by this.
COMBINED = " + "
# Legends under the plot, in rows: at the side they cover most of the plot on a 390 px phone. Charts with one
# keep no x-axis title (the tick labels say it), which the legend would overlap; small side margins.
LEGEND_BELOW = {"orientation": "h", "x": 0, "xanchor": "left", "y": -0.3, "yanchor": "top", "title": {"side": "top"}}
MARGINS = {"l": 50, "r": 10, "t": 60}


def _empty(message: str) -> go.Figure:
    figure = go.Figure()
    figure.add_annotation(text=message, showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper")
    figure.update_layout(xaxis={"visible": False}, yaxis={"visible": False}, height=360)
    return figure


def _label(row: pd.Series) -> str:
    """A legend label; plotly renders some HTML in labels, and model names come from visitors."""
    suffix = "" if row["source"] == "published" else f" · {row['source']} {str(row['run_id'])[-6:]}"
    origin = row.get(ORIGIN_COLUMN)
    if isinstance(origin, str) and origin:  # a row of another results dataset
        suffix += f" · from {origin}"
    return html.escape(f"{row['model']}{suffix}")


def column_title(layout: BoardLayout, column: str) -> str:
    """What an axis or legend says for a column: its title as the benchmark declares it (the layout's labels
    hold every column's, evaluators/core/display_names.py), escaped as plotly renders some HTML."""
    return html.escape(layout.labels.get(column) or column.replace("_", " "))


def _metric_columns(frame: pd.DataFrame, layout: BoardLayout) -> list[str]:
    return [c for c in layout.columns if c in frame.columns and pd.to_numeric(frame[c], errors="coerce").notna().any()]


def subset_bars(frame: pd.DataFrame, layout: BoardLayout, title: str) -> go.Figure:
    """Grouped bars: one group per column, one bar per chosen model (values in %)."""
    rows = frame.head(MAX_MODELS)
    columns = _metric_columns(rows, layout)
    if rows.empty or not columns:
        return _empty("Pick rows with scores to compare")
    figure = go.Figure()
    for _, row in rows.iterrows():
        values = [row[c] * 100 if pd.notna(row[c]) else None for c in columns]
        figure.add_trace(go.Bar(name=_label(row), x=[column_title(layout, c) for c in columns], y=values,
                                hovertemplate="%{x}: %{y:.1f}%<extra>%{fullData.name}</extra>"))
    lower = ", ".join(column_title(layout, c) for c in sorted(layout.lower_is_better & set(columns)))
    figure.update_layout(barmode="group", title=title + (f" ({lower}: lower is better)" if lower else ""),
                         yaxis_title="score (%)", height=480, legend={**LEGEND_BELOW, "title": {"text": "model", "side": "top"}},
                         margin=MARGINS)
    return figure


def radar(frame: pd.DataFrame, layout: BoardLayout, title: str) -> go.Figure:
    rows = frame.head(MAX_MODELS)
    columns = _metric_columns(rows, layout)
    if rows.empty or len(columns) < 3:
        return _empty("A radar needs at least three scored columns")
    figure = go.Figure()
    for _, row in rows.iterrows():
        values = [row[c] * 100 if pd.notna(row[c]) else 0 for c in columns]
        titles = [column_title(layout, c) for c in columns]
        figure.add_trace(go.Scatterpolar(r=[*values, values[0]], theta=[*titles, titles[0]], name=_label(row), fill="toself",
                                         opacity=0.55))
    figure.update_layout(title=title, polar={"radialaxis": {"range": [0, 100], "ticksuffix": "%"}}, height=520,
                         legend=LEGEND_BELOW, margin=MARGINS)
    return figure


def _as_shown(run_id: str) -> str:
    return run_id


def _run_costs(store: Store, frame: pd.DataFrame, resolve: Callable[[str], str]) -> pd.DataFrame:
    """Latency and tokens of the frame's single runs, by the run id the frame shows (`resolve`: the stored run a
    shown id stands for: a public board shows an unshared run by a reference)."""
    shown = [run_id for run_id in frame["run_id"].dropna().unique() if run_id and COMBINED not in run_id]
    stored = {resolve(run_id): run_id for run_id in shown}
    costs = run_costs(store, list(stored))
    return costs.assign(run_id=costs["run_id"].map(stored)) if not costs.empty else costs


def score_column_of(row: pd.Series, layout: BoardLayout, preferred: str | None = None) -> str | None:
    """The column a row is charted by: the one the table is sorted by (or the layout's headline) when the
    row has it, else the first metric column (then detail column) with a value; None when it has none."""
    for column in dict.fromkeys(c for c in (preferred, layout.default_sort, *layout.columns, *layout.detail_columns) if c):
        if column in row.index and pd.notna(pd.to_numeric(row[column], errors="coerce")):
            return column
    return None


def accuracy_vs_cost(store: Store, frame: pd.DataFrame, layout: BoardLayout, cost: str, title: str,
                     score_column: str | None = None, resolve: Callable[[str], str] = _as_shown) -> go.Figure:
    """One point per run evaluated here: its score against mean latency or tokens per sample. The score is
    `score_column` (the table's sort) or the headline where the row has it, else its first scored column.
    `resolve`: the stored run a shown run id stands for (AppServices.board_run_id)."""
    if frame.empty:
        return _empty("No rows in this view: widen the search or the sources")
    ours = frame[frame["source"] == "evaluated"]
    if ORIGIN_COLUMN in ours.columns:  # others' runs: their latency and tokens are not in this store
        ours = ours[ours[ORIGIN_COLUMN].isna()]
    if ours.empty:
        return _empty(f"None of the {len(frame)} charted rows was evaluated here: latency and tokens are measured only "
                      "for runs started in the Evaluate tab (published rows and uploads have none)")
    costs = _run_costs(store, ours, resolve)
    points = ours.merge(costs, on="run_id")
    if points.empty:
        combined = int(ours["run_id"].astype(str).str.contains(COMBINED, regex=False).sum())
        reason = (f"{combined} of them average several runs (no one latency)" if combined
                  else "none of them has stored predictions")
        return _empty(f"The {len(ours)} evaluated rows charted have no {cost} to plot: {reason}")
    if cost == "tokens" and not (points["tokens"] > 0).any():
        return _empty(f"The endpoints of the {len(points)} evaluated runs charted reported no token counts")
    points = points.assign(column=pd.Series([score_column_of(row, layout, score_column) for _, row in points.iterrows()],
                                            index=points.index))
    points = points[points["column"].notna()]
    if points.empty:
        return _empty("The evaluated rows charted have no score in any column of this view (a run of some subsets "
                      "only may fill just the per-subset detail columns: show them to chart it)")
    points = points.assign(score=[float(row[row["column"]]) * 100 for _, row in points.iterrows()])
    columns = sorted(set(points["column"]))
    x_title = "mean latency per sample (s)" if cost == "latency" else "mean tokens per sample (prompt + completion)"
    figure = go.Figure(go.Scatter(
        x=points[cost], y=points["score"], mode="markers+text", text=points["model"].map(html.escape),
        customdata=points["column"].map(lambda c: column_title(layout, c)), textposition="top center",
        hovertemplate="%{text}<br>" + x_title + ": %{x:.2f}<br>%{customdata}: %{y:.1f}%<extra></extra>",
    ))
    y_title = f"{column_title(layout, columns[0])} (%)" if len(columns) == 1 else "score (%): each run's own column, see hover"
    figure.update_layout(title=title, xaxis_title=x_title, yaxis_title=y_title, height=420)
    return figure


NO_ERROR = "no error"


def _run_label(store: Store, shown: str, resolve: Callable[[str], str]) -> str:
    return html.escape(f"{run_model(store, resolve(shown))} · {shown[-6:]}")


def error_shares(report: dict[str, Any]) -> dict[str, float]:
    """Each error type's share (%) of a run's samples, with the rest as `no error`: they sum to 100."""
    errors = {str(kind): count for kind, count in (report.get("errors") or {}).items()
              if isinstance(count, int | float) and count > 0}
    samples = sum((subset or {}).get("n") or 0 for subset in (report.get("subsets") or {}).values())
    # A sample counted under two types must not push the bar past 100%.
    total = max(samples, sum(errors.values()))
    if not total:
        return {}
    return {NO_ERROR: 100 * (total - sum(errors.values())) / total,
            **{kind: 100 * count / total for kind, count in errors.items()}}


def error_types(store: Store, frame: pd.DataFrame, title: str, resolve: Callable[[str], str] = _as_shown) -> go.Figure:
    """100% stacked bars: the share of each run's samples that failed in each way (in the row's scoring mode),
    so runs of different sizes compare. `resolve`: the stored run a shown run id stands for."""
    if frame.empty:
        return _empty("No rows in this view: widen the search or the sources")
    runs: dict[str, str] = {}
    for _, row in frame.iterrows():
        run_id = str(row.get("run_id") or "")
        if run_id and COMBINED not in run_id and run_id not in runs:
            runs[run_id] = str(row.get("mode") or "official")
    if not runs:
        return _empty(f"None of the {len(frame)} charted rows is a single run evaluated or uploaded here: published rows"
                      " have no per-sample verdicts, and combined rows average several runs")
    shares = {}
    for run_id, mode in list(runs.items())[:MAX_MODELS]:
        found = error_shares(run_report(store, resolve(run_id), mode))
        if found:
            shares[run_id] = found
    if not shares:
        return _empty(f"The {len(runs)} runs charted have no scored samples in their reports")
    kinds = [NO_ERROR, *sorted({kind for found in shares.values() for kind in found} - {NO_ERROR})]
    labels = [_run_label(store, run_id, resolve) for run_id in shares]
    figure = go.Figure()
    for kind in kinds:
        name = kind if kind == NO_ERROR else error_type_title(kind)
        figure.add_trace(go.Bar(name=html.escape(name), x=labels, y=[found.get(kind, 0.0) for found in shares.values()],
                                hovertemplate="%{x}: %{y:.1f}%<extra>%{fullData.name}</extra>"))
    figure.update_layout(barmode="stack", title=title, yaxis={"title": "share of the run's samples (%)", "range": [0, 100],
                                                              "ticksuffix": "%"},
                         height=480, legend={**LEGEND_BELOW, "title": {"text": "error type", "side": "top"}},
                         margin=MARGINS)
    return figure
