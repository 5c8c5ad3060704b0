"""Every CSV file the app or the CLI writes goes through write_csv, so that no cell becomes a spreadsheet formula.

A text cell a spreadsheet would read as a formula (its first non-blank character =, +, - or @, or a leading tab
or carriage return: `=HYPERLINK(…)` in a model name or notes opens a link when the file is opened) is written
with a leading apostrophe, the usual neutraliser (OWASP "CSV injection"): spreadsheets show the text as it was
typed. Only text cells change: numbers, negative ones included, stay numbers, and blanks stay blank. JSON
downloads are written as they are (a JSON reader runs nothing).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

# What a spreadsheet takes as the start of a formula (or of a cell it trims to one).
FORMULA_STARTS = ("=", "+", "-", "@")
CONTROL_STARTS = ("\t", "\r", "\n")
NEUTRALISER = "'"


def neutralised(value: Any) -> Any:
    """`value` with a leading apostrophe when it is text a spreadsheet would read as a formula; else as it is."""
    if not isinstance(value, str) or not value:
        return value
    if value.startswith(CONTROL_STARTS) or value.lstrip(" \t\r\n").startswith(FORMULA_STARTS):
        return NEUTRALISER + value
    return value


def safe_for_spreadsheets(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of `frame` whose text cells (and headers) are neutralised; numeric columns are left untouched."""
    safe = frame.copy()
    for column in safe.columns:
        cells = safe[column]
        if pd.api.types.is_object_dtype(cells) or pd.api.types.is_string_dtype(cells):
            # cell by cell, keeping the column's type (Series.map would turn a column of whole numbers and blanks
            # into floats, and its CSV cells from 23 into 23.0)
            safe[column] = pd.Series([neutralised(cell) for cell in cells], index=cells.index, dtype=cells.dtype)
    safe.columns = [neutralised(str(column)) for column in safe.columns]
    return safe


def write_csv(frame: pd.DataFrame, path: str | Path) -> Path:
    """Write `frame` (without its index) as a UTF-8 CSV file whose cells no spreadsheet runs as formulas."""
    path = Path(path)
    safe_for_spreadsheets(frame).to_csv(path, index=False)
    return path
