"""What a run evaluated here cost and how fast it was answered: $ per 1,000 items (the tokens the endpoint
reported x the model's list price in leaderboard_data/prices.json) and the latency per item (mean and p95).
Computed from each prediction's stored latency and token counts (Store.sample_usage), once per board frame
(board_table.board_rows adds them, so the frame's cache keeps them). Published and uploaded rows have none:
their tokens and latencies are not known."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from evaluators.core.board_layout import TOKEN_USAGE, TokenPart
from evaluators.core.errors import DataError
from evaluators.core.leaderboard import LEADERBOARD_DIR, normalised_model_name
from evaluators.engine.store import Store

PRICES_FILE = "prices.json"
COST_COLUMN = "usd_per_1k_items"
LATENCY_MEAN_COLUMN = "latency_mean_s"
LATENCY_P95_COLUMN = "latency_p95_s"
# Why a row's cost (or latency) is blank, or the price it was computed with: text to read beside the figures.
COST_NOTE_COLUMN = "cost_note"
COST_COLUMNS = (COST_COLUMN, LATENCY_MEAN_COLUMN, LATENCY_P95_COLUMN, COST_NOTE_COLUMN)
ITEMS_PER_FIGURE = 1000
TOKENS_PER_PRICE = 1_000_000
# How the page states the figures (the board's legend).
COST_LEGEND = (
    "$/1k items = the USD the run's tokens would cost per 1,000 items at the model's list price "
    "(leaderboard_data/prices.json: each price with its vendor page and the day it was read; standard tier, no "
    "cache or batch discount), over the items whose answer reported its token usage. Latency = seconds per item "
    "(all of an item's model calls), mean and 95th percentile (nearest rank), over the items answered by a request "
    "this run sent (answers from the cache are left out). Blank on published and uploaded rows (no tokens or "
    "timings are known), for models without a listed price, and for endpoints that report no token usage.")
_ENTRY_FIELDS = {"model", "aliases", "input_usd_per_1m", "output_usd_per_1m", "source", "read_from", "date", "notes"}
_ISO_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


@dataclass(frozen=True)
class Price:
    """One model's list price in USD per 1M tokens (None: not known), with where and when it was read."""

    model: str
    input_usd_per_1m: float | None
    output_usd_per_1m: float | None
    source: str
    date: str
    aliases: tuple[str, ...] = ()

    def describe(self) -> str:
        """E.g. "gpt-4o-mini at $0.15 in / $0.60 out per 1M tokens (https://…, 2026-11-27)"."""
        return (f"{self.model} at ${self.input_usd_per_1m:g} in / ${self.output_usd_per_1m:g} out per 1M tokens "
                f"({self.source}, {self.date})")


def load_prices(folder: Path = LEADERBOARD_DIR) -> tuple[Price, ...]:
    """The price table of `folder`, checked: every entry has a model, prices that are numbers >= 0 (or null),
    an https:// source and an ISO date; no spelling names two entries. Cached per folder."""
    return _load_prices(Path(folder).resolve())


@lru_cache(maxsize=8)
def _load_prices(folder: Path) -> tuple[Price, ...]:
    path = folder / PRICES_FILE
    if not path.is_file():
        raise DataError("no price table", path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DataError(f"invalid JSON: {exc.msg}", path, exc.lineno) from None
    entries = data.get("models") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise DataError('expected {"models": [...]}', path)
    prices = tuple(_price(entry, index, path) for index, entry in enumerate(entries))
    owner: dict[str, str] = {}
    for price in prices:
        for spelling in (price.model, *price.aliases):
            key = normalised_model_name(spelling)
            if owner.setdefault(key, price.model) != price.model:
                raise DataError(f"entry {price.model!r}: spelling {spelling!r} is also used by entry {owner[key]!r}", path)
    return prices


def _price(entry: Any, index: int, path: Path) -> Price:
    label = f"entry {index}" + (f" ({entry['model']!r})" if isinstance(entry, dict) and isinstance(entry.get("model"), str) else "")
    if not isinstance(entry, dict):
        raise DataError(f"{label}: expected an object", path)
    unknown = sorted(set(entry) - _ENTRY_FIELDS)
    if unknown:
        raise DataError(f"{label}: unknown field {unknown[0]!r} (fields: {', '.join(sorted(_ENTRY_FIELDS))})", path)
    if not isinstance(entry.get("model"), str) or not entry["model"].strip():
        raise DataError(f"{label}: 'model' must be a non-empty name", path)
    aliases = entry.get("aliases", [])
    if not isinstance(aliases, list) or not all(isinstance(a, str) and a.strip() for a in aliases):
        raise DataError(f"{label}: 'aliases' must be a list of non-empty names", path)
    for name in ("input_usd_per_1m", "output_usd_per_1m"):
        value = entry.get(name, "missing")
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)
                                  or not math.isfinite(value) or value < 0):
            raise DataError(f"{label}: {name!r} must be a number >= 0 (USD per 1M tokens) or null, got {json.dumps(value)}",
                            path)
    for name in ("source", "read_from"):
        if name in entry and not (isinstance(entry[name], str) and entry[name].startswith("https://")):
            raise DataError(f"{label}: {name!r} must be an https:// address, got {json.dumps(entry.get(name))}", path)
    if "source" not in entry:
        raise DataError(f"{label}: 'source' (the vendor's pricing page) is missing", path)
    if not (isinstance(entry.get("date"), str) and _ISO_DAY.fullmatch(entry["date"])):
        raise DataError(f"{label}: 'date' (the day the price was read) must be YYYY-MM-DD, got {json.dumps(entry.get('date'))}",
                        path)
    return Price(model=entry["model"], input_usd_per_1m=_number(entry["input_usd_per_1m"]),
                 output_usd_per_1m=_number(entry["output_usd_per_1m"]), source=entry["source"], date=entry["date"],
                 aliases=tuple(aliases))


def _number(value: Any) -> float | None:
    return None if value is None else float(value)


@lru_cache(maxsize=8)
def _prices_by_spelling(folder: Path) -> dict[str, Price]:
    return {normalised_model_name(spelling): price for price in _load_prices(folder)
            for spelling in (price.model, *price.aliases)}


def price_of(model: str, folder: Path = LEADERBOARD_DIR) -> Price | None:
    """The price entry of a model name (its name or an alias; case, spaces and a known provider prefix aside)."""
    return _prices_by_spelling(Path(folder).resolve()).get(normalised_model_name(model))


@dataclass
class UsageFigures:
    """A run's predictions as cost and latency are computed from them."""

    answered: int = 0  # predictions that are not request errors
    with_usage: int = 0  # of those, the ones whose answer reported both token counts
    prompt_tokens: int = 0  # over `with_usage`
    completion_tokens: int = 0
    latencies: list[float] = field(default_factory=list)  # answered by a request this run sent (not cached: 0 s)

    def add(self, samples: Iterable[tuple[float | None, int | None, int | None, bool]]) -> UsageFigures:
        for latency, prompt_tokens, completion_tokens, failed in samples:
            if failed:
                continue
            self.answered += 1
            if prompt_tokens is not None and completion_tokens is not None:
                self.with_usage += 1
                self.prompt_tokens += prompt_tokens
                self.completion_tokens += completion_tokens
            if latency is not None and latency > 0:
                self.latencies.append(float(latency))
        return self

    @property
    def reported_tokens(self) -> bool:
        """Some answer reported a token count above zero (an endpoint that reports none sends zeros or nothing)."""
        return self.with_usage > 0 and self.prompt_tokens + self.completion_tokens > 0


def percentile(values: list[float], share: float) -> float | None:
    """The nearest-rank percentile (numpy's "inverted_cdf"): the smallest value with at least `share` of the values
    at or below it. [1..20] at 0.95 -> 19; None for no values."""
    if not values:
        return None
    import numpy  # with pandas, already loaded wherever the board's rows are built

    return float(numpy.percentile(values, share * 100, method="inverted_cdf"))


def cost_values(model: str, figures: UsageFigures, folder: Path = LEADERBOARD_DIR) -> dict[str, Any]:
    """The COST_COLUMNS of an evaluated row: USD per 1,000 items, latency mean and p95 (seconds, None where not
    known) and a note saying the price used or why a figure is blank."""
    values: dict[str, Any] = dict.fromkeys(COST_COLUMNS)
    notes = []
    if figures.latencies:
        values[LATENCY_MEAN_COLUMN] = round(sum(figures.latencies) / len(figures.latencies), 4)
        values[LATENCY_P95_COLUMN] = round(percentile(figures.latencies, 0.95) or 0.0, 4)
    elif figures.answered:
        notes.append("no latency: every answer came from the cache")
    price = price_of(model, folder)
    if price is None or price.input_usd_per_1m is None or price.output_usd_per_1m is None:
        notes.append("no cost: no listed price for this model")
    elif not figures.reported_tokens:
        notes.append("no cost: the endpoint reported no token usage")
    else:
        usd = (figures.prompt_tokens * price.input_usd_per_1m + figures.completion_tokens * price.output_usd_per_1m)
        values[COST_COLUMN] = round(usd / TOKENS_PER_PRICE / figures.with_usage * ITEMS_PER_FIGURE, 6)
        notes.append(f"{price.describe()}; {figures.prompt_tokens:,} prompt + {figures.completion_tokens:,} completion "
                     f"tokens over {figures.with_usage:,} items")
    values[COST_NOTE_COLUMN] = "; ".join(notes) or None
    return values


def add_run_costs(rows: list[dict[str, Any]], store: Store | None, run_ids_of: Callable[[dict[str, Any]], list[str]],
                  folder: Path = LEADERBOARD_DIR) -> None:
    """Fill COST_COLUMNS in place: on evaluated rows of this store (a row averaging runs, `a + b`, over all their
    items), from one query of every such run's predictions; None on every other row (a row read from another
    results dataset keeps what it was published with)."""
    wanted: dict[int, list[str]] = {}
    for index, row in enumerate(rows):
        if row.get("source") == "evaluated" and row.get("origin") is None and store is not None:
            wanted[index] = run_ids_of(row)
        elif row.get("origin") is None:
            row.update(dict.fromkeys(COST_COLUMNS))
    if not wanted or store is None:
        return
    samples: Mapping[str, list[tuple[float | None, int | None, int | None, bool]]] = store.sample_usage(
        sorted({run_id for ids in wanted.values() for run_id in ids}))
    figures = {run_id: UsageFigures().add(found) for run_id, found in samples.items()}
    for index, ids in wanted.items():
        combined = UsageFigures()
        for run_id in ids:
            part = figures.get(run_id) or UsageFigures()
            combined.answered += part.answered
            combined.with_usage += part.with_usage
            combined.prompt_tokens += part.prompt_tokens
            combined.completion_tokens += part.completion_tokens
            combined.latencies += part.latencies
        rows[index].update(cost_values(str(rows[index]["model"]), combined, folder))


def usd_per_unit(parts: Iterable[TokenPart], price: Price | None) -> float | None:
    """The mean over the parts of each part's USD per unit ((prompt x input price + completion x output price) /
    units); None without a full price, without parts, or when a part has no unit or no token (the endpoint reported
    no usage there: a blank, not a free model)."""
    parts = list(parts)
    if price is None or price.input_usd_per_1m is None or price.output_usd_per_1m is None or not parts:
        return None
    each = []
    for prompt_tokens, completion_tokens, units in parts:
        if units <= 0 or prompt_tokens + completion_tokens <= 0:
            return None
        each.append((prompt_tokens * price.input_usd_per_1m + completion_tokens * price.output_usd_per_1m)
                    / TOKENS_PER_PRICE / units)
    return float(f"{sum(each) / len(each):.6g}")  # six significant digits: a trajectory can cost $0.0001


def add_priced_column(rows: list[dict[str, Any]], column: str | None, folder: Path = LEADERBOARD_DIR) -> None:
    """Fill a benchmark's priced column (BoardLayout.priced_column) in place on this store's evaluated rows, from the
    TOKEN_USAGE their view carries and the model's list price; the TOKEN_USAGE key is taken off every row. Other rows
    keep what they have (a published row's own figure; an upload's tokens were not counted here: none)."""
    for row in rows:
        parts = row.pop(TOKEN_USAGE, None)
        if column is None or row.get("source") != "evaluated" or row.get("origin") is not None:
            continue
        row[column] = usd_per_unit(_token_parts(parts), price_of(str(row["model"]), folder))


def _token_parts(parts: Any) -> list[TokenPart]:
    """A view's TOKEN_USAGE as whole numbers (anything else: no parts, so no figure)."""
    if not isinstance(parts, list | tuple):
        return []
    found = []
    for part in parts:
        if not (isinstance(part, list | tuple) and len(part) == 3
                and all(isinstance(n, int | float) and not isinstance(n, bool) and math.isfinite(n) for n in part)):
            return []
        found.append((int(part[0]), int(part[1]), int(part[2])))
    return found


def blank_cost_reasons(notes: Iterable[Any]) -> list[str]:
    """The distinct reasons a board's evaluated rows have a blank cost or latency (for the legend), in order."""
    reasons: dict[str, None] = {}
    for note in notes:
        if isinstance(note, str):
            for part in note.split("; "):
                if part.startswith(("no cost:", "no latency:")):
                    reasons.setdefault(part, None)
    return list(reasons)


def cost_legend(notes: Iterable[Any]) -> str:
    """The board's legend of the cost and latency columns, given the `cost_note` column of the rows shown: how the
    figures are made, and why some evaluated rows shown have none ("Blank here: no cost: no listed price…")."""
    reasons = blank_cost_reasons(notes)
    return COST_LEGEND + (" Blank here: " + "; ".join(reasons) + "." if reasons else "")
