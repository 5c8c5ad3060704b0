"""Plotly charts, each answering one question a user has:
- subset bars: where is a model strong or weak, next to the others I picked?
- radar: what is each model's shape across subsets?
- accuracy vs cost: which run buys its score with the least latency (or tokens)?
- error types: how does each run fail (format, wrong function, wrong value, request errors)?
"""

from __future__ import annotations

import html

import pandas as pd
import plotly.graph_objects as go

from evaluators.board import BoardLayout
from evaluators.engine.store import Store

CHARTS = ("subset bars", "radar", "accuracy vs latency", "accuracy vs tokens", "error types")
MAX_MODELS = 8


def _empty(message: str) -> go.Figure:
    figure = go.Figure()
    figure.add_annotation(text=message, showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper")
    figure.update_layout(xaxis={"visible": False}, yaxis={"visible": False}, height=360)
    return figure


def _label(row: pd.Series) -> str:
    """A legend label; plotly renders some HTML in labels, and model names come from visitors."""
    suffix = "" if row["source"] == "published" else f" · {row['source']} {str(row['run_id'])[-6:]}"
    return html.escape(f"{row['model']}{suffix}")


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
        figure.add_trace(go.Bar(name=_label(row), x=columns, y=values,
                                hovertemplate="%{x}: %{y:.1f}%<extra>%{fullData.name}</extra>"))
    lower = ", ".join(sorted(layout.lower_is_better & set(columns)))
    figure.update_layout(barmode="group", title=title + (f" ({lower}: lower is better)" if lower else ""),
                         yaxis_title="score (%)", xaxis_title="column", height=420, legend_title="model")
    return figure


def radar(frame: pd.DataFrame, layout: BoardLayout, title: str) -> go.Figure:
    rows = frame.head(MAX_MODELS)
    columns = _metric_columns(rows, layout)
    if rows.empty or len(columns) < 3:
        return _empty("A radar needs at least three scored columns")
    figure = go.Figure()
    for _, row in rows.iterrows():
        values = [row[c] * 100 if pd.notna(row[c]) else 0 for c in columns]
        figure.add_trace(go.Scatterpolar(r=[*values, values[0]], theta=[*columns, columns[0]], name=_label(row), fill="toself",
                                         opacity=0.55))
    figure.update_layout(title=title, polar={"radialaxis": {"range": [0, 100], "ticksuffix": "%"}}, height=460)
    return figure


def _run_costs(store: Store, frame: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for run_id in frame["run_id"].dropna().unique():
        if not run_id or " + " in run_id:
            continue
        totals = store.run_totals(run_id)
        if not totals["done"]:
            continue
        rows.append({"run_id": run_id, "latency": totals["latency"] / totals["done"],
                     "tokens": (totals["prompt_tokens"] + totals["completion_tokens"]) / totals["done"]})
    return pd.DataFrame(rows, columns=["run_id", "latency", "tokens"])


def accuracy_vs_cost(store: Store, frame: pd.DataFrame, layout: BoardLayout, cost: str, title: str) -> go.Figure:
    """One point per run evaluated here: the headline column against mean latency or tokens per sample."""
    score_column = layout.default_sort
    ours = frame[frame["source"] == "evaluated"]
    costs = _run_costs(store, ours)
    points = ours.merge(costs, on="run_id")
    points = points[pd.to_numeric(points[score_column], errors="coerce").notna()]
    if points.empty:
        return _empty("No runs evaluated here yet: start one in the Evaluate tab")
    x_title = "mean latency per sample (s)" if cost == "latency" else "mean tokens per sample (prompt + completion)"
    figure = go.Figure(go.Scatter(
        x=points[cost], y=points[score_column] * 100, mode="markers+text", text=points["model"].map(html.escape),
        textposition="top center",
        hovertemplate="%{text}<br>" + x_title + ": %{x:.2f}<br>" + score_column + ": %{y:.1f}%<extra></extra>",
    ))
    figure.update_layout(title=title, xaxis_title=x_title, yaxis_title=f"{score_column} (%)", height=420)
    return figure


def error_types(store: Store, frame: pd.DataFrame, title: str) -> go.Figure:
    """Stacked bars: how many samples of each run failed in each way (official mode)."""
    runs = [r for r in frame["run_id"].dropna().unique() if r and " + " not in r][:MAX_MODELS]
    counts: dict[str, dict[str, int]] = {}
    labels: dict[str, str] = {}
    for run_id in runs:
        report = store.load_report(run_id) or {}
        counts[run_id] = dict(report.get("errors") or {})
        run = store.get_run(run_id)
        labels[run_id] = html.escape(f"{run.model} · {run_id[-6:]}")
    kinds = sorted({kind for errors in counts.values() for kind in errors})
    if not kinds:
        return _empty("No failed samples among the chosen runs (or no runs evaluated here)")
    figure = go.Figure()
    for kind in kinds:
        figure.add_trace(go.Bar(name=kind, x=[labels[r] for r in runs], y=[counts[r].get(kind, 0) for r in runs]))
    figure.update_layout(barmode="stack", title=title, yaxis_title="samples", xaxis_title="run", height=420,
                         legend_title="error type")
    return figure
