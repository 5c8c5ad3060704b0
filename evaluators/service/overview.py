"""One view across benchmarks: a row per model with each benchmark's headline figures side by side (as
its package declares them, `Benchmark.overview`), ranked head to head. Models differ in which benchmarks they
have, so no figure is averaged across benchmarks: each model's mean win rate (as HELM ranks models) is, over the
benchmarks it has, the share of the other models with that benchmark that it beats on the benchmark's headline,
and no model is ever placed above one that beats it on every figure they share. So the page ranks models from
the published tables alone, before anyone runs anything here. Pure data (pandas), fractions; the app only shows it."""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from evaluators.core.declarations import Overview
from evaluators.core.registry import Benchmark, all_benchmarks, get_benchmark
from evaluators.service.board import APART_COLUMN, ORIGIN_COLUMN, RANK_COLUMN, model_facts, model_key

MODEL_COLUMN = "model"
# The mean win rate (a share): the column models are ranked by.
AGGREGATE_COLUMN = "win_rate"
# The benchmarks a model has no ranked figure in (empty on ranked rows).
LACKS_COLUMN = "lacks"
SOURCE_SUFFIX = " · source"
# How many of the benchmarks a model has a figure in, e.g. "3 of 4" (COVERED_COLUMN: the number alone).
COVERAGE_COLUMN = "coverage"
COVERED_COLUMN = "benchmarks"
AGGREGATE_RULE = ("Models are ranked by mean win rate, as HELM ranks models: for each benchmark a model has, the share "
                  "of the other models with that benchmark whose headline figure it beats (a tie counts half), averaged "
                  "over its benchmarks ({columns}). Figures of different benchmarks are never averaged together, and "
                  "a model with fewer benchmarks is not pushed down for what it lacks. One more rule comes first: no "
                  "model is placed above a model that is at least as good on every headline figure the two share and "
                  "better on one of them (models that beat each other in a circle, each on a benchmark the next lacks, "
                  "keep it toward every model outside their circle). Equal win rates share a rank. A win rate over few benchmarks or few rivals "
                  "says less: read the coverage beside it. Each figure is the model's best ranked row of the "
                  "benchmark's view (a published row or a comparable evaluated run; never a partial run or an upload).")


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
    """The overview's columns: rank, model, coverage, the mean win rate, every headline figure, what a model
    lacks, the number of benchmarks it has, the sources."""
    parts = headlines(benchmarks)
    return [RANK_COLUMN, MODEL_COLUMN, COVERAGE_COLUMN, AGGREGATE_COLUMN, *[c for h in parts for c in h.columns],
            LACKS_COLUMN, COVERED_COLUMN, *[h.source_column for h in parts]]


def overview_rows(board_frames: Mapping[str, pd.DataFrame], benchmarks: Sequence[Benchmark] | None = None) -> pd.DataFrame:
    """One row per model (matched across tables by evaluators.service.board.model_key) from each benchmark's board
    frame (board_rows, official mode), keyed by benchmark name: its headline figures (fractions) and their
    sources; `coverage` ("3 of 4") and `benchmarks` (3): how many benchmarks' headline it has; `win_rate`: its
    mean win rate (AGGREGATE_RULE); the benchmarks it lacks. Rows come in rank order (head_to_head_order).
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
        lacking = []
        for h in parts:
            row = best[h.benchmark.name].get(key)
            for metric, column in zip(h.overview.columns, h.columns):
                record[column] = None if row is None else _number(row.get(metric))
            record[h.source_column] = "" if row is None else _source(row, h.benchmark, shown)
            if record[h.aggregate_column] is None:
                lacking.append(h.benchmark.title)
        record[COVERED_COLUMN] = len(parts) - len(lacking)
        record[COVERAGE_COLUMN] = f"{len(parts) - len(lacking)} of {len(parts)}"
        record[LACKS_COLUMN] = ", ".join(lacking)
        records.append(record)
    frame = pd.DataFrame(records, columns=overview_columns([h.benchmark for h in parts])).drop(columns=RANK_COLUMN)
    frame[COVERED_COLUMN] = frame[COVERED_COLUMN].astype(int)
    frame[AGGREGATE_COLUMN] = mean_win_rates(frame, parts)
    order, ranks = head_to_head_order(frame, parts)
    frame = frame.iloc[order].reset_index(drop=True)
    frame.insert(0, RANK_COLUMN, pd.Series(ranks, index=frame.index, dtype="Int64"))
    return frame


def shown_percent(values: Any) -> Any:
    """Shares as the page and the API show them: percent with one decimal."""
    return np.round(np.asarray(values, dtype=float) * 100, 1)


def _better_signs(frame: pd.DataFrame, columns: Sequence[tuple[str, bool]]) -> npt.NDArray[np.float64]:
    """sign[k, i, j] = +1 where model i is better than model j on column k, -1 worse, 0 equal, compared as shown
    (shown_percent: what a reader can check); NaN where either lacks it and between a model and itself.
    `columns`: (column, higher is better)."""
    values = np.array([shown_percent(pd.to_numeric(frame[column], errors="coerce").to_numpy(dtype=float, na_value=np.nan))
                       for column, _ in columns]).reshape(len(columns), len(frame))
    directions = np.array([1.0 if higher else -1.0 for _, higher in columns]).reshape(-1, 1, 1)
    signs: npt.NDArray[np.float64] = np.sign(values[:, :, None] - values[:, None, :]) * directions
    signs[:, np.arange(len(frame)), np.arange(len(frame))] = np.nan
    return signs


def _headline_columns(parts: Sequence[Headline], aggregate_only: bool) -> list[tuple[str, bool]]:
    chosen = [(h, metric) for h in parts for metric in (h.overview.columns if not aggregate_only else (h.overview.aggregate,))]
    return [(h.column(metric), h.benchmark.metric(metric).higher_is_better) for h, metric in chosen]


def mean_win_rates(frame: pd.DataFrame, parts: Sequence[Headline]) -> list[float | None]:
    """Each model's mean win rate: per benchmark it has (and at least one other model has), the share of the other
    models with that benchmark whose headline figure (the declared aggregate column) it beats, a tie counting half;
    the mean over those benchmarks. None for a model with no rival on any benchmark."""
    if frame.empty:
        return []
    signs = _better_signs(frame, _headline_columns(parts, aggregate_only=True))
    known = ~np.isnan(signs)
    rivals = known.sum(axis=2)  # (benchmark, model): the other models with both figures
    wins = np.where(known, (np.nan_to_num(signs) + 1) / 2, 0.0).sum(axis=2)
    with np.errstate(invalid="ignore", divide="ignore"):
        rates = np.where(rivals > 0, wins / np.maximum(rivals, 1), np.nan)
    counted = (~np.isnan(rates)).sum(axis=0)
    means = np.where(counted > 0, np.nansum(rates, axis=0) / np.maximum(counted, 1), np.nan)
    return [None if np.isnan(mean) else float(mean) for mean in means]


def dominance(frame: pd.DataFrame, parts: Sequence[Headline]) -> npt.NDArray[np.bool_]:
    """beats[i, j]: model i is at least as good as model j on every headline figure the two share (every declared
    column of every benchmark), better on at least one, and they share at least one."""
    if frame.empty:
        return np.zeros((0, 0), dtype=bool)
    signs = _better_signs(frame, _headline_columns(parts, aggregate_only=False))
    shared = ~np.isnan(signs)
    # np.all and np.any along an axis: the (model, model) arrays (the methods are typed as maybe one bool)
    never_worse = np.all(np.where(shared, signs >= 0, True), axis=0)
    once_better = np.any(np.where(shared, signs > 0, False), axis=0)
    beats: npt.NDArray[np.bool_] = never_worse & once_better & np.any(shared, axis=0)
    return beats


def circles(beats: npt.NDArray[np.bool_]) -> npt.NDArray[np.int_]:
    """A label per model; two models share one when each beats the other through a chain of models (a circle of
    head-to-heads: A beats B on one benchmark, B beats C on another, C beats A), which no order can keep."""
    size = len(beats)
    reach = beats.astype(np.int64) | np.eye(size, dtype=np.int64)
    while True:  # reachability by squaring: at most log2(size) rounds
        wider = ((reach @ reach) > 0).astype(np.int64)
        if (wider == reach).all():
            break
        reach = wider
    mutual = (reach > 0) & (reach > 0).T
    labels: npt.NDArray[np.int_] = mutual.argmax(axis=1) if size else np.zeros(0, dtype=np.int_)
    return labels


def dominance_violations(frame: pd.DataFrame, parts: Sequence[Headline] | None = None) -> list[tuple[str, str]]:
    """(placed above, its better) for every pair of an overview's rows (in their order) where a model stands above
    one that beats it on every figure they share (the rule of AGGREGATE_RULE; empty when the order keeps it), but for
    pairs of one circle (`circles`), where some such pair is unavoidable."""
    parts = headlines() if parts is None else parts
    beats = dominance(frame, parts)
    circle = circles(beats)
    names = list(frame[MODEL_COLUMN])
    return [(names[above], names[below]) for above in range(len(names)) for below in range(above + 1, len(names))
            if beats[below, above] and circle[above] != circle[below]]


def head_to_head_order(frame: pd.DataFrame, parts: Sequence[Headline]) -> tuple[list[int], list[int | None]]:
    """(row positions in rank order, their ranks). By mean win rate (then name), except that a model is never
    placed before one that beats it on every figure they share: the order is the win rates' order made to respect
    that (a topological order taking the best win rate free to go next). Should three models beat each other in a
    circle, the best win rate among those left that only models of its own circle still beat goes next (so no circle
    puts a model above one outside it that beats it). Equal win rates share a rank unless one of the two beats
    the other; a model without a win rate has no rank and comes last."""
    rates = [(-1.0 if rate is None or pd.isna(rate) else float(rate)) for rate in frame[AGGREGATE_COLUMN]]
    names = [str(name).lower() for name in frame[MODEL_COLUMN]]
    beats = dominance(frame, parts)
    waiting = beats.sum(axis=0).astype(int) if len(frame) else np.zeros(0, dtype=int)
    placed = np.zeros(len(frame), dtype=bool)
    free = [(-rates[i], names[i], i) for i in range(len(frame)) if waiting[i] == 0]
    heapq.heapify(free)
    order: list[int] = []
    circle = circles(beats)
    while len(order) < len(frame):
        if not free:  # a circle: the best of those left that only models of its own circle still beat goes next
            left = [i for i in range(len(frame)) if not placed[i]]
            open_to = [i for i in left if all(circle[j] == circle[i] for j in left if beats[j, i])] or left
            chosen_left = min(open_to, key=lambda i: (-rates[i], names[i]))
            free.append((-rates[chosen_left], names[chosen_left], chosen_left))
        _, _, chosen = heapq.heappop(free)
        if placed[chosen]:
            continue
        placed[chosen] = True
        order.append(chosen)
        for beaten in np.flatnonzero(beats[chosen] & ~placed):
            waiting[beaten] -= 1
            if waiting[beaten] == 0:
                heapq.heappush(free, (-rates[beaten], names[beaten], int(beaten)))
    ranks: list[int | None] = []
    for position, row in enumerate(order, 1):
        if rates[row] < 0:
            ranks.append(None)
        elif ranks and ranks[-1] is not None and rates[order[position - 2]] == rates[row] \
                and not beats[order[position - 2], row]:
            ranks.append(ranks[-1])
        else:
            ranks.append(position)
    return order, ranks


def at_least(frame: pd.DataFrame, minimum: int) -> pd.DataFrame:
    """The overview's models with at least `minimum` benchmarks (a shorter list; each keeps its rank among all)."""
    return frame[frame[COVERED_COLUMN] >= minimum].reset_index(drop=True)
