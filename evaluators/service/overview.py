"""One view across benchmarks: a row per model with each benchmark's headline figures side by side (as
its package declares them, `Benchmark.overview`), ranked over what each model has: the models with more
benchmarks first (coverage), then by the mean of the benchmarks they have. So the page ranks models from the
published tables alone, before anyone runs anything here. Pure data (pandas), fractions; the app only shows it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from evaluators.core.declarations import Overview
from evaluators.core.registry import Benchmark, all_benchmarks, get_benchmark
from evaluators.service.board import APART_COLUMN, ORIGIN_COLUMN, RANK_COLUMN, model_facts, model_key

MODEL_COLUMN = "model"
AGGREGATE_COLUMN = "aggregate"
# The benchmarks a model has no ranked figure in (empty on ranked rows).
LACKS_COLUMN = "lacks"
SOURCE_SUFFIX = " · source"
# How many of the benchmarks a model has a figure in, e.g. "3 of 4" (COVERED_COLUMN: the number alone).
COVERAGE_COLUMN = "coverage"
COVERED_COLUMN = "benchmarks"
AGGREGATE_RULE = ("Mean = the plain mean of one column per benchmark ({columns}), as shares, over the benchmarks a "
                  "model has a figure in; each benchmark weighs the same whatever the number of its columns. Models "
                  "are ranked by coverage first (a model with more benchmarks comes before one with fewer: a mean over "
                  "fewer benchmarks is not comparable with it), then by that mean; equal coverage and mean share a "
                  "rank. Compare means only between models of the same coverage, and read which benchmarks they "
                  "cover. Each figure is the model's best ranked row of the benchmark's view (a published row or a "
                  "comparable evaluated run; never a partial run or an upload).")


@dataclass(frozen=True)
class Headline:
    """One benchmark's part of the overview, with the names its columns take there."""

    benchmark: Benchmark
    overview: Overview

    def column(self, metric: str) -> str:
        """`<title> · <metric's display name>`, e.g. "X-Bench · Accuracy"."""
        return f"{self.benchmark.title} · {self.benchmark.metric(metric).shown_as}"

    @property
    def columns(self) -> list[str]:
        return [self.column(metric) for metric in self.overview.columns]

    @property
    def aggregate_column(self) -> str:
        return self.column(self.overview.aggregate)

    @property
    def source_column(self) -> str:
        return self.benchmark.title + SOURCE_SUFFIX


def headlines(benchmarks: Sequence[Benchmark] | None = None) -> list[Headline]:
    """The benchmarks that declare an overview (by default every registered one), in registry order."""
    chosen = all_benchmarks() if benchmarks is None else benchmarks
    return [Headline(b, b.overview) for b in chosen if b.overview is not None]


def aggregate_rule(benchmarks: Sequence[Benchmark] | None = None) -> str:
    """The aggregate as the page and the API state it, naming each benchmark's column and view."""
    parts = [f"{h.aggregate_column} ({h.benchmark.board_layout().view_label.lower()}: "
             f"{h.benchmark.subset_title(h.overview.view)})" for h in headlines(benchmarks)]
    return AGGREGATE_RULE.format(columns="; ".join(parts) or "none declared")


def _best_rows(frame: pd.DataFrame, headline: Headline) -> dict[str, pd.Series]:
    """model key -> that model's best ranked row in the headline's view (by the aggregate column; on a tie
    the row that comes first, published rows before runs)."""
    overview = headline.overview
    apart = frame[APART_COLUMN].fillna("").astype(str) if APART_COLUMN in frame.columns else ""
    rows = frame[(frame["view"] == overview.view) & (apart == "")]
    if "mode" in rows.columns:  # published figures are official ones; strict rows never mix in
        rows = rows[rows["mode"].fillna("official") == "official"]
    if overview.aggregate in rows.columns:
        values = pd.to_numeric(rows[overview.aggregate], errors="coerce")
        rows = rows.assign(_value=values).sort_values("_value", ascending=False, na_position="last", kind="stable")
    best: dict[str, pd.Series] = {}
    for _, row in rows.iterrows():
        best.setdefault(model_key(str(row["model"])), row)
    return best


def _number(value: Any) -> float | None:
    number = pd.to_numeric(pd.Series([value]), errors="coerce").iloc[0]
    return None if pd.isna(number) else float(number)


def _source(row: pd.Series, benchmark: Benchmark, shown_name: str) -> str:
    """Where a figure comes from: published, or the evaluated run (and the results dataset it was read from),
    with the row's labels (e.g. its input modality) and the model's name in that table when it differs from
    the one shown."""
    text = str(row.get("source") or "")
    run_id = row.get("run_id")
    if isinstance(run_id, str) and run_id:
        text += f" run {run_id}"
    origin = row.get(ORIGIN_COLUMN)
    if isinstance(origin, str) and origin:
        text += f" from {origin}"
    labels = [f"{column} {row[column]}" for column in benchmark.board_layout().text_columns
              if isinstance(row.get(column), str) and row.get(column)]
    if str(row["model"]) != shown_name:
        labels.append(f"as {row['model']}")
    return text + (f" ({', '.join(labels)})" if labels else "")


def overview_columns(benchmarks: Sequence[Benchmark] | None = None) -> list[str]:
    """The overview's columns: rank, model, coverage, the mean, every headline figure, what a model lacks, the
    number of benchmarks it has, the sources."""
    parts = headlines(benchmarks)
    return [RANK_COLUMN, MODEL_COLUMN, COVERAGE_COLUMN, AGGREGATE_COLUMN, *[c for h in parts for c in h.columns],
            LACKS_COLUMN, COVERED_COLUMN, *[h.source_column for h in parts]]


def overview_rows(board_frames: Mapping[str, pd.DataFrame], benchmarks: Sequence[Benchmark] | None = None) -> pd.DataFrame:
    """One row per model (matched across tables by evaluators.service.board.model_key) from each benchmark's board
    frame (board_rows, official mode), keyed by benchmark name: its headline figures (fractions) and their
    sources; `coverage` ("3 of 4") and `benchmarks` (3): how many benchmarks' aggregate column it has; `aggregate`:
    the mean of those (AGGREGATE_RULE); the benchmarks it lacks. Every model with a figure is ranked: more coverage
    first, then the higher mean; equal coverage and mean share a rank.
    `benchmarks`: the declarations of the frames' benchmarks (by default looked up by name)."""
    chosen = list(benchmarks) if benchmarks is not None else [get_benchmark(name) for name in board_frames]
    parts = headlines([b for b in chosen if b.name in board_frames])
    best = {h.benchmark.name: _best_rows(board_frames[h.benchmark.name], h) for h in parts}
    keys = list(dict.fromkeys(key for h in parts for key in best[h.benchmark.name]))
    records = []
    for key in keys:
        first = next(best[h.benchmark.name][key] for h in parts if key in best[h.benchmark.name])
        facts = model_facts(str(first["model"]))
        shown = facts.name if facts is not None else str(first["model"])
        record: dict[str, Any] = {MODEL_COLUMN: shown}
        lacking, aggregates = [], []
        for h in parts:
            row = best[h.benchmark.name].get(key)
            for metric, column in zip(h.overview.columns, h.columns):
                record[column] = None if row is None else _number(row.get(metric))
            record[h.source_column] = "" if row is None else _source(row, h.benchmark, shown)
            value = record[h.aggregate_column]
            if value is None:
                lacking.append(h.benchmark.title)
            else:
                aggregates.append(value)
        record[AGGREGATE_COLUMN] = sum(aggregates) / len(aggregates) if aggregates else None
        record[COVERED_COLUMN] = len(aggregates)
        record[COVERAGE_COLUMN] = f"{len(aggregates)} of {len(parts)}"
        record[LACKS_COLUMN] = ", ".join(lacking)
        records.append(record)
    frame = pd.DataFrame(records, columns=overview_columns([h.benchmark for h in parts])).drop(columns=RANK_COLUMN)
    frame[COVERED_COLUMN] = frame[COVERED_COLUMN].astype(int)
    frame = frame.assign(_name=frame[MODEL_COLUMN].str.lower())
    frame = frame.sort_values([COVERED_COLUMN, AGGREGATE_COLUMN, "_name"], ascending=[False, False, True],
                              na_position="last", kind="stable").drop(columns="_name").reset_index(drop=True)
    frame.insert(0, RANK_COLUMN, pd.array(coverage_ranks(list(frame[COVERED_COLUMN]), list(frame[AGGREGATE_COLUMN])),
                                          dtype="Int64"))
    return frame


def coverage_ranks(covered: list[int], means: list[float | None]) -> list[int | None]:
    """Ranks of rows sorted by coverage then mean (best first): a row takes its 1-based position unless it has the
    same coverage and mean as the row above, when it shares that row's rank; no mean, no rank."""
    result: list[int | None] = []
    for position, (count, mean) in enumerate(zip(covered, means), 1):
        if mean is None or pd.isna(mean):
            result.append(None)
        elif result and result[-1] is not None and (count, mean) == (covered[position - 2], means[position - 2]):
            result.append(result[-1])
        else:
            result.append(position)
    return result


def at_least(frame: pd.DataFrame, minimum: int) -> pd.DataFrame:
    """The overview's models with at least `minimum` benchmarks (a shorter list, the same ranks: models with more
    coverage come first, so only the tail is cut)."""
    return frame[frame[COVERED_COLUMN] >= minimum].reset_index(drop=True)
