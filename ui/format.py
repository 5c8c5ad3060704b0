"""Turning library values into what the page shows: percentages, escaped model text, errors."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from evaluators.board import APART_COLUMN, INFO_COLUMNS, BoardLayout
from evaluators.core.errors import ToolboardError
from evaluators.core.registry import all_benchmarks
from evaluators.core.text import show

# Shown as they are: the sample count, and every metric a benchmark declares as a count or a label.
PLAIN_COLUMNS = ("n",)


def not_fractions() -> frozenset[str]:
    declared = (metric for b in all_benchmarks() for metric in (*b.metrics, *b.summary_metrics))
    return frozenset(PLAIN_COLUMNS).union(metric.name for metric in declared if metric.kind != "fraction")


def as_percent(frame: pd.DataFrame, layout: BoardLayout) -> pd.DataFrame:
    """Metric fractions as percentages with one decimal, as the published tables print them."""
    shown = frame.copy()
    plain = not_fractions()
    for column in shown.columns:
        if column in (*layout.columns, *layout.detail_columns) and column not in plain:
            shown[column] = pd.to_numeric(shown[column], errors="coerce").mul(100).round(1)
    return shown


def without_empty_info_columns(frame: pd.DataFrame) -> pd.DataFrame:
    """Drop run id / fingerprint / details columns that are blank in every shown row (published-only views)."""
    empty = [c for c in (APART_COLUMN, *INFO_COLUMNS) if c in frame.columns
             and frame[c].map(lambda value: value is None or pd.isna(value) or str(value).strip() == "").all()]
    return frame.drop(columns=empty)


def spoken_list(items: list[str]) -> str:
    """["a", "b", "c"] -> "a, b and c"."""
    if len(items) < 2:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


MARKDOWN_SPECIALS = "\\`*_{}[]()#+-.!|<>~&"


def markdown_text(text: str) -> str:
    """Text for a Markdown component, shown as written: no formatting, links, images or HTML (model
    names and messages may come from visitors and files)."""
    return "".join("\\" + char if char in MARKDOWN_SPECIALS else char for char in str(text))


MAX_BLOCK_CHARS = 20_000


def escaped_block(title: str, value: Any) -> str:
    """A titled <pre> block; everything from a model or a file is escaped."""
    if value is None or value == "" or value == []:
        return ""
    if isinstance(value, str):
        text = value
    else:
        try:
            text = json.dumps(value, ensure_ascii=False, indent=1, default=repr)
        except (ValueError, TypeError, RecursionError):  # tuple keys, an integer too long to print
            text = show(value, limit=MAX_BLOCK_CHARS)
    return f"<h4>{html.escape(title)}</h4><pre style='white-space:pre-wrap'>{html.escape(text)}</pre>"


def shown_as_is(text: str) -> str:
    return text


# An absolute path of two parts or more, not inside a URL (so its "/" is not right after a letter, digit,
# ":", "/" or ".").
ABSOLUTE_PATH = re.compile(r"(?<![\w:/.])(?:/\.?[\w@+-]+(?:\.[\w@+-]+)*){2,}/?")


class PathRedactor:
    """Server paths out of text shown to visitors of a public deployment: known folders become short
    names (`<data folder>/<benchmark>`), any other absolute path keeps only its last part (`…/toolboard.db`)."""

    def __init__(self, folders: Mapping[str | Path, str]):
        spellings: dict[str, str] = {}
        for folder, name in folders.items():
            for spelling in (str(folder), str(Path(folder).resolve())):
                if spelling not in ("", "/", "."):
                    spellings[spelling.rstrip("/")] = name
        # Longest first, so a folder inside another gets its own name.
        self.folders = sorted(spellings.items(), key=lambda item: len(item[0]), reverse=True)

    def __call__(self, text: str) -> str:
        return ABSOLUTE_PATH.sub(lambda match: self._short(match.group()), text)

    def _short(self, path: str) -> str:
        for folder, name in self.folders:
            if path == folder or path.startswith(folder + "/"):
                return name + path[len(folder):]
        return "…/" + path.rstrip("/").rsplit("/", 1)[-1]


def user_error(exc: Exception, redact: Callable[[str], str] = shown_as_is) -> str:
    """A message for the page: our own errors as they are, anything else with its type; `redact` takes
    server paths out on a public deployment."""
    text = str(exc) if isinstance(exc, ToolboardError) else f"{type(exc).__name__}: {exc}"
    return f"⚠️ {markdown_text(redact(text))}"


def table_json(frame: pd.DataFrame, **extra: Any) -> dict[str, Any]:
    """A table for API callers, in the Dataframe's own shape: {"headers", "data"} with None for blanks."""
    return {"headers": list(frame.columns), "data": frame.astype(object).where(frame.notna(), None).values.tolist(), **extra}


def picked_value(table: pd.DataFrame, row: Any, column: str) -> str:
    """The `column` value of the row a user clicked in a Dataframe (the select event's index)."""
    index = row[0] if isinstance(row, list | tuple) else row
    return str(table.iloc[index][column]) if isinstance(index, int) and 0 <= index < len(table) else ""
